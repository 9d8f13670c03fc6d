// fmsim cluster: many jobs on one shared cluster through fmsim's twin of Slurm's scheduler:
// queue waits, starts, ends, placements, requeues and lost GPU-hours per job; utilisation, queue
// length, wait by job size, fragmentation, goodput and cost for the cluster; policies side by side.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/reproduce_command.hpp"
#include "config/job_trace.hpp"
#include "core/error.hpp"
#include "documents/text_table.hpp"
#include "jobspec/cluster.hpp"
#include "jobspec/cluster_report.hpp"
#include "orchestration/cluster_metrics.hpp"
#include "orchestration/reservation.hpp"
#include "orchestration/slurm_config.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"
#include "report/document.hpp"
#include "report/series.hpp"

namespace fmsim::cli {
using documents::TextTable;
namespace {

namespace orch = fmsim::orchestration;
using nlohmann::json;

/// The flags resolved by jobspec::resolve_cluster_job, and what to write.
struct ClusterFlags {
  jobspec::ClusterFlags job;
  bool json = false;
  std::string report;
  std::string jobs_csv;
  std::string write_trace;
  MetricsFlags metrics;  ///< --metrics-out DIR: the Slurm exporter's series
  std::string command;   ///< the reproduce line the report's footer shows
};

using Variant = jobspec::ClusterPolicy;
using PlacedTraining = jobspec::PlacedTraining;

std::string placement_name(orch::Placement p) {
  switch (p) {
    case orch::Placement::Tree: return "topology/tree";
    case orch::Placement::Block: return "topology/block";
    case orch::Placement::Consecutive: break;
  }
  return "topology/none";
}

/// The unit a wait of `s` seconds is printed in: seconds under a minute, minutes under an hour,
/// hours under two days, then days.
struct WaitUnit {
  double seconds;
  const char* symbol;
  const char* words;
};
WaitUnit wait_unit(double s) {
  if (s < 60) return {1, "s", "seconds"};
  if (s < 3600) return {60, "min", "minutes"};
  if (s < 86400 * 2) return {3600, "h", "hours"};
  return {86400, "d", "days"};
}

std::string hours(double s) {
  const WaitUnit u = wait_unit(s);
  const int decimals = u.seconds == 1 ? 0 : u.seconds == 60 ? 1 : 2;
  return fmt::format("{:.{}f} {}", s / u.seconds, decimals, u.symbol);
}

json summary_json(const orch::ClusterSummary& s) {
  json by_size = json::array();
  for (const auto& b : s.wait_by_size)
    if (b.jobs > 0)
      by_size.push_back(
          {{"nodes", b.label}, {"jobs", b.jobs}, {"mean_wait_s", b.mean_wait_s}, {"p95_wait_s", b.p95_wait_s}});
  return {{"jobs", s.jobs},
          {"started", s.started},
          {"completed", s.completed},
          {"timeout", s.timeout},
          {"node_fail", s.node_fail},
          {"preempted", s.preempted},
          {"unfinished", s.unfinished},
          {"backfilled", s.backfilled},
          {"requeues", s.requeues},
          {"span_s", s.span_s},
          {"utilisation", s.utilisation},
          {"goodput", s.goodput},
          {"mean_wait_s", s.mean_wait_s},
          {"median_wait_s", s.median_wait_s},
          {"p95_wait_s", s.p95_wait_s},
          {"max_wait_s", s.max_wait_s},
          {"mean_queue_length", s.mean_queue_length},
          {"mean_fragmented_nodes", s.mean_fragmented_nodes},
          {"mean_down_nodes", s.mean_down_nodes},
          {"useful_gpu_hours", s.useful_gpu_hours},
          {"lost_gpu_hours", s.lost_gpu_hours},
          {"paid_gpu_hours", s.paid_gpu_hours},
          {"cost_usd", s.cost_usd},
          {"slow_placement_gpu_hours", s.slow_placement_gpu_hours},
          {"cost_per_useful_gpu_hour_usd", s.cost_per_useful_gpu_hour},
          {"wait_by_size", by_size},
          {"node_failures", s.node_failures},
          {"spares_used", s.spares_used},
          {"preemptions", s.preemptions}};
}

json jobs_json(const orch::ClusterLayout& layout, const orch::SimulationResult& r,
               const std::vector<orch::JobSpec>& specs, const PlacedTraining& placed) {
  json jobs = json::array();
  const int gpn = layout.gpus_per_node;
  for (std::size_t k = 0; k < r.jobs.size(); ++k) {
    const auto& j = r.jobs[k];
    json o{{"id", j.id},
           {"state", orch::to_string(j.state)},
           {"submit_s", j.submit_s},
           {"requeues", j.requeues},
           {"lost_gpu_hours", j.lost_node_s * gpn / 3600.0},
           {"useful_gpu_hours", j.useful_node_s * gpn / 3600.0},
           {"priority", j.priority}};
    if (j.first_start_s >= 0) {
      o["wait_s"] = j.wait_s;
      o["start_s"] = j.first_start_s;
      o["last_start_s"] = j.start_s;
      o["nodes"] = orch::hostlist(layout, j.nodes);
      o["node_count"] = j.nodes.size();
      o["backfilled"] = j.backfilled;
    }
    if (j.end_s >= 0) o["end_s"] = j.end_s;
    if (k < specs.size() && !specs[k].reservation.empty()) o["reservation"] = specs[k].reservation;
    if (k < placed.handle.size() && placed.handle[k] >= 0) {
      const double ideal = placed.ideal_step[static_cast<std::size_t>(placed.handle[k])];
      o["training"] = {{"job", placed.label[static_cast<std::size_t>(placed.handle[k])]},
                       {"ideal_step_s", ideal},
                       {"step_s", ideal * j.slowdown},
                       {"slowdown", j.slowdown},
                       {"slow_placement_gpu_hours", j.slow_placement_node_s * gpn / 3600.0}};
    }
    jobs.push_back(o);
  }
  return jobs;
}

std::string jobs_csv(const orch::ClusterLayout& layout, const orch::SimulationResult& r) {
  std::string out = "JobID,State,Submit,Start,End,Wait,NNodes,NodeList,Requeues,Backfilled,LostGPUHours\n";
  for (const auto& j : r.jobs)
    out += fmt::format("{},{},{},{},{},{},{},\"{}\",{},{},{:.4f}\n", j.id, orch::to_string(j.state), j.submit_s,
                       j.first_start_s, j.end_s, j.wait_s, j.nodes.size(), orch::hostlist(layout, j.nodes), j.requeues,
                       j.backfilled ? 1 : 0, j.lost_node_s * layout.gpus_per_node / 3600.0);
  return out;
}

void print_comparison(const std::vector<Variant>& variants, const std::vector<orch::ClusterSummary>& sums) {
  std::vector<TextTable::Column> cols{{"", false}};
  for (const auto& v : variants) cols.push_back({v.name, true});
  TextTable t(cols);
  auto row = [&](const std::string& label, auto fn) {
    std::vector<std::string> cells{label};
    for (const auto& s : sums) cells.push_back(fn(s));
    t.add(cells);
  };
  using S = orch::ClusterSummary;
  row("jobs completed / timeout / failed",
      [](const S& s) { return fmt::format("{} / {} / {}", s.completed, s.timeout, s.node_fail + s.preempted); });
  row("jobs unfinished at the end", [](const S& s) { return fmt::format("{}", s.unfinished); });
  row("started by backfill", [](const S& s) { return fmt::format("{}", s.backfilled); });
  row("utilisation (allocated)", [](const S& s) { return fmt::format("{:.1f}%", 100 * s.utilisation); });
  row("goodput (useful work)", [](const S& s) { return fmt::format("{:.1f}%", 100 * s.goodput); });
  row("mean / median wait", [](const S& s) { return hours(s.mean_wait_s) + " / " + hours(s.median_wait_s); });
  row("p95 / max wait", [](const S& s) { return hours(s.p95_wait_s) + " / " + hours(s.max_wait_s); });
  row("mean queue length (jobs)", [](const S& s) { return fmt::format("{:.1f}", s.mean_queue_length); });
  row("fragmented nodes (mean)", [](const S& s) { return fmt::format("{:.1f}", s.mean_fragmented_nodes); });
  row("node failures / preemptions / requeues",
      [](const S& s) { return fmt::format("{} / {} / {}", s.node_failures, s.preemptions, s.requeues); });
  row("lost GPU-hours", [](const S& s) { return fmt::format("{:.0f}", s.lost_gpu_hours); });
  if (sums.front().slow_placement_gpu_hours > 0 || sums.back().slow_placement_gpu_hours > 0)
    row("GPU-hours added by slow placements",
        [](const S& s) { return fmt::format("{:.0f}", s.slow_placement_gpu_hours); });
  row("useful / paid GPU-hours",
      [](const S& s) { return fmt::format("{:.0f} / {:.0f}", s.useful_gpu_hours, s.paid_gpu_hours); });
  row("cost", [](const S& s) { return s.cost_usd > 0 ? fmt::format("${:.0f}", s.cost_usd) : std::string("n/a"); });
  row("cost per useful GPU-hour", [](const S& s) {
    return s.cost_per_useful_gpu_hour > 0 ? fmt::format("${:.2f}", s.cost_per_useful_gpu_hour) : std::string("n/a");
  });
  row("span (first submit to last event)", [](const S& s) { return hours(s.span_s); });
  t.print(std::cout);
  std::cout << "\nMean wait by job size (nodes):\n";
  std::vector<TextTable::Column> wcols{{"nodes", false}, {"jobs", true}};
  for (const auto& v : variants) wcols.push_back({v.name, true});
  TextTable w(wcols);
  for (std::size_t b = 0; b < sums.front().wait_by_size.size(); ++b) {
    if (sums.front().wait_by_size[b].jobs == 0) continue;
    std::vector<std::string> cells{sums.front().wait_by_size[b].label,
                                   fmt::format("{}", sums.front().wait_by_size[b].jobs)};
    for (const auto& s : sums) cells.push_back(hours(s.wait_by_size[b].mean_wait_s));
    w.add(cells);
  }
  w.print(std::cout);
}

/// Training jobs' step times on the nodes they got (the first policy), the slowest placements first.
struct TrainingRow {
  int id = 0;
  std::string job, nodes;
  double ideal = 0, step = 0, slowdown = 1;
};
std::vector<TrainingRow> training_rows(const orch::ClusterLayout& layout, const orch::SimulationResult& r,
                                       const PlacedTraining& placed) {
  std::vector<TrainingRow> rows;
  for (std::size_t k = 0; k < r.jobs.size() && k < placed.handle.size(); ++k) {
    const int h = placed.handle[k];
    if (h < 0 || r.jobs[k].first_start_s < 0) continue;
    const double ideal = placed.ideal_step[static_cast<std::size_t>(h)];
    rows.push_back({r.jobs[k].id, placed.label[static_cast<std::size_t>(h)], orch::hostlist(layout, r.jobs[k].nodes),
                    ideal, ideal * r.jobs[k].slowdown, r.jobs[k].slowdown});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TrainingRow& a, const TrainingRow& b) { return a.slowdown > b.slowdown; });
  return rows;
}

void print_training(const orch::ClusterLayout& layout, const orch::SimulationResult& r, const PlacedTraining& placed,
                    const std::string& policy) {
  const auto rows = training_rows(layout, r, placed);
  if (rows.empty()) return;
  std::cout << fmt::format(
      "\nTraining jobs on the nodes they got ({}; {} started, slowest placements first; step model "
      "run {} times for {} placements):\n",
      policy, rows.size(), placed.model->step_model_calls(), placed.model->lookups());
  TextTable t({{"job", true},
               {"training job", false},
               {"nodes", false},
               {"ideal step", true},
               {"step", true},
               {"slowdown", true}});
  for (std::size_t i = 0; i < rows.size() && i < 10; ++i)
    t.add({fmt::format("{}", rows[i].id), rows[i].job, rows[i].nodes, fmt::format("{:.3f} s", rows[i].ideal),
           fmt::format("{:.3f} s", rows[i].step), fmt::format("{:.2f}x", rows[i].slowdown)});
  t.print(std::cout);
  if (rows.size() > 10) std::cout << fmt::format("({} more in --json)\n", rows.size() - 10);
}

std::string html_report(const std::string& command, const std::string& heading, const orch::ClusterLayout& layout,
                        const std::vector<Variant>& variants, const std::vector<orch::ClusterSummary>& sums,
                        const std::vector<orch::SimulationResult>& results, const PlacedTraining& placed,
                        const std::vector<orch::Reservation>& reservations,
                        const std::optional<jobspec::FleetReport>& fleet) {
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

/// The shared fleet's table and lines (jobspec/cluster_report).
void print_fleet(const jobspec::FleetReport& fleet) {
  std::cout << "\nServing deployments (steady state, not request by request):\n";
  const auto table = jobspec::deployment_table(fleet);
  std::vector<TextTable::Column> cols;
  for (std::size_t c = 0; c < table.header.size(); ++c) cols.push_back({table.header[c], c >= 2});
  TextTable t(cols);
  for (const auto& row : table.rows) t.add(row);
  t.print(std::cout);
  std::cout << "(" << jobspec::fleet_formula() << ")\n";
  for (const auto& line : jobspec::fleet_lines(fleet)) std::cout << line << "\n";
}

void run_cluster(const ClusterFlags& out, Context& ctx) {
  const auto& f = out.job;
  const jobspec::ClusterJob job = jobspec::resolve_cluster_job(f, ctx.catalog());
  const auto& layout = job.layout;
  const auto& jobs = job.jobs;
  const auto& placed = *job.placed;
  const bool k8s = job.k8s;
  const std::string& conf_note = job.conf_note;
  const std::string& workload_note = job.workload_note;
  if (!out.write_trace.empty())
    write_file_atomically(out.write_trace, config::write_trace_csv(jobs), "--job-trace-out");
  const auto& variants = job.policies;
  const auto& o = variants[0].options;
  std::vector<orch::SimulationResult> results;
  std::vector<orch::ClusterSummary> sums;
  std::vector<double> walls;
  for (const auto& v : variants) {
    const auto t0 = std::chrono::steady_clock::now();
    results.push_back(orch::simulate_slurm(layout, v.config, jobs, v.options));
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sums.push_back(orch::summarise(layout, results.back(), v.spares));
  }
  std::optional<jobspec::FleetReport> fleet;
  if (!job.deployments.empty()) {  // the batch jobs alone, for what sharing costs them
    const std::vector<orch::JobSpec> batch(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(job.batch_jobs));
    fleet = jobspec::summarise_fleet(job, results[0], orch::simulate_slurm(layout, job.training_alone, batch, o));
  }

  const auto& c0 = variants[0].config;
  const std::string sched_text =
      k8s ? fmt::format("Kubernetes + Kueue ({}, {} ClusterQueues in one cohort{})",
                        o.kueue.strict_fifo ? "StrictFIFO" : "BestEffortFIFO",
                        o.kueue.queues.empty() ? std::string("per-team") : std::to_string(o.kueue.queues.size()),
                        o.kueue.reclaim_within_cohort ? ", reclaim and priority preemption" : "")
          : fmt::format("Slurm {} {} ({})", c0.backfill ? "sched/backfill" : "sched/builtin",
                        c0.multifactor ? "priority/multifactor" : "priority/basic", conf_note);
  const std::string heading =
      fmt::format("{} x {} ({} GPUs), {}; {}; {}", layout.nodes(), layout.instance_type,
                  layout.nodes() * layout.gpus_per_node, placement_name(c0.placement), sched_text, workload_note);
  if (!out.jobs_csv.empty()) write_file_atomically(out.jobs_csv, jobs_csv(layout, results[0]), "--jobs-csv");
  if (!out.report.empty())
    write_file_atomically(
        out.report, html_report(out.command, heading, layout, variants, sums, results, placed, c0.reservations, fleet),
        "--report");
  const auto metrics = write_cluster_metrics_file(out.metrics, layout, c0, jobs, variants[0].options);

  if (out.json) {
    json doc{{"cluster",
              {{"instance_type", layout.instance_type},
               {"nodes", layout.nodes()},
               {"gpus_per_node", layout.gpus_per_node},
               {"price_per_node_hour_usd", layout.price_per_node_hour},
               {"switches", layout.switches.size()},
               {"block_size", layout.block_size}}},
             {"scheduler",
              {{"type", c0.backfill ? "sched/backfill" : "sched/builtin"},
               {"priority", c0.multifactor ? "priority/multifactor" : "priority/basic"},
               {"topology", placement_name(c0.placement)},
               {"bf_interval_s", c0.bf_interval_s},
               {"bf_window_s", c0.bf_window_s},
               {"bf_max_job_test", c0.bf_max_job_test},
               {"bf_resolution_s", c0.bf_resolution_s},
               {"fair_share", c0.fair_tree ? "fair_tree" : "classic"}}},
             {"workload", workload_note}};
    json resv = json::array();
    for (const auto& r : c0.reservations)
      resv.push_back({{"name", r.name},
                      {"start_s", r.start_s},
                      {"end_s", r.end_s},
                      {"nodes", orch::hostlist(layout, r.nodes)},
                      {"node_count", r.nodes.size()},
                      {"capacity_block", r.capacity_block}});
    doc["reservations"] = resv;
    json policies = json::array();
    for (std::size_t i = 0; i < variants.size(); ++i) {
      json p{{"name", variants[i].name},
             {"summary", summary_json(sums[i])},
             {"wall_s", walls[i]},
             {"series",
              {{"bucket_s", results[i].series.bucket_s},
               {"busy_nodes", results[i].series.busy_nodes},
               {"queue_length", results[i].series.queue_length},
               {"fragmented_nodes", results[i].series.fragmented_nodes},
               {"down_nodes", results[i].series.down_nodes}}}};
      if (i == 0) p["jobs"] = jobs_json(layout, results[i], jobs, placed);
      policies.push_back(p);
    }
    doc["policies"] = policies;
    if (fleet) doc["shared_fleet"] = jobspec::fleet_json(*fleet);
    if (metrics) doc["metrics"] = *metrics;
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << "Cluster:   " << layout.nodes() << " x " << layout.instance_type << " ("
            << layout.nodes() * layout.gpus_per_node << " GPUs), " << placement_name(c0.placement);
  if (!layout.switches.empty()) std::cout << fmt::format(", {} switches", layout.switches.size());
  if (layout.block_size > 0) std::cout << fmt::format(", NVLink blocks of {} nodes", layout.block_size);
  if (layout.price_per_node_hour > 0) std::cout << fmt::format(", ${:.2f}/node-hour", layout.price_per_node_hour);
  if (k8s)
    std::cout << "\nScheduler: " << sched_text << ", topology-aware placement from the node labels\n";
  else
    std::cout << "\nScheduler: Slurm " << (c0.backfill ? "sched/backfill" : "sched/builtin") << " ("
              << fmt::format("bf_interval {:g} s, bf_window {:g} min, bf_max_job_test {}", c0.bf_interval_s,
                             c0.bf_window_s / 60, c0.bf_max_job_test)
              << "), " << (c0.multifactor ? "priority/multifactor" : "priority/basic") << "; from " << conf_note
              << "\n";
  std::cout << "Workload:  " << workload_note;
  if (f.days > 0) std::cout << fmt::format(", {:g} days", f.days);
  std::cout << "\n";
  for (const auto& r : c0.reservations)
    std::cout << fmt::format("Reserved:  {} ({}{} nodes {}, {} to {})\n", r.name,
                             r.capacity_block ? "Capacity Block, " : "", r.nodes.size(),
                             orch::hostlist(layout, r.nodes), hours(r.start_s), hours(r.end_s));
  if (o.failures.rate_per_node_hour > 0)
    std::cout << fmt::format(
        "Failures:  {:.3g} per 1000 node-days, detect {}, repair {}, {} spares (swap {}), restart {}\n",
        o.failures.rate_per_node_hour * 24000, f.detect, f.repair, f.spares, f.replace, f.restart);
  std::cout << "\n";
  print_comparison(variants, sums);
  if (placed.model) print_training(layout, results[0], placed, variants[0].name);
  if (fleet) print_fleet(*fleet);
  std::cout << "\nSimulated in";
  for (std::size_t i = 0; i < variants.size(); ++i)
    std::cout << fmt::format(" {:.2f} s ({})", walls[i], variants[i].name);
  std::cout << ".\n";
  if (!out.report.empty()) std::cout << "Wrote " << out.report << "\n";
  if (!out.jobs_csv.empty()) std::cout << "Wrote " << out.jobs_csv << " (per job, " << variants[0].name << ")\n";
  if (metrics) std::cout << metrics_line(*metrics);
}

/// A flag whose value is a duration ("90s", "30m", "48h", "2d").
void duration_option(CLI::App* cmd, const std::string& name, std::string& value, const std::string& help) {
  cmd->add_option(name, value, help)->type_name("DURATION");
}
/// A flag that takes a comma-separated list (and may be repeated).
template <class T>
void list_option(CLI::App* cmd, const std::string& name, std::vector<T>& values, const std::string& help) {
  cmd->add_option(name, values, help)->delimiter(',');
}

}  // namespace

void add_cluster_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<ClusterFlags>();
  auto* cmd = app.add_subcommand(
      "cluster",
      "Replay a job trace on a shared cluster through a twin of Slurm's scheduler (waits, utilisation, "
      "fragmentation, goodput, cost)");
  cmd->add_option("--cluster", f->job.cluster, "Cluster: SYSTEM:COUNT (default p5en.48xlarge:128)")->type_name("SPEC");
  cmd->add_option("--scheduler", f->job.scheduler, "slurm (default) or k8s (Kubernetes with Kueue queues)");
  list_option(cmd, "--queues", f->job.queues,
              "k8s: ClusterQueues TEAM=NODES[:BORROW] (nominal quota and borrowing limit "
              "in nodes; default an equal share per team, unlimited borrowing)");
  cmd->add_option("--queueing", f->job.queueing, "k8s: best-effort (BestEffortFIFO, default) or strict (StrictFIFO)");
  cmd->add_flag("--no-preemption", f->job.no_preemption,
                "k8s: no reclaiming within the cohort, no priority preemption");
  cmd->add_option("--slurm-conf", f->job.slurm_conf,
                  "slurm.conf: SchedulerType, SchedulerParameters, PriorityType and "
                  "weights, PreemptType/Mode, TopologyPlugin, NodeName and PartitionName lines")
      ->type_name("FILE");
  cmd->add_option("--topology-conf", f->job.topology_conf,
                  "topology.conf (SwitchName or BlockName lines); default: the "
                  "catalog layout (fmsim topology)")
      ->type_name("FILE");
  cmd->add_option("--placement", f->job.placement,
                  "consecutive | tree | block (default: TopologyPlugin, else block for "
                  "UltraServers and tree otherwise)");
  cmd->add_option("--policy", f->job.policy, "backfill | fifo (sched/builtin) (default: SchedulerType, else backfill)");
  cmd->add_option("--job-trace,--trace", f->job.trace,
                  "Job trace CSV to replay (fmsim, Helios/Acme, Philly or PAI columns; see --trace-map); "
                  "--trace is the older name")
      ->type_name("FILE");
  list_option(cmd, "--trace-map", f->job.trace_map,
              "FIELD=COLUMN: read a field from another column (fields: id, submit, "
              "nodes, gpus, duration, start, end, time_limit, partition, account, "
              "user, nice, qos, kind, state, segment, checkpoint_interval)");
  cmd->add_option("--limit-factor", f->job.limit_factor,
                  "Traces without time limits: limit = duration x this (default 2)");
  cmd->add_option("--synthetic", f->job.synthetic, "Generate this many jobs instead of a trace (default 1000)");
  duration_option(cmd, "--arrival", f->job.arrival, "Synthetic: mean time between submissions (default 5m)");
  cmd->add_option("--seed", f->job.seed, "Synthetic workload and failure seed (default 1)");
  cmd->add_option("--days", f->job.days, "Stop after this many days (default: when every job has ended)");
  list_option(cmd, "--compare", f->job.compare,
              "Also run these policies: fifo, backfill, basic, multifactor, consecutive, "
              "tree, block, spares=N, bf_window=MIN, bf_max_job_test=N, bf_interval=S");
  cmd->add_option("--node-failure-rate", f->job.node_failure_rate,
                  "Node failures per 1000 node-days, or a published rate "
                  "(e.g. meta-rsc1); default none")
      ->type_name("RATE");
  cmd->add_option("--spares", f->job.spares, "Spare nodes that replace failed ones (HyperPod auto-resume; default 0)");
  duration_option(cmd, "--detect", f->job.detect, "Failure detection time (default 1m)");
  duration_option(cmd, "--repair", f->job.repair, "Time to repair a failed node (default 48h)");
  duration_option(cmd, "--replace", f->job.replace, "Time to swap a spare in (default 10m)");
  duration_option(cmd, "--restart", f->job.restart, "Relaunch of a requeued job before it makes progress (default 3m)");
  cmd->add_option("--associations", f->job.associations,
                  "sacctmgr dump of accounts and users with Fairshare= shares, for "
                  "the fair-share factor (Fair Tree; classic with PriorityFlags=NO_FAIR_TREE)")
      ->type_name("FILE");
  cmd->add_option("--reservations", f->job.reservations_file,
                  "Reservations and Capacity Blocks, one per line in scontrol "
                  "syntax (ReservationName= StartTime= Duration=|EndTime= "
                  "Nodes=|NodeCnt= [CapacityBlock=YES])")
      ->type_name("FILE");
  cmd->add_option("--reservation", f->job.reservations,
                  "One reservation line as in --reservations (repeatable); jobs use "
                  "it through the trace's reservation column")
      ->type_name("LINE");
  duration_option(cmd, "--sigterm-checkpoint", f->job.sigterm_checkpoint,
                  "Preempted jobs write a checkpoint on SIGTERM "
                  "taking this long (kept when within KillWait; "
                  "default: they exit without one)");
  cmd->add_option("--deployments", f->job.deployments_file,
                  "Serving deployments sharing the cluster (YAML list; keys as --deployment); needs --days")
      ->type_name("FILE");
  cmd->add_option("--deployment", f->job.deployments,
                  "One serving deployment, KEY=VALUE,... (repeatable): name, model, engine, precision, tp, isl, osl, "
                  "rate, shape (constant|diurnal|csv), trough, peak-hour, rate-csv, slo-ttft, slo-tpot, cold-start, "
                  "target-utilisation, scale-up-delay, scale-down-delay, min-replicas, max-replicas, share "
                  "(preempt|reserved), nodes")
      ->type_name("SPEC");
  duration_option(cmd, "--checkpoint-interval", f->job.checkpoint,
                  "Checkpoint interval of jobs that have none (default: "
                  "the trace's, else none: a failure loses the whole run)");
  cmd->add_flag("--json", f->json,
                "Everything as JSON: cluster, scheduler, per-policy summary and time series, per job");
  cmd->add_option("--report", f->report, "Write an offline HTML report")->type_name("FILE")->check(output_file());
  cmd->add_option("--jobs-csv", f->jobs_csv, "Write one row per job (first policy) in sacct-like columns")
      ->type_name("FILE")
      ->check(output_file());
  cmd->add_option("--job-trace-out,--write-trace", f->write_trace,
                  "Write the workload as an fmsim job trace CSV (--write-trace is the older name)")
      ->type_name("FILE")
      ->check(output_file());
  cmd->footer(
      "The scheduler twin follows slurmctld 22.05: jobs ordered by partition PriorityTier, priority, submit\n"
      "time, id; the main loop starts jobs in that order and stops a partition at the first that does not\n"
      "fit; backfill (every bf_interval) plans each job at the earliest time its nodes are free for its\n"
      "whole time limit and starts it only if that delays no job ahead of it. Whole-node gang allocation,\n"
      "topology/tree and topology/block placement as select/cons_tres picks nodes. Checked against a\n"
      "real slurmctld on loopback (tests/slurm/scheduler_twin_test.cpp).\n"
      "Examples:\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --synthetic 2000 --arrival 4m --compare fifo\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --slurm-conf slurm.conf --job-trace jobs.csv --days 30 --json\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:8 --synthetic 500 --compare tree --report cluster.html\n"
      "  fmsim cluster --cluster p5.48xlarge:64 --job-trace cluster_log.csv --trace-map gpus=gpu_num \\\n"
      "      --node-failure-rate 6.5 --spares 4 --checkpoint-interval 30m --compare spares=0\n"
      "Training jobs timed on the nodes they get (trace columns model, tp, pp, cp, ep, gbs, seq, tokens):\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:2 --job-trace training_jobs.csv --placement consecutive --compare "
      "block\n"
      "A Capacity Block (nodes only in its window) for the jobs whose reservation column says cb1:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --job-trace jobs.csv \\\n"
      "      --reservation \"ReservationName=cb1 StartTime=now+2days Duration=3-00:00:00 NodeCnt=16 "
      "CapacityBlock=YES\"\n"
      "Fair Tree fair-share from slurmdbd's associations (PriorityWeightFairshare in slurm.conf):\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --synthetic 500 --slurm-conf slurm.conf --associations assoc.cfg\n"
      "Preemption with GraceTime/KillWait (slurm.conf) and jobs that checkpoint on SIGTERM in 20 s:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --job-trace jobs.csv --slurm-conf slurm.conf --sigterm-checkpoint "
      "20s");
  add_metrics_flags(*cmd, f->metrics);
  cmd->callback([f, cmd, &ctx] {
    f->command = reproduce_command(*cmd, {"--json", "--report", "--jobs-csv", "--job-trace-out", "--metrics-out"});
    run_cluster(*f, ctx);
  });
}

}  // namespace fmsim::cli
