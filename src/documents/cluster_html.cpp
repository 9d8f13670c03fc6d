// `fmsim cluster --report` as an HTML document (documents/cluster.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "documents/cluster.hpp"
#include "documents/cluster_parts.hpp"
#include "jobspec/cluster_report.hpp"
#include "report/document.hpp"
#include "report/series.hpp"

namespace fmsim::documents {

namespace orch = fmsim::orchestration;
using cluster_parts::hours;
using cluster_parts::placement_name;
using cluster_parts::scheduler_text;
using cluster_parts::training_rows;
using cluster_parts::wait_unit;
using cluster_parts::WaitUnit;

std::string cluster_html(const std::string& command, const jobspec::ClusterJob& job, const jobspec::ClusterRun& run) {
  const auto& layout = job.layout;
  const auto& variants = job.policies;
  const auto& c0 = variants[0].config;
  const auto& sums = run.summaries;
  const auto& results = run.results;
  const auto& placed = *job.placed;
  const auto& reservations = c0.reservations;
  const auto& fleet = run.fleet;
  const std::string heading = fmt::format("{} x {} ({} GPUs), {}; {}; {}", layout.nodes(), layout.instance_type,
                                          layout.nodes() * layout.gpus_per_node, placement_name(c0.placement),
                                          scheduler_text(job), job.workload_note);
  report::Document doc;
  doc.title = "fmsim cluster";
  doc.subtitle = heading;
  report::Section overview{"Policies side by side", {}};
  report::KeyFigures kf;
  kf.items = {{"utilisation", fmt::format("{:.1f}%", 100 * sums[0].utilisation)},
              {"goodput", fmt::format("{:.1f}%", 100 * sums[0].goodput)},
              {"mean wait", hours(sums[0].mean_wait_s)},
              {"lost GPU-hours", fmt::format("{:.0f}", sums[0].lost_gpu_hours)}};
  overview.add(kf);
  report::Table t;
  // Waits in the unit the text output uses for each (s, min, h or d).
  t.header = {"policy",       "utilisation (%)",  "goodput (%)",    "mean wait", "p95 wait",
              "queue length", "fragmented nodes", "lost GPU-hours", "cost (USD)"};
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const auto& s = sums[i];
    t.rows.push_back({variants[i].name, fmt::format("{:.1f}", 100 * s.utilisation),
                      fmt::format("{:.1f}", 100 * s.goodput), hours(s.mean_wait_s), hours(s.p95_wait_s),
                      fmt::format("{:.1f}", s.mean_queue_length), fmt::format("{:.1f}", s.mean_fragmented_nodes),
                      fmt::format("{:.0f}", s.lost_gpu_hours), fmt::format("{:.0f}", s.cost_usd)});
  }
  overview.add(t);
  doc.sections.push_back(overview);
  if (fleet) doc.sections.push_back(jobspec::fleet_section(*fleet));
  report::Section over_time{"Over time", {}};
  // Hourly means over weeks are a comb of spikes: merged into at most kChartPoints wider buckets
  // (6 h for four weeks), each the mean over its hours, and the title says how wide.
  constexpr std::size_t kChartPoints = 120;
  auto line = [&](const std::string& id, const std::string& title, const std::string& y, auto pick) {
    report::LineChart c;
    c.id = id;
    c.x_label = "time (days)";
    c.y_label = y;
    double width_s = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
      report::LineSeries s;
      s.name = variants[i].name;
      const auto& series = results[i].series;
      const auto coarse = report::coarsen(pick(series), kChartPoints);
      const double bucket_s = series.bucket_s * static_cast<double>(coarse.factor);
      width_s = std::max(width_s, bucket_s);
      for (std::size_t k = 0; k < coarse.mean.size(); ++k) {
        s.x.push_back((static_cast<double>(k) + 0.5) * bucket_s / 86400.0);
        s.y.push_back(coarse.mean[k]);
      }
      if (!s.x.empty()) c.series.push_back(s);
    }
    const WaitUnit per = wait_unit(width_s);
    c.title = fmt::format("{} (mean per {:g} {})", title, width_s / per.seconds, per.symbol);
    if (!c.series.empty()) over_time.add(c);
  };
  const double n = layout.nodes();
  line("utilisation", "Allocated nodes", "nodes (of " + fmt::format("{:.0f}", n) + ")",
       [](const orch::TimeSeries& s) { return s.busy_nodes; });
  line("queue", "Queue length", "pending jobs", [](const orch::TimeSeries& s) { return s.queue_length; });
  line("fragmentation", "Free nodes that cannot hold the largest waiting job", "nodes",
       [](const orch::TimeSeries& s) { return s.fragmented_nodes; });
  doc.sections.push_back(over_time);
  report::Section waits{"Wait by job size", {}};
  report::GroupedBarChart g;
  g.id = "wait-by-size";
  g.title = "Mean queue wait by job size";
  for (const auto& v : variants) g.series.push_back(v.name);
  // One axis, in the unit the text output gives the longest of these waits.
  double longest_s = 0;
  for (const auto& s : sums) {
    for (const auto& b : s.wait_by_size) {
      if (b.jobs > 0) longest_s = std::max(longest_s, b.mean_wait_s);
    }
  }
  const WaitUnit unit = wait_unit(longest_s);
  report::GroupedBarPanel panel{"mean wait", unit.words, unit.symbol, {}};
  for (std::size_t b = 0; b < sums[0].wait_by_size.size(); ++b) {
    if (sums[0].wait_by_size[b].jobs == 0) continue;
    g.groups.push_back(sums[0].wait_by_size[b].label + " nodes");
    std::vector<double> row;
    for (const auto& s : sums) row.push_back(s.wait_by_size[b].mean_wait_s / unit.seconds);
    panel.values.push_back(row);
  }
  g.panels.push_back(panel);
  if (!g.groups.empty()) waits.add(g);
  doc.sections.push_back(waits);
  if (const auto rows = training_rows(layout, results[0], placed); !rows.empty()) {
    report::Section training{"Training jobs on their nodes", {}};
    report::Table tt;
    tt.header = {"job", "training job", "nodes", "ideal step (s)", "step (s)", "slowdown"};
    for (const auto& row : rows)
      tt.rows.push_back({fmt::format("{}", row.id), row.job, row.nodes, fmt::format("{:.3f}", row.ideal),
                         fmt::format("{:.3f}", row.step), fmt::format("{:.2f}x", row.slowdown)});
    training.add(tt);
    doc.sections.push_back(training);
  }
  if (!reservations.empty()) {
    report::Section resv{"Reservations", {}};
    report::Table rt;
    rt.header = {"name", "kind", "nodes", "start", "end"};
    for (const auto& r : reservations)
      rt.rows.push_back({r.name, r.capacity_block ? "Capacity Block" : "reservation", orch::hostlist(layout, r.nodes),
                         hours(r.start_s), hours(r.end_s)});
    resv.add(rt);
    doc.sections.push_back(resv);
  }
  doc.footer = command + " (Slurm scheduler twin: docs/models/orchestration.md)";
  return report::render_html(doc);
}

}  // namespace fmsim::documents
