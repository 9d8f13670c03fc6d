// `fmsim plan` as a JSON document and text tables (documents/plan.hpp).
#include "documents/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/strings.hpp"
#include "documents/json_values.hpp"
#include "documents/text_table.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::documents {
namespace {

using nlohmann::json;

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

}  // namespace

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

void print_plan(std::ostream& out, const planner::PlanRequest& request, const planner::Plan& plan, int threads,
                const std::string& tokens, bool scaling) {
  bool any = false;
  for (const auto& sp : plan.systems) any = any || !sp.top.empty();
  const auto& shown = request.ranked_gpu_counts.empty() ? request.gpu_counts : request.ranked_gpu_counts;
  out << fmt::format("Plan: {} on {} GPUs, {} tokens, sequence {}, global batch {}, ranked by {}\n", request.model.name,
                     fmt::join(shown, "/"), tokens, request.seq_len, request.global_batch,
                     planner::to_string(request.objective));
  out << fmt::format(
      "Searched {} layouts on {} systems in {:.2f} s ({} threads): {} did not divide the batch, "
      "{} exceeded memory, {} costed.\n\n",
      core::format_thousands(static_cast<double>(plan.stats.candidates)), plan.systems.size(), plan.stats.seconds,
      threads, core::format_thousands(static_cast<double>(plan.stats.pruned_batch)),
      core::format_thousands(static_cast<double>(plan.stats.pruned_memory)),
      core::format_thousands(static_cast<double>(plan.stats.evaluated)));
  if (!scaling) {
    for (const auto& sp : plan.systems) print_layouts(out, sp, request.objective);
  }
  if (scaling) print_scaling(out, plan, request.global_batch);
  if (plan.best_system && !scaling) {
    const auto& sp = plan.systems[*plan.best_system];
    const auto& b = sp.top.front();
    out << fmt::format("Best by {}: {} x {} with {} — {:.2f} s/step, {:.1f} days, {} to train {} tokens.\n",
                       planner::to_string(request.objective), b.units, sp.cluster.system.name, b.label(),
                       b.step.step_time.value(), b.train_seconds / 86400.0, core::format_usd(b.cost_usd), tokens);
    const auto line = cross_system_line(plan);
    if (!line.empty() && plan.systems.size() > 1) out << line << "\n";
  }
  if (!any) out << "No system has a layout that divides the model and fits in memory.\n";
}

}  // namespace fmsim::documents
