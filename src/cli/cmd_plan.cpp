// fmsim plan: the best layout and instance family for a training job (tables, JSON, HTML report),
// a scaling sweep over GPU counts, and a check of the planner against published layouts.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "cli/training_job_flags.hpp"
#include "cli/text_table.hpp"
#include "core/strings.hpp"
#include "cli/output.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "config/training_csv.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/published_comparison.hpp"
#include "report/document.hpp"
#include "training/comm_adapter.hpp"

namespace fmsim::cli {
namespace {

using nlohmann::json;
using parallelism::Recompute;
using parallelism::Sharding;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kDefaultSystems = "p5.48xlarge,p5en.48xlarge,p6-b200.48xlarge,u-p6e-gb200x72";

struct PlanOptions {
  std::string model = "llama3.1-70b";
  int gpus = 512;
  std::int64_t seq = 8192;
  std::int64_t gbs = 1024;
  std::string tokens = "15T";
  std::string systems = kDefaultSystems;
  std::string objective = "time";
  int top = 3;
  bool json = false;
  std::string report;
  bool scaling = false;
  std::string gpus_range;
  std::string tp, pp, vp, cp, ep, mbs, precision, recompute, sharding;
  std::string fp8_recipe = "tensorwise";
  int max_pp = 32;
  int max_tp = 0;
  int threads = 0;
  std::string stack = "megatron";
  std::string moe_dispatcher;
  std::string task = "pretrain";
  std::string calibration;
  std::string against_csv;
  bool markdown = false;
  bool no_progress = false;
};

// ---------------------------------------------------------------------------------------------
// Flag parsing

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      const auto b = cur.find_first_not_of(" \t");
      const auto e = cur.find_last_not_of(" \t");
      if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

int parse_positive(const std::string& flag, const std::string& text) {
  int v = 0;
  std::size_t used = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 1) {
    throw core::InputError::flag(flag, fmt::format("'{}' is not a whole number of at least 1", text));
  }
  return v;
}

std::vector<int> parse_int_list(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (const auto& item : split_list(text)) out.push_back(parse_positive(flag, item));
  if (out.empty()) throw core::InputError::flag(flag, "expected one or more whole numbers, e.g. 8 or 4,8");
  return out;
}

/// "A:B" -> A, 2A, 4A, ... up to B, and B itself.
std::vector<int> parse_gpus_range(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw core::InputError::flag("--gpus-range", fmt::format("'{}': expected MIN:MAX, e.g. 256:1024", text));
  }
  const int lo = parse_positive("--gpus-range", text.substr(0, colon));
  const int hi = parse_positive("--gpus-range", text.substr(colon + 1));
  if (hi < lo) throw core::InputError::flag("--gpus-range", fmt::format("'{}': MAX is below MIN", text));
  std::vector<int> out;
  for (long g = lo; g <= hi; g *= 2) out.push_back(static_cast<int>(g));
  if (out.back() != hi) out.push_back(hi);
  return out;
}

/// Pinned values that can never divide the model give a clear error instead of an empty plan.
void check_pins(const planner::SearchSpace& space, const workload::ModelSpec& m, std::int64_t seq, std::int64_t gbs) {
  for (int tp : space.tp) {
    if (m.num_heads % tp != 0 || (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0)) {
      throw core::InputError::flag("--tp", fmt::format("{} does not divide {}'s {} attention heads ({} KV heads)", tp,
                                                       m.name, m.num_heads, m.num_kv_heads));
    }
  }
  for (int pp : space.pp) {
    if (pp > m.num_layers) {
      throw core::InputError::flag("--pp", fmt::format("{} is more than {}'s {} layers", pp, m.name, m.num_layers));
    }
    if (pp > space.max_pp) throw core::InputError::flag("--pp", fmt::format("{} is above --max-pp {}", pp, space.max_pp));
  }
  for (int vp : space.vp) {
    if (vp > m.num_layers) {
      throw core::InputError::flag("--vp", fmt::format("{} is more than {}'s {} layers", vp, m.name, m.num_layers));
    }
  }
  for (int cp : space.cp) {
    if (seq % cp != 0) throw core::InputError::flag("--cp", fmt::format("{} does not divide sequence length {}", cp, seq));
  }
  for (int ep : space.ep) {
    if (!m.is_moe() && ep > 1) {
      throw core::InputError::flag("--ep", fmt::format("{} is a dense model; expert parallelism needs a mixture of experts",
                                                       m.name));
    }
    if (m.is_moe() && m.moe.num_experts % ep != 0) {
      throw core::InputError::flag("--ep", fmt::format("{} does not divide {}'s {} experts", ep, m.name, m.moe.num_experts));
    }
  }
  for (int mbs : space.micro_batch) {
    if (gbs % mbs != 0) throw core::InputError::flag("--mbs", fmt::format("{} does not divide the global batch {}", mbs, gbs));
  }
}

// ---------------------------------------------------------------------------------------------
// Progress bar: stderr only, only on a terminal, only once a search has run for a second.

class ProgressBar {
 public:
  explicit ProgressBar(bool allowed) : enabled_(allowed && isatty(STDERR_FILENO) == 1) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { finish(); }

  void update(std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    if (!shown_ && std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    shown_ = true;
    constexpr int kWidth = 30;
    const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const int filled = static_cast<int>(f * kWidth);
    std::cerr << fmt::format("\r[{}{}] {:3.0f}%  {} of {} layouts", std::string(static_cast<std::size_t>(filled), '#'),
                             std::string(static_cast<std::size_t>(kWidth - filled), '.'), 100.0 * f, done, total)
              << std::flush;
  }
  void finish() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------------------------------------
// Text output



std::string system_heading(const planner::SystemPlan& sp) {
  const auto& c = sp.cluster;
  const std::string price = c.system.price_per_hour_usd > 0
                                ? fmt::format("${:.2f}/h each, {}", c.system.price_per_hour_usd,
                                              c.system.price_date.empty() ? c.system.price_kind : c.system.price_date)
                                : std::string("price unknown");
  return fmt::format("{}: {} x {} = {} x {}, {:.0f} GiB usable per GPU ({})", c.system.name, c.count, c.system.name,
                     c.gpus(), c.gpu.name, (c.gpu.hbm_usable.value() > 0 ? c.gpu.hbm_usable : c.gpu.hbm_capacity).value() / kGiB,
                     price);
}

void print_layouts(std::ostream& out, const planner::SystemPlan& sp, planner::Objective objective) {
  out << system_heading(sp) << "\n";
  if (sp.top.empty()) {
    out << "  no layout: " << sp.empty_reason << "\n\n";
    return;
  }
  const bool tpd = objective == planner::Objective::TokensPerDollar;
  std::vector<TextTable::Column> cols{{"#", true},       {"LAYOUT"},          {"GPUS", true},
                                      {"STEP s", true},  {"TOK/S/GPU", true}, {"MFU", true},
                                      {"MEM GiB", true}, {"FREE GiB", true},  {"DAYS", true},
                                      {"COST", true}};
  if (tpd) cols.push_back({"TOKENS/$", true});
  TextTable t(cols);
  for (const auto& p : sp.top) {
    std::vector<std::string> row{std::to_string(p.rank),
                                 p.label(),
                                 std::to_string(p.gpus),
                                 fmt::format("{:.2f}", p.step.step_time.value()),
                                 core::format_thousands(p.step.tokens_per_s_per_gpu),
                                 fmt::format("{:.1f}%", 100.0 * p.step.mfu),
                                 fmt::format("{:.1f}", p.step.memory.total().value() / kGiB),
                                 fmt::format("{:.1f}", p.headroom_bytes / kGiB),
                                 fmt::format("{:.1f}", p.train_seconds / 86400.0),
                                 core::format_usd(p.cost_usd)};
    if (tpd) row.push_back(core::format_thousands(p.tokens_per_dollar));
    t.add(std::move(row), "bottleneck: " + p.bottleneck.sentence);
  }
  t.print(out, "  ");
  out << "\n";
}

/// For the component that weighs most in any system's best layout: its share on every system.
std::string cross_system_line(const planner::Plan& plan) {
  std::optional<planner::Component> component;
  double largest = -1;
  for (const auto& sp : plan.systems) {
    if (sp.top.empty()) continue;
    const auto& b = sp.top.front().bottleneck;
    if (b.share > largest) {
      largest = b.share;
      component = b.component;
    }
  }
  if (!component) return "";
  std::vector<std::string> parts;
  for (const auto& sp : plan.systems) {
    if (sp.top.empty()) continue;
    const auto& p = sp.top.front();
    const double share = planner::component_seconds(p.step.breakdown, *component) / p.step.step_time.value();
    parts.push_back(fmt::format("{} {:.0f}% ({})", sp.cluster.system.name, 100.0 * share,
                                planner::describe_component(*component, p.layout, p.step.micro_batches, sp.cluster)));
  }
  return fmt::format("{} in each system's best layout: {}", planner::to_string(*component), fmt::join(parts, "; "));
}

void print_scaling(std::ostream& out, const planner::Plan& plan, std::int64_t gbs) {
  out << fmt::format("Scaling: the best layout at each GPU count (global batch fixed at {} sequences)\n\n", gbs);
  for (const auto& sc : plan.scaling) {
    out << sc.system << "\n";
    TextTable t({{"GPUS", true},
                 {"LAYOUT"},
                 {"STEP s", true},
                 {"TOK/S/GPU", true},
                 {"SPEEDUP", true},
                 {"EFFICIENCY", true},
                 {"DAYS", true},
                 {"COST", true}});
    for (const auto& p : sc.points) {
      if (!p.best) {
        t.add({std::to_string(p.gpus), "nothing divides and fits", "-", "-", "-", "-", "-", "-"});
        continue;
      }
      t.add({std::to_string(p.gpus), p.best->label(), fmt::format("{:.2f}", p.best->step.step_time.value()),
             core::format_thousands(p.best->step.tokens_per_s_per_gpu), p.speedup > 0 ? fmt::format("{:.2f}x", p.speedup) : "-",
             p.speedup > 0 ? fmt::format("{:.0f}%", 100.0 * p.marginal_efficiency) : "-",
             fmt::format("{:.1f}", p.best->train_seconds / 86400.0), core::format_usd(p.best->cost_usd)});
    }
    t.print(out, "  ");
    if (sc.knee) {
      const auto& knee = sc.points[*sc.knee];
      const planner::ScalingPoint* next = nullptr;
      for (std::size_t i = *sc.knee + 1; i < sc.points.size(); ++i) {
        if (sc.points[i].best) {
          next = &sc.points[i];
          break;
        }
      }
      if (next) {
        out << fmt::format("  adding GPUs stops paying after {} GPUs: {} -> {} gives {:.2f}x ({:.0f}% efficiency, "
                           "below {:.0f}%)\n",
                           knee.gpus, knee.gpus, next->gpus, next->speedup, 100.0 * next->marginal_efficiency,
                           100.0 * planner::kPayingEfficiency);
      } else {
        out << fmt::format("  adding GPUs pays up to {} GPUs, the largest count searched\n", knee.gpus);
      }
    }
    out << "\n";
  }
}

// ---------------------------------------------------------------------------------------------
// JSON

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json stats_json(const planner::SearchStats& s) {
  return {{"shapes", s.shapes},           {"candidates", s.candidates}, {"pruned_batch", s.pruned_batch},
          {"pruned_memory", s.pruned_memory}, {"evaluated", s.evaluated}};
}

json layout_json(const planner::PlannedLayout& p) {
  const auto& l = p.layout;
  json breakdown = json::object();
  for (auto c : planner::all_components()) {
    breakdown[std::string(planner::to_string(c))] = planner::component_seconds(p.step.breakdown, c);
  }
  return {{"rank", p.rank},
          {"label", p.label()},
          {"gpus", p.gpus},
          {"units", p.units},
          {"tp", l.tp},
          {"pp", l.pp},
          {"vp", l.vp},
          {"cp", l.cp},
          {"ep", l.ep},
          {"etp", l.etp},
          {"dp", l.dp},
          {"sharding", std::string(parallelism::to_string(l.sharding))},
          {"micro_batch", l.micro_batch},
          {"micro_batches", p.step.micro_batches},
          {"recompute", std::string(parallelism::to_string(l.recompute))},
          {"precision", std::string(core::to_string(l.precision))},
          {"step_time_s", p.step.step_time.value()},
          {"tokens_per_s_per_gpu", p.step.tokens_per_s_per_gpu},
          {"model_tflops_per_gpu", p.step.model_tflops_per_gpu},
          {"mfu", p.step.mfu},
          {"memory_bytes", p.step.memory.total().value()},
          {"memory_capacity_bytes", p.step.memory_capacity.value()},
          {"headroom_bytes", p.headroom_bytes},
          {"steps", p.steps},
          {"train_seconds", finite_or_null(p.train_seconds)},
          {"train_days", finite_or_null(p.train_seconds / 86400.0)},
          {"cost_usd", finite_or_null(p.cost_usd)},
          {"tokens_per_dollar", finite_or_null(p.tokens_per_dollar)},
          {"breakdown_s", breakdown},
          {"bottleneck",
           {{"component", std::string(planner::to_string(p.bottleneck.component))},
            {"share", p.bottleneck.share},
            {"crosses_network", p.bottleneck.crosses_network},
            {"compute_bound", p.bottleneck.compute_bound},
            {"sentence", p.bottleneck.sentence}}}};
}

json plan_json(const planner::PlanRequest& request, const planner::Plan& plan, int threads) {
  json systems = json::array();
  for (const auto& sp : plan.systems) {
    json layouts = json::array();
    for (const auto& p : sp.top) layouts.push_back(layout_json(p));
    const auto& c = sp.cluster;
    systems.push_back({{"system", c.system.name},
                       {"gpu", c.gpu.name},
                       {"units", c.count},
                       {"gpus_per_unit", c.system.gpus()},
                       {"nvlink_domain_gpus", c.system.nvlink_domain_gpus},
                       {"fabric", c.fabric.name},
                       {"price_per_unit_hour_usd", finite_or_null(c.system.price_per_hour_usd > 0
                                                                      ? c.system.price_per_hour_usd
                                                                      : std::nan(""))},
                       {"price_date", c.system.price_date},
                       {"search", stats_json(sp.stats)},
                       {"layouts", layouts},
                       {"empty_reason", sp.top.empty() ? json(sp.empty_reason) : json(nullptr)}});
  }
  json best = nullptr;
  if (plan.best_system) {
    best = layout_json(plan.systems[*plan.best_system].top.front());
    best["system"] = plan.systems[*plan.best_system].cluster.system.name;
  }
  json scaling = json::array();
  for (const auto& sc : plan.scaling) {
    json points = json::array();
    for (const auto& p : sc.points) {
      points.push_back({{"gpus", p.gpus},
                        {"layout", p.best ? layout_json(*p.best) : json(nullptr)},
                        {"speedup", p.speedup > 0 ? json(p.speedup) : json(nullptr)},
                        {"marginal_efficiency", p.speedup > 0 ? json(p.marginal_efficiency) : json(nullptr)}});
    }
    scaling.push_back({{"system", sc.system},
                       {"knee_gpus", sc.knee ? json(sc.points[*sc.knee].gpus) : json(nullptr)},
                       {"points", points}});
  }
  json search = stats_json(plan.stats);
  search["seconds"] = plan.stats.seconds;
  search["threads"] = threads;
  return {{"command", "plan"},
          {"model", request.model.name},
          {"gpus", request.ranked_gpu_counts.empty() ? request.gpu_counts : request.ranked_gpu_counts},
          {"seq_len", request.seq_len},
          {"global_batch", request.global_batch},
          {"tokens", request.tokens},
          {"objective", std::string(planner::to_string(request.objective))},
          {"stack", request.stack},
          {"moe_dispatcher", request.moe_dispatcher ? json(to_string(*request.moe_dispatcher)) : json(nullptr)},
          {"search", search},
          {"systems", systems},
          {"best", best},
          {"scaling", scaling}};
}

// ---------------------------------------------------------------------------------------------
// The command

std::string command_line(const PlanOptions& o) {
  std::string s = fmt::format("fmsim plan --model {} --gpus {} --seq {} --gbs {} --tokens {} --systems {} --objective {}",
                              o.model, o.gpus, o.seq, o.gbs, o.tokens, o.systems, o.objective);
  const std::vector<std::pair<const char*, const std::string*>> pins{
      {"--tp", &o.tp},   {"--pp", &o.pp},   {"--vp", &o.vp},           {"--cp", &o.cp},
      {"--ep", &o.ep},   {"--mbs", &o.mbs}, {"--precision", &o.precision}, {"--recompute", &o.recompute},
      {"--sharding", &o.sharding}, {"--gpus-range", &o.gpus_range}};
  for (const auto& [flag, value] : pins) {
    if (!value->empty()) s += fmt::format(" {} {}", flag, *value);
  }
  if (o.scaling) s += " --scaling";
  if (!o.report.empty()) s += fmt::format(" --report {}", o.report);
  return s;
}

int resolved_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

planner::PlanRequest build_request(Context& ctx, const PlanOptions& o, const training::Calibration& calibration) {
  if (o.gpus < 1) throw core::InputError::flag("--gpus", fmt::format("{}: expected at least 1 GPU", o.gpus));
  if (o.seq < 1) throw core::InputError::flag("--seq", fmt::format("{}: expected at least 1 token", o.seq));
  if (o.gbs < 1) throw core::InputError::flag("--gbs", fmt::format("{}: expected at least 1 sequence", o.gbs));
  if (o.top < 1) throw core::InputError::flag("--top", fmt::format("{}: expected at least 1", o.top));
  if (o.max_pp < 1) throw core::InputError::flag("--max-pp", fmt::format("{}: expected at least 1", o.max_pp));
  if (o.threads < 0) throw core::InputError::flag("--threads", "expected 0 (all cores) or more");

  planner::PlanRequest r;
  r.model = config::load_model(o.model, "--model");
  const auto tokens = core::parse_count(o.tokens);
  if (!tokens || *tokens.value <= 0) {
    throw core::InputError::flag("--tokens", fmt::format("'{}': expected a token count such as 15T, 300B or 1.5e12{}",
                                                         o.tokens, tokens.error.empty() ? "" : " (" + tokens.error + ")"));
  }
  r.tokens = *tokens.value;
  r.seq_len = o.seq;
  r.global_batch = o.gbs;
  r.objective = config::word_flag(planner::kObjectiveWords, o.objective, "--objective");
  r.task = config::word_flag(training::kTaskWords, o.task, "--task");
  if (calibration.stacks.count(o.stack) == 0) {
    std::vector<std::string> names;
    for (const auto& [name, _] : calibration.stacks) names.push_back(name);
    throw core::InputError::flag("--stack", core::unknown_name_message("software stack", o.stack, names));
  }
  r.stack = o.stack;
  r.moe_dispatcher = jobspec::moe_dispatcher_flag(o.moe_dispatcher);
  // Megatron-Core overlaps TP communication with GEMMs (userbuffers); the FSDP stacks do not use TP overlap.
  r.framework.overlap_tp_comm = o.stack == "megatron";
  r.framework.fp8_recipe = jobspec::fp8_recipe_flag(o.fp8_recipe);
  r.top = o.top;
  r.threads = o.threads;

  r.space.tp = parse_int_list("--tp", o.tp);
  r.space.pp = parse_int_list("--pp", o.pp);
  r.space.vp = parse_int_list("--vp", o.vp);
  r.space.cp = parse_int_list("--cp", o.cp);
  r.space.ep = parse_int_list("--ep", o.ep);
  r.space.micro_batch = parse_int_list("--mbs", o.mbs);
  r.space.max_pp = o.max_pp;
  r.space.max_tp = o.max_tp;
  for (int tp : r.space.tp) r.space.max_tp = std::max(r.space.max_tp, tp);  // a pinned tp is always tried
  r.space.precision = config::word_list_flag(core::kTrainingPrecisionWords, o.precision, "--precision");
  r.space.recompute = config::word_list_flag(parallelism::kRecomputeWords, o.recompute, "--recompute");
  r.space.sharding = config::word_list_flag(parallelism::kShardingWords, o.sharding, "--sharding");
  check_pins(r.space, r.model, r.seq_len, r.global_batch);

  if (!o.gpus_range.empty()) {
    r.gpu_counts = parse_gpus_range(o.gpus_range);
  } else {
    r.gpu_counts = {o.gpus};
  }
  const int max_gpus = *std::max_element(r.gpu_counts.begin(), r.gpu_counts.end());
  std::set<std::string> seen;
  const auto names = split_list(o.systems);
  if (names.empty()) throw core::InputError::flag("--systems", "expected one or more systems, e.g. p5.48xlarge");
  for (const auto& name : names) {
    auto cluster = config::cluster_for_gpus(ctx.catalog(), name, max_gpus, "--systems");
    if (!seen.insert(cluster.system.name).second) {
      throw core::InputError::flag("--systems", fmt::format("{} is listed twice", cluster.system.name));
    }
    if (calibration.gpus.count(cluster.gpu.architecture) == 0) {
      throw core::InputError::flag("--systems", fmt::format("{}: no training calibration for its GPU ({})",
                                                            cluster.system.name, cluster.gpu.name));
    }
    r.systems.push_back(std::move(cluster));
  }
  return r;
}

/// GPU counts swept for the report's scaling chart: a quarter to four times the request, doubling.
std::vector<int> report_sweep(int gpus) {
  std::vector<int> out;
  for (int g = std::max(8, gpus / 4); g <= gpus * 4; g *= 2) out.push_back(g);
  if (std::find(out.begin(), out.end(), gpus) == out.end()) {
    out.push_back(gpus);
    std::sort(out.begin(), out.end());
  }
  return out;
}

void run_plan(Context& ctx, const PlanOptions& o) {
  const auto calibration = config::load_training_calibration(o.calibration);
  auto request = build_request(ctx, o, calibration);
  const bool want_scaling = o.scaling || !o.report.empty();
  if (!o.scaling && !o.report.empty()) {
    // One search serves both: rank the requested count(s), sweep the others for the scaling chart.
    request.ranked_gpu_counts = request.gpu_counts;
    std::set<int> counts(request.gpu_counts.begin(), request.gpu_counts.end());
    for (int g : report_sweep(o.gpus)) counts.insert(g);
    request.gpu_counts.assign(counts.begin(), counts.end());
  } else if (o.scaling && o.gpus_range.empty()) {
    request.gpu_counts = report_sweep(o.gpus);
    request.ranked_gpu_counts = {o.gpus};
  }

  ProgressBar bar(!o.no_progress);
  const auto progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
  const auto plan = want_scaling ? planner::plan_scaling(request, calibration, progress)
                                 : planner::plan(request, calibration, progress);
  bar.finish();

  bool any = false;
  for (const auto& sp : plan.systems) any = any || !sp.top.empty();
  const int threads = resolved_threads(o.threads);

  if (o.json) {
    std::cout << plan_json(request, plan, threads).dump(2) << "\n";
  } else {
    const auto& shown = request.ranked_gpu_counts.empty() ? request.gpu_counts : request.ranked_gpu_counts;
    std::cout << fmt::format("Plan: {} on {} GPUs, {} tokens, sequence {}, global batch {}, ranked by {}\n",
                             request.model.name, fmt::join(shown, "/"), o.tokens, request.seq_len,
                             request.global_batch, planner::to_string(request.objective));
    std::cout << fmt::format("Searched {} layouts on {} systems in {:.2f} s ({} threads): {} did not divide the batch, "
                             "{} exceeded memory, {} costed.\n\n",
                             core::format_thousands(static_cast<double>(plan.stats.candidates)), plan.systems.size(),
                             plan.stats.seconds, threads, core::format_thousands(static_cast<double>(plan.stats.pruned_batch)),
                             core::format_thousands(static_cast<double>(plan.stats.pruned_memory)),
                             core::format_thousands(static_cast<double>(plan.stats.evaluated)));
    if (!o.scaling) {
      for (const auto& sp : plan.systems) print_layouts(std::cout, sp, request.objective);
    }
    if (o.scaling) print_scaling(std::cout, plan, request.global_batch);
    if (plan.best_system && !o.scaling) {
      const auto& sp = plan.systems[*plan.best_system];
      const auto& b = sp.top.front();
      std::cout << fmt::format("Best by {}: {} x {} with {} — {:.2f} s/step, {:.1f} days, {} to train {} tokens.\n",
                               planner::to_string(request.objective), b.units, sp.cluster.system.name, b.label(),
                               b.step.step_time.value(), b.train_seconds / 86400.0, core::format_usd(b.cost_usd), o.tokens);
      const auto line = cross_system_line(plan);
      if (!line.empty() && plan.systems.size() > 1) std::cout << line << "\n";
    }
    if (!any) std::cout << "No system has a layout that divides the model and fits in memory.\n";
  }
  if (!o.report.empty()) {
    const auto doc = planner::build_plan_report(
        request, plan,
        {command_line(o), o.calibration.empty() ? "Calibration: data/calibration/training.yaml (shipped)."
                                                : "Calibration: " + o.calibration + "."});
    write_file_atomically(o.report, report::render_html(doc), "--report");
    (o.json ? std::cerr : std::cout) << "Report written to " << o.report << "\n";
  }
  if (!any) ctx.exit_code = 1;
}

// ---------------------------------------------------------------------------------------------
// --against-csv: the planner's best layout vs the best published layout, both predicted.

void run_against_csv(Context& ctx, const PlanOptions& o, const std::string& command) {
  const auto calibration = config::load_training_calibration(o.calibration);
  const auto rows = config::read_training_csv(o.against_csv, ctx.catalog());
  std::vector<planner::PublishedRun> runs;
  for (const auto& row : rows) {
    if (row.job) runs.push_back({row.model, row.system, row.num_gpus, *row.job, row.measured_step_time_s});
  }
  ProgressBar bar(!o.no_progress);
  const auto lines = planner::compare_with_published(
      runs, calibration,
      {.threads = o.threads, .max_pp = o.max_pp, .progress = [&](std::size_t done, std::size_t total) {
         bar.update(done, total);
       }});
  bar.finish();
  if (o.json) {
    json arr = json::array();
    for (const auto& l : lines) {
      arr.push_back({{"model", l.model},
                     {"system", l.system},
                     {"gpus", l.gpus},
                     {"seq_len", l.seq_len},
                     {"global_batch", l.global_batch},
                     {"precision", l.precision},
                     {"published_layout", l.published_layout},
                     {"published_predicted_step_s", l.published_step_s},
                     {"published_fits_memory", l.published_fits},
                     {"measured_step_s", finite_or_null(l.measured_step_s)},
                     {"planner_layout", l.planner_layout},
                     {"planner_predicted_step_s", finite_or_null(l.planner_step_s)},
                     {"ratio", finite_or_null(l.planner_step_s / l.published_step_s)},
                     {"verdict", l.verdict}});
    }
    std::cout << json{{"command", command}, {"file", o.against_csv}, {"groups", arr}}.dump(2) << "\n";
    return;
  }
  std::size_t at_least_as_fast = 0;
  for (const auto& l : lines) at_least_as_fast += l.planner_at_least_as_fast();
  if (o.markdown) {
    std::cout << "| model | system | GPUs | seq | GBS | prec | best published layout | predicted (s) | planner's best "
                 "| predicted (s) | planner/published | verdict |\n";
    std::cout << "|---|---|--:|--:|--:|---|---|--:|---|--:|--:|---|\n";
    for (const auto& l : lines) {
      std::cout << fmt::format("| {} | {} | {} | {} | {} | {} | {}{} | {:.3f} | {} | {} | {} | {} |\n", l.model,
                               l.system, l.gpus, l.seq_len, l.global_batch, l.precision, l.published_layout,
                               l.published_fits ? "" : " (OOM in model)", l.published_step_s, l.planner_layout,
                               std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
                               std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s)
                                                             : "-",
                               l.verdict);
    }
  } else {
    TextTable t({{"MODEL"}, {"SYSTEM"}, {"GPUS", true}, {"PUBLISHED (BEST)"}, {"PRED s", true}, {"PLANNER"},
                 {"PRED s", true}, {"RATIO", true}, {"VERDICT"}});
    for (const auto& l : lines) {
      t.add({l.model, l.system, std::to_string(l.gpus), l.published_layout + (l.published_fits ? "" : " (OOM)"),
             fmt::format("{:.3f}", l.published_step_s), l.planner_layout,
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s) : "-", l.verdict});
    }
    t.print(std::cout);
  }
  std::cout << fmt::format("\n{} of {} groups: the planner's best is at least as fast as the best published layout "
                           "(both predicted).\n",
                           at_least_as_fast, lines.size());
}

}  // namespace

void add_validate_planner(CLI::App& validate, Context& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd = validate.add_subcommand(
      "planner", "The planner's best layout against the best published layout of each published run, both predicted");
  cmd->add_option("--csv", opts->against_csv,
                  "Measurements CSV (training.csv schema; default: the built-in validation/training.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", opts->json, "Groups as JSON");
  cmd->add_flag("--markdown", opts->markdown, "A Markdown table (for docs/validation.md)");
  cmd->add_option("--max-pp", opts->max_pp, "Largest pipeline parallelism tried")->capture_default_str();
  cmd->add_option("--calibration", opts->calibration, "Training calibration YAML (default: shipped)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--no-progress", opts->no_progress, "No progress bar on stderr");
  cmd->footer(
      "Groups the rows by what the planner holds fixed (model, system, GPUs, sequence, global batch,\n"
      "precision, task, stack), predicts every published layout of a group, plans the group, and\n"
      "says whether the planner's best is at least as fast (both predicted by the same model), and\n"
      "why not when it is slower. Same as `fmsim plan --against-csv FILE`.\n\n"
      "Examples:\n"
      "  fmsim validate planner\n"
      "  fmsim validate planner --csv validation/training.csv --markdown");
  cmd->callback([opts, &ctx] { run_against_csv(ctx, *opts, "validate planner"); });
}

void add_plan_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand(
      "plan", "Search layouts and instance families for a training job: best layouts per system, time and cost");
  cmd->add_option("--model", opts->model, "Model preset or config.json")->capture_default_str();
  cmd->add_option("--gpus", opts->gpus, "GPUs the job uses")->capture_default_str();
  cmd->add_option("--seq", opts->seq, "Sequence length (tokens)")->capture_default_str();
  cmd->add_option("--gbs", opts->gbs, "Global batch (sequences per optimizer step)")->capture_default_str();
  cmd->add_option("--tokens", opts->tokens, "Training budget in tokens (15T, 300B, 1.5e12)")->capture_default_str();
  cmd->add_option("--systems", opts->systems, "Comma-separated systems to compare")->capture_default_str();
  cmd->add_option("--objective", opts->objective, "Rank by " + planner::kObjectiveWords.allowed())->capture_default_str();
  cmd->add_option("--top", opts->top, "Layouts shown per system")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print the plan as JSON (SI units)");
  cmd->add_option("--report", opts->report, "Write a self-contained HTML report to FILE")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_flag("--scaling", opts->scaling, "Sweep GPU counts (--gpus-range, default gpus/4..4*gpus) and show where "
                                            "adding GPUs stops paying");
  cmd->add_option("--gpus-range", opts->gpus_range,
                  "MIN:MAX GPU counts (doubling from MIN); without --scaling the planner also picks the count")
      ->type_name("MIN:MAX");
  cmd->add_option("--tp", opts->tp, "Pin tensor parallelism (e.g. 8 or 4,8)")->type_name("N[,N...]");
  cmd->add_option("--pp", opts->pp, "Pin pipeline parallelism")->type_name("N[,N...]");
  cmd->add_option("--vp", opts->vp, "Pin virtual pipeline stages per rank")->type_name("N[,N...]");
  cmd->add_option("--cp", opts->cp, "Pin context parallelism")->type_name("N[,N...]");
  cmd->add_option("--ep", opts->ep, "Pin expert parallelism (MoE)")->type_name("N[,N...]");
  cmd->add_option("--mbs", opts->mbs, "Pin the micro-batch size")->type_name("N[,N...]");
  cmd->add_option("--max-pp", opts->max_pp, "Largest pipeline parallelism tried")->capture_default_str();
  cmd->add_option("--max-tp", opts->max_tp, "Largest tensor parallelism tried (default: the NVLink domain, >= 8)");
  cmd->add_option("--precision", opts->precision, "Pin precision: " + core::kTrainingPrecisionWords.allowed() + " (default: bf16,fp8)")
      ->type_name("P[,P...]");
  cmd->add_option("--fp8-recipe", opts->fp8_recipe, "Scaling of the FP8 candidates: tensorwise, rowwise, block (see fmsim train --help)")
      ->capture_default_str();
  cmd->add_option("--recompute", opts->recompute, "Pin recompute: " + parallelism::kRecomputeWords.allowed())->type_name("R[,R...]");
  cmd->add_option("--sharding", opts->sharding, "Pin sharding: " + parallelism::kShardingWords.allowed())->type_name("S[,S...]");
  cmd->add_option("--stack", opts->stack, "Software stack calibration (megatron, torchtitan, llm-foundry)")
      ->capture_default_str();
  cmd->add_option("--moe-dispatcher", opts->moe_dispatcher,
                  "MoE token dispatch across NVLink domains: alltoall or deduplicated (default: the stack's)");
  cmd->add_option("--task", opts->task, "Task: " + training::kTaskWords.allowed())->capture_default_str();
  cmd->add_option("--calibration", opts->calibration, "Training calibration YAML (default: shipped)")
      ->type_name("FILE");
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("--no-progress", opts->no_progress, "Never draw the progress bar");
  cmd->add_option("--against-csv", opts->against_csv,
                  "For each (model, system, GPUs) in a training CSV, compare the best published layout with the "
                  "planner's best, both predicted")
      ->type_name("FILE");
  cmd->add_flag("--markdown", opts->markdown, "With --against-csv: print a Markdown table");
  cmd->footer(
      "Examples:\n"
      "  fmsim plan                                   (Llama 3.1 70B, 512 GPUs, 15T tokens, P5/P5en/P6-B200/P6e-GB200)\n"
      "  fmsim plan --objective cost --top 5 --report plan.html\n"
      "  fmsim plan --model mixtral-8x22b --gpus 256 --tp 4 --max-pp 8\n"
      "  fmsim plan --scaling --gpus-range 128:2048 --systems p5.48xlarge,u-p6e-gb200x72\n"
      "  fmsim plan --against-csv validation/training.csv");
  cmd->callback([&ctx, opts] {
    if (!opts->against_csv.empty()) {
      run_against_csv(ctx, *opts, "plan --against-csv");
    } else {
      run_plan(ctx, *opts);
    }
  });
}

}  // namespace fmsim::cli
