// Assembles the plan report from ranked layouts, scaling points and search statistics.
#include "planner/plan_report.hpp"

#include "core/strings.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace fmsim::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double days(double seconds) { return seconds / 86400.0; }

std::string system_label(const hardware::ClusterSpec& c) { return c.system.name; }

std::string units_text(const SystemPlan& sp) {
  const auto& c = sp.cluster;
  return fmt::format("{} x {}", c.count, c.system.name);
}

std::vector<std::string> layout_row(const PlannedLayout& p) {
  return {std::to_string(p.rank),
          p.label(),
          std::to_string(p.gpus),
          fmt::format("{:.2f}", p.step.step_time.value()),
          core::format_thousands(p.step.tokens_per_s_per_gpu),
          fmt::format("{:.1f}%", 100.0 * p.step.mfu),
          fmt::format("{:.1f}", p.step.memory.total().value() / kGiB),
          fmt::format("{:.1f}", p.headroom_bytes / kGiB),
          fmt::format("{:.1f}", days(p.train_seconds)),
          core::format_usd(p.cost_usd)};
}

const std::vector<std::string>& layout_header() {
  static const std::vector<std::string> kHeader{
      "#",   "layout",       "GPUs",           "step time (s)", "tokens/s/GPU",
      "MFU", "memory (GiB)", "headroom (GiB)", "days to train", "cost to train"};
  return kHeader;
}

report::Section summary_section(const PlanRequest& request, const Plan& plan) {
  report::Section s{"Summary", {}};
  if (plan.best_system) {
    const auto& sp = plan.systems[*plan.best_system];
    const auto& best = sp.top.front();
    s.add(report::KeyFigures{{{"best system", fmt::format("{} x {}", best.units, sp.cluster.system.name)},
                              {"layout", best.label()},
                              {"step time", fmt::format("{:.2f} s", best.step.step_time.value())},
                              {"time to train", fmt::format("{:.1f} days", days(best.train_seconds))},
                              {"cost to train", core::format_usd(best.cost_usd)},
                              {"MFU", fmt::format("{:.1f}%", 100.0 * best.step.mfu)}}});
    s.add(
        report::Paragraph{fmt::format("Ranked by {}. The best layout on {} is limited by: {}.",
                                      to_string(request.objective), sp.cluster.system.name, best.bottleneck.sentence)});
  } else {
    s.add(report::Paragraph{"No system has a layout that divides the model and fits in memory.",
                            report::ParagraphStyle::Warning});
  }
  report::Table t;
  t.caption = "Best layout per system";
  t.header = {"system", "rented", "layout", "step time (s)", "tokens/s/GPU", "MFU", "days to train", "cost to train"};
  t.align = {report::Align::Left, report::Align::Left, report::Align::Left};
  std::vector<std::string> bottlenecks;
  for (std::size_t i = 0; i < plan.systems.size(); ++i) {
    const auto& sp = plan.systems[i];
    if (sp.top.empty()) {
      t.rows.push_back({system_label(sp.cluster), units_text(sp), "-", "-", "-", "-", "-", "-"});
      bottlenecks.push_back(fmt::format("{}: {}", system_label(sp.cluster), sp.empty_reason));
      continue;
    }
    const auto& b = sp.top.front();
    t.rows.push_back({system_label(sp.cluster), units_text(sp), b.label(),
                      fmt::format("{:.2f}", b.step.step_time.value()),
                      core::format_thousands(b.step.tokens_per_s_per_gpu), fmt::format("{:.1f}%", 100.0 * b.step.mfu),
                      fmt::format("{:.1f}", days(b.train_seconds)), core::format_usd(b.cost_usd)});
    bottlenecks.push_back(fmt::format("{}: {}", system_label(sp.cluster), b.bottleneck.sentence));
    if (plan.best_system && *plan.best_system == i) t.highlight_row = t.rows.size() - 1;
  }
  t.note =
      "Rented = whole instances or UltraServers; the job uses the requested GPU count. Time and cost assume "
      "no failures, restarts or checkpoint stalls.";
  s.add(std::move(t));
  s.add(report::Paragraph{"Bottleneck of each system's best layout:"});
  for (auto& line : bottlenecks) s.add(report::Paragraph{std::move(line), report::ParagraphStyle::Note});
  return s;
}

report::Section systems_section(const Plan& plan) {
  report::Section s{"Systems side by side", {}};
  report::GroupedBarChart chart;
  chart.id = "systems";
  chart.title = "Time and cost to train the token budget";
  std::size_t ranks = 0;
  for (const auto& sp : plan.systems) {
    chart.groups.push_back(system_label(sp.cluster));
    ranks = std::max(ranks, sp.top.size());
  }
  for (std::size_t r = 0; r < std::max<std::size_t>(1, ranks); ++r)
    chart.series.push_back(fmt::format("layout #{}", r + 1));
  report::GroupedBarPanel time{"Time to train", "days", "d", {}};
  report::GroupedBarPanel cost{"Cost to train", "million USD", "M$", {}};
  for (const auto& sp : plan.systems) {
    std::vector<double> t(chart.series.size(), kNaN), c(chart.series.size(), kNaN);
    for (std::size_t r = 0; r < sp.top.size(); ++r) {
      t[r] = days(sp.top[r].train_seconds);
      c[r] = std::isfinite(sp.top[r].cost_usd) ? sp.top[r].cost_usd / 1e6 : kNaN;
    }
    time.values.push_back(std::move(t));
    cost.values.push_back(std::move(c));
  }
  chart.panels = {std::move(time), std::move(cost)};
  s.add(std::move(chart));
  return s;
}

report::Section breakdown_section(const Plan& plan) {
  report::Section s{"Step-time breakdown", {}};
  report::StackedBarChart chart;
  chart.id = "breakdown";
  chart.title = "Where each top layout's step time goes";
  chart.value_label = "time per step (s)";
  chart.unit = "s";
  // Optimizer and the fixed per-step overhead share one segment: eight segments fit the palette.
  for (Component c : all_components()) {
    if (c != Component::Other)
      chart.segments.emplace_back(c == Component::Optimizer ? "optimizer + other" : to_string(c));
  }
  for (std::size_t i = 0; i < plan.systems.size(); ++i) {
    const auto& sp = plan.systems[i];
    for (const auto& p : sp.top) {
      if (plan.best_system && *plan.best_system == i && p.rank == 1) chart.highlight_bar = chart.bars.size();
      chart.bars.push_back(fmt::format("{} #{}: {}", system_label(sp.cluster), p.rank, p.label()));
      std::vector<double> v;
      for (Component c : all_components()) {
        if (c == Component::Other) {
          v.back() += component_seconds(p.step.breakdown, c);
        } else {
          v.push_back(component_seconds(p.step.breakdown, c));
        }
      }
      chart.values.push_back(std::move(v));
    }
  }
  if (chart.bars.empty()) {
    s.add(report::Paragraph{"No layout to show.", report::ParagraphStyle::Note});
    return s;
  }
  s.add(
      report::Paragraph{"Compute includes recomputation. Communication is what stays exposed after overlap; "
                        "the bubble is pipeline fill and drain."});
  s.add(std::move(chart));
  return s;
}

report::Section memory_section(const Plan& plan) {
  report::Section s{"Memory per GPU", {}};
  for (const auto& sp : plan.systems) {
    if (sp.top.empty()) continue;
    report::BarChart chart;
    chart.id = "memory-" + sp.cluster.system.name;
    chart.title = fmt::format("{} ({})", sp.cluster.system.name, sp.cluster.gpu.display_name);
    chart.value_label = "memory per GPU (GiB)";
    chart.unit = "GiB";
    const double capacity = sp.top.front().step.memory_capacity.value() / kGiB;
    chart.reference = report::ReferenceLine{capacity, fmt::format("usable HBM {:.0f} GiB", capacity)};
    for (const auto& p : sp.top) {
      chart.labels.push_back(fmt::format("#{}: {}", p.rank, p.label()));
      chart.values.push_back(p.step.memory.total().value() / kGiB);
    }
    s.add(std::move(chart));
  }
  if (s.blocks.empty()) s.add(report::Paragraph{"No layout to show.", report::ParagraphStyle::Note});
  return s;
}

report::Section scaling_section(const Plan& plan) {
  report::Section s{"Scaling with GPU count", {}};
  if (plan.scaling.empty()) {
    s.add(report::Paragraph{"No scaling sweep in this plan (run with --scaling).", report::ParagraphStyle::Note});
    return s;
  }
  report::LineChart throughput;
  throughput.id = "scaling-throughput";
  throughput.title = "Throughput per GPU of the best layout at each GPU count";
  throughput.x_label = "GPUs";
  throughput.y_label = "tokens/s per GPU";
  throughput.x_unit = "GPUs";
  throughput.y_unit = "tokens/s";
  throughput.log_x = true;
  report::LineChart train;
  train.id = "scaling-days";
  train.title = "Time to train the token budget";
  train.x_label = "GPUs";
  train.y_label = "days";
  train.x_unit = "GPUs";
  train.y_unit = "d";
  train.log_x = true;
  train.log_y = true;
  report::Table t;
  t.caption = fmt::format(
      "Best layout per GPU count; adding GPUs pays while the step speeds up by at least {:.0f}% "
      "of the GPU ratio",
      100.0 * kPayingEfficiency);
  t.header = {"system", "GPUs", "layout", "step time (s)", "tokens/s/GPU", "speedup", "efficiency", "days", "cost"};
  for (const auto& sc : plan.scaling) {
    report::LineSeries a{sc.system, {}, {}}, b{sc.system, {}, {}};
    for (std::size_t i = 0; i < sc.points.size(); ++i) {
      const auto& p = sc.points[i];
      if (!p.best) {
        t.rows.push_back({sc.system, std::to_string(p.gpus), "nothing divides and fits", "-", "-", "-", "-", "-", "-"});
        continue;
      }
      a.x.push_back(p.gpus);
      a.y.push_back(p.best->step.tokens_per_s_per_gpu);
      b.x.push_back(p.gpus);
      b.y.push_back(days(p.best->train_seconds));
      // Mark the knee only when a later count exists that no longer paid.
      bool knee = false;
      if (sc.knee && *sc.knee == i) {
        for (std::size_t k = i + 1; k < sc.points.size(); ++k) knee = knee || sc.points[k].best.has_value();
      }
      t.rows.push_back({sc.system, std::to_string(p.gpus) + (knee ? " (last that pays)" : ""), p.best->label(),
                        fmt::format("{:.2f}", p.best->step.step_time.value()),
                        core::format_thousands(p.best->step.tokens_per_s_per_gpu),
                        p.speedup > 0 ? fmt::format("{:.2f}x", p.speedup) : "-",
                        p.speedup > 0 ? fmt::format("{:.0f}%", 100.0 * p.marginal_efficiency) : "-",
                        fmt::format("{:.1f}", days(p.best->train_seconds)), core::format_usd(p.best->cost_usd)});
    }
    if (!a.x.empty()) {
      throughput.series.push_back(std::move(a));
      train.series.push_back(std::move(b));
    }
  }
  if (!throughput.series.empty()) {
    s.add(std::move(throughput));
    s.add(std::move(train));
  }
  t.note =
      "Speedup and efficiency are against the previous GPU count with a layout; the global batch stays fixed, "
      "so at high GPU counts fewer micro-batches per step leave a larger pipeline bubble.";
  s.add(std::move(t));
  return s;
}

report::Section layouts_section(const Plan& plan) {
  report::Section s{"Top layouts per system", {}};
  for (const auto& sp : plan.systems) {
    report::Table t;
    t.caption = fmt::format("{}: {} ({} GPUs, {} per GPU usable), {}", sp.cluster.system.name, units_text(sp),
                            sp.cluster.gpus(), sp.cluster.gpu.display_name,
                            sp.cluster.system.price_per_hour_usd > 0
                                ? fmt::format("${:.2f}/h per unit", sp.cluster.system.price_per_hour_usd)
                                : std::string("price unknown"));
    t.header = layout_header();
    for (const auto& p : sp.top) t.rows.push_back(layout_row(p));
    if (t.rows.empty()) {
      s.add(report::Paragraph{fmt::format("{}: {}", sp.cluster.system.name, sp.empty_reason),
                              report::ParagraphStyle::Warning});
      continue;
    }
    t.highlight_row = 0;
    t.note = fmt::format("Searched {} layouts: {} did not divide the global batch, {} exceeded memory, {} costed.",
                         core::format_thousands(static_cast<double>(sp.stats.candidates)),
                         core::format_thousands(static_cast<double>(sp.stats.pruned_batch)),
                         core::format_thousands(static_cast<double>(sp.stats.pruned_memory)),
                         core::format_thousands(static_cast<double>(sp.stats.evaluated)));
    s.add(std::move(t));
    for (const auto& p : sp.top) {
      s.add(report::Paragraph{fmt::format("#{} bottleneck: {}", p.rank, p.bottleneck.sentence),
                              report::ParagraphStyle::Note});
    }
  }
  return s;
}

report::Section method_section(const PlanRequest& request, const Plan& plan, const PlanReportContext& context) {
  report::Section s{"How these numbers were computed", {}};
  s.add(report::Paragraph{fmt::format(
      "For each system the planner enumerated tensor (TP), pipeline (PP, with virtual stages), context (CP){} "
      "parallelism, the ZeRO/FSDP stage, micro-batch size, activation recomputation and precision; dropped "
      "layouts whose sizes do not divide the model, the GPU count or the global batch; dropped layouts whose "
      "estimated memory exceeds usable HBM; and costed the rest with the analytical training-step model "
      "({} stack calibration). {} layouts were considered and {} costed in {:.2f} s.",
      request.model.is_moe() ? " and expert (EP)" : "", request.stack,
      core::format_thousands(static_cast<double>(plan.stats.candidates)),
      core::format_thousands(static_cast<double>(plan.stats.evaluated)), plan.stats.seconds)});
  s.add(report::Paragraph{
      "Time to train = optimizer steps for the token budget x predicted step time; cost = that time x the hourly "
      "price of the whole instances or UltraServers rented (on-demand list prices from the catalog, with their "
      "date). Neither includes failures, restarts, checkpoint stalls or evaluation."});
  if (!context.calibration_note.empty())
    s.add(report::Paragraph{context.calibration_note, report::ParagraphStyle::Note});
  s.add(
      report::Paragraph{"The step model's calibration is still being tuned against published measurements "
                        "(docs/validation.md), so absolute times can move; the ranking is more robust than the "
                        "numbers.",
                        report::ParagraphStyle::Note});
  return s;
}

}  // namespace

report::Document build_plan_report(const PlanRequest& request, const Plan& plan, const PlanReportContext& context) {
  report::Document doc;
  const auto& counts = request.ranked_gpu_counts.empty() ? request.gpu_counts : request.ranked_gpu_counts;
  doc.title = fmt::format(
      "Training plan: {} on {} GPUs", request.model.name,
      counts.size() == 1 ? std::to_string(counts.front()) : fmt::format("{}-{}", counts.front(), counts.back()));
  doc.subtitle =
      fmt::format("{:.3g}T tokens, sequence length {}, global batch {} sequences, ranked by {}", request.tokens / 1e12,
                  request.seq_len, request.global_batch, to_string(request.objective));
  doc.sections.push_back(summary_section(request, plan));
  doc.sections.push_back(systems_section(plan));
  doc.sections.push_back(breakdown_section(plan));
  doc.sections.push_back(memory_section(plan));
  doc.sections.push_back(scaling_section(plan));
  doc.sections.push_back(layouts_section(plan));
  doc.sections.push_back(method_section(request, plan, context));
  doc.footer = context.command_line;
  return doc;
}

}  // namespace fmsim::planner
