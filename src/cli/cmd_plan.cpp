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
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "cli/reproduce_command.hpp"
#include "cli/training_job_flags.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "config/training_csv.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "documents/text_table.hpp"
#include "documents/validation_summary.hpp"
#include "jobspec/plan.hpp"
#include "parallelism/stack.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/published_comparison.hpp"
#include "report/document.hpp"

namespace fmsim::cli {
using documents::kGiB;
using documents::TextTable;
using documents::validation_summary;
namespace {

using nlohmann::json;
using parallelism::Recompute;
using parallelism::Sharding;

// The plan (jobspec::PlanFlags, resolved by jobspec::make_plan_request) and how it is shown.
struct PlanOptions : jobspec::PlanFlags {
  bool json = false;
  std::string report;
  std::string command;  ///< the reproduce line the report's footer shows (reproduce_command)
  bool scaling = false;
  std::string against_csv;
  bool markdown = false;
  bool rl = false;  ///< documented only: with --rl, `plan` is registered as the RL planner (cli/app.cpp)
  bool no_progress = false;
};

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
  const std::string price =
      c.system.price_per_hour_usd > 0
          ? fmt::format("${:.2f}/h each, {}", c.system.price_per_hour_usd,
                        c.system.price_date.empty() ? c.system.price_kind_name() : c.system.price_date)
          : std::string("price unknown");
  return fmt::format("{}: {} x {} = {} x {}, {:.0f} GiB usable per GPU ({})", c.system.name, c.count, c.system.name,
                     c.gpus(), c.gpu.name,
                     (c.gpu.hbm_usable.value() > 0 ? c.gpu.hbm_usable : c.gpu.hbm_capacity).value() / kGiB, price);
}

void print_layouts(std::ostream& out, const planner::SystemPlan& sp, planner::Objective objective) {
  out << system_heading(sp) << "\n";
  if (sp.top.empty()) {
    out << "  no layout: " << sp.empty_reason << "\n\n";
    return;
  }
  const bool tpd = objective == planner::Objective::TokensPerDollar;
  std::vector<TextTable::Column> cols{{"#", true},         {"LAYOUT"},    {"GPUS", true},    {"STEP s", true},
                                      {"TOK/S/GPU", true}, {"MFU", true}, {"MEM GiB", true}, {"FREE GiB", true},
                                      {"DAYS", true},      {"COST", true}};
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
             core::format_thousands(p.best->step.tokens_per_s_per_gpu),
             p.speedup > 0 ? fmt::format("{:.2f}x", p.speedup) : "-",
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
        out << fmt::format(
            "  adding GPUs stops paying after {} GPUs: {} -> {} gives {:.2f}x ({:.0f}% efficiency, "
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

json search_stats_json(const planner::SearchStats& s) {
  return {{"shapes", s.shapes},
          {"candidates", s.candidates},
          {"pruned_batch", s.pruned_batch},
          {"pruned_memory", s.pruned_memory},
          {"evaluated", s.evaluated}};
}

json planned_layout_json(const planner::PlannedLayout& p) {
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
    for (const auto& p : sp.top) layouts.push_back(planned_layout_json(p));
    const auto& c = sp.cluster;
    systems.push_back({{"system", c.system.name},
                       {"gpu", c.gpu.name},
                       {"units", c.count},
                       {"gpus_per_unit", c.system.gpus()},
                       {"nvlink_domain_gpus", c.system.nvlink_domain_gpus},
                       {"fabric", c.fabric.name},
                       {"price_per_unit_hour_usd",
                        finite_or_null(c.system.price_per_hour_usd > 0 ? c.system.price_per_hour_usd : std::nan(""))},
                       {"price_date", c.system.price_date},
                       {"search", search_stats_json(sp.stats)},
                       {"layouts", layouts},
                       {"empty_reason", sp.top.empty() ? json(sp.empty_reason) : json(nullptr)}});
  }
  json best = nullptr;
  if (plan.best_system) {
    best = planned_layout_json(plan.systems[*plan.best_system].top.front());
    best["system"] = plan.systems[*plan.best_system].cluster.system.name;
  }
  json scaling = json::array();
  for (const auto& sc : plan.scaling) {
    json points = json::array();
    for (const auto& p : sc.points) {
      points.push_back({{"gpus", p.gpus},
                        {"layout", p.best ? planned_layout_json(*p.best) : json(nullptr)},
                        {"speedup", p.speedup > 0 ? json(p.speedup) : json(nullptr)},
                        {"marginal_efficiency", p.speedup > 0 ? json(p.marginal_efficiency) : json(nullptr)}});
    }
    scaling.push_back({{"system", sc.system},
                       {"knee_gpus", sc.knee ? json(sc.points[*sc.knee].gpus) : json(nullptr)},
                       {"points", points}});
  }
  json search = search_stats_json(plan.stats);
  search["seconds"] = plan.stats.seconds;
  search["threads"] = threads;
  return {{"command", "plan"},
          {"model", request.model.name},
          {"gpus", request.ranked_gpu_counts.empty() ? request.gpu_counts : request.ranked_gpu_counts},
          {"seq_len", request.seq_len},
          {"document_tokens", request.document_tokens > 0 ? json(request.document_tokens) : json()},
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

int resolved_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
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
  auto request = jobspec::make_plan_request(o, ctx.catalog(), calibration);
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
                             request.model.name, fmt::join(shown, "/"), o.tokens, request.seq_len, request.global_batch,
                             planner::to_string(request.objective));
    std::cout << fmt::format(
        "Searched {} layouts on {} systems in {:.2f} s ({} threads): {} did not divide the batch, "
        "{} exceeded memory, {} costed.\n\n",
        core::format_thousands(static_cast<double>(plan.stats.candidates)), plan.systems.size(), plan.stats.seconds,
        threads, core::format_thousands(static_cast<double>(plan.stats.pruned_batch)),
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
                               b.step.step_time.value(), b.train_seconds / 86400.0, core::format_usd(b.cost_usd),
                               o.tokens);
      const auto line = cross_system_line(plan);
      if (!line.empty() && plan.systems.size() > 1) std::cout << line << "\n";
    }
    if (!any) std::cout << "No system has a layout that divides the model and fits in memory.\n";
  }
  if (!o.report.empty()) {
    const auto doc = planner::build_plan_report(
        request, plan,
        {o.command, o.calibration.empty() ? "Calibration: data/calibration/training.yaml (shipped)."
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
    // The summary every validate command prints: groups, those the planner placed, and the error of
    // the published layout's prediction against its measured step time.
    std::vector<double> abs_errors;
    std::size_t placed = 0, as_fast = 0;
    for (const auto& l : lines) {
      placed += std::isfinite(l.planner_step_s) ? 1 : 0;
      as_fast += l.planner_at_least_as_fast() ? 1 : 0;
      if (std::isfinite(l.measured_step_s) && l.measured_step_s > 0)
        abs_errors.push_back(std::abs(l.published_step_s / l.measured_step_s - 1.0) * 100.0);
    }
    std::cout << json{{"command", command},
                      {"file", o.against_csv},
                      {"groups", arr},
                      {"summary",
                       validation_summary(lines.size(), placed, abs_errors, {{"planner_at_least_as_fast", as_fast}})}}
                     .dump(2)
              << "\n";
    return;
  }
  std::size_t at_least_as_fast = 0;
  for (const auto& l : lines) at_least_as_fast += l.planner_at_least_as_fast();
  if (o.markdown) {
    std::cout << "| model | system | GPUs | seq | GBS | prec | best published layout | predicted (s) | planner's best "
                 "| predicted (s) | planner/published | verdict |\n";
    std::cout << "|---|---|--:|--:|--:|---|---|--:|---|--:|--:|---|\n";
    for (const auto& l : lines) {
      std::cout << fmt::format(
          "| {} | {} | {} | {} | {} | {} | {}{} | {:.3f} | {} | {} | {} | {} |\n", l.model, l.system, l.gpus, l.seq_len,
          l.global_batch, l.precision, l.published_layout, l.published_fits ? "" : " (OOM in model)",
          l.published_step_s, l.planner_layout,
          std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
          std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s) : "-",
          l.verdict);
    }
  } else {
    TextTable t({{"MODEL"},
                 {"SYSTEM"},
                 {"GPUS", true},
                 {"PUBLISHED (BEST)"},
                 {"PRED s", true},
                 {"PLANNER"},
                 {"PRED s", true},
                 {"RATIO", true},
                 {"VERDICT"}});
    for (const auto& l : lines) {
      t.add({l.model, l.system, std::to_string(l.gpus), l.published_layout + (l.published_fits ? "" : " (OOM)"),
             fmt::format("{:.3f}", l.published_step_s), l.planner_layout,
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s) : "-",
             l.verdict});
    }
    t.print(std::cout);
  }
  std::cout << fmt::format(
      "\n{} of {} groups: the planner's best is at least as fast as the best published layout "
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
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
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
  cmd->add_option("--document-tokens", opts->document_tokens,
                  "Mean tokens of the documents packed into each sequence (SFT sequence packing): attention\n"
                  "stays inside a document. 0: one document per sequence")
      ->check(whole_number(0, 1LL << 27))
      ->capture_default_str();
  cmd->add_flag("--grad-reduce-in-bf16", opts->grad_reduce_in_bf16,
                "Reduce the data-parallel gradients in 16 bits instead of fp32 (Megatron-LM --grad-reduce-in-bf16)");
  add_recipe_switch_flags(*cmd, opts->recipe);
  cmd->add_option("--gbs", opts->gbs, "Global batch (sequences per optimizer step)")->capture_default_str();
  cmd->add_option("--tokens", opts->tokens, "Training budget in tokens (15T, 300B, 1.5e12)")->capture_default_str();
  cmd->add_option("--systems", opts->systems, "Comma-separated systems to compare")->capture_default_str();
  cmd->add_option("--objective", opts->objective, "Rank by " + planner::kObjectiveWords.allowed())
      ->capture_default_str();
  cmd->add_option("--top", opts->top, "Layouts shown per system")->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print the plan as JSON (SI units)");
  cmd->add_option("--report", opts->report, "Write a self-contained HTML report to FILE")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_flag("--scaling", opts->scaling,
                "Sweep GPU counts (--gpus-range, default gpus/4..4*gpus) and show where "
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
  cmd->add_option("--precision", opts->precision,
                  "Pin precision: " + core::kTrainingPrecisionWords.allowed() + " (default: bf16,fp8)")
      ->type_name("P[,P...]");
  cmd->add_option("--fp8-recipe", opts->fp8_recipe,
                  "Scaling of the FP8 candidates: tensorwise, rowwise, block (see fmsim train --help)")
      ->capture_default_str();
  cmd->add_option("--recompute", opts->recompute, "Pin recompute: " + parallelism::kRecomputeWords.allowed())
      ->type_name("R[,R...]");
  cmd->add_option("--sharding", opts->sharding, "Pin sharding: " + parallelism::kShardingWords.allowed())
      ->type_name("S[,S...]");
  cmd->add_option("--stack", opts->stack, "Software stack calibration (" + parallelism::kStackWords.allowed() + ")")
      ->capture_default_str();
  cmd->add_option("--moe-dispatcher", opts->moe_dispatcher,
                  "MoE token dispatch across NVLink domains: alltoall or deduplicated (default: the stack's)");
  cmd->add_option("--task", opts->task, "Task: " + training::kTaskWords.allowed())->capture_default_str();
  cmd->add_option("--lora-rank", opts->lora_rank, "With --task lora: adapter rank")
      ->check(whole_number(1, 65536))
      ->capture_default_str();
  cmd->add_option("--lora-targets", opts->lora_targets,
                  "With --task lora: modules with adapters (see fmsim train --help)")
      ->capture_default_str();
  cmd->add_option("--lora-base", opts->lora_base,
                  "With --task lora: frozen weights' storage: bf16, fp8, or nf4 (QLoRA); the memory check of\n"
                  "every layout uses it")
      ->capture_default_str();
  cmd->add_option("--calibration", opts->calibration, "Training calibration YAML (default: shipped)")
      ->type_name("FILE");
  cmd->add_option("--threads", opts->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-progress", opts->no_progress, "Never draw the progress bar");
  cmd->add_option("--against-csv", opts->against_csv,
                  "For each (model, system, GPUs) in a training CSV, compare the best published layout with the "
                  "planner's best, both predicted")
      ->type_name("FILE");
  cmd->add_flag("--markdown", opts->markdown, "With --against-csv: print a Markdown table");
  // With --rl in its words, `plan` is registered as the RL planner instead (add_plan_rl_command).
  cmd->add_flag("--rl", opts->rl,
                "Plan an RL post-training job instead (same as fmsim rl --plan): placement, generator/trainer "
                "split, generation TP and training layout for the shortest step; takes fmsim rl's options "
                "(fmsim plan --rl --help lists them)");
  cmd->footer(
      "Examples:\n"
      "  fmsim plan                                   (Llama 3.1 70B, 512 GPUs, 15T tokens, "
      "P5/P5en/P6-B200/P6e-GB200)\n"
      "  fmsim plan --objective cost --top 5 --report plan.html\n"
      "  fmsim plan --model mixtral-8x22b --gpus 256 --tp 4 --max-pp 8\n"
      "  fmsim plan --scaling --gpus-range 128:2048 --systems p5.48xlarge,u-p6e-gb200x72\n"
      "  fmsim plan --against-csv validation/training.csv\n"
      "  fmsim plan --rl --model qwen3-8b --cluster p5.48xlarge:4 --sync off-policy   (RL: fmsim rl --plan)");
  cmd->callback([&ctx, opts, cmd] {
    // Every flag given, outputs and speed-only flags left out: the same plan again.
    opts->command = reproduce_command(*cmd, {"--json", "--report", "--threads", "--no-progress", "--markdown"});
    if (!opts->against_csv.empty()) {
      run_against_csv(ctx, *opts, "plan --against-csv");
    } else {
      run_plan(ctx, *opts);
    }
  });
}

}  // namespace fmsim::cli
