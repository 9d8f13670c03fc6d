// `fmsim cluster` as a JSON document, text tables and a per-job CSV (documents/cluster.hpp).
#include "documents/cluster.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "documents/cluster_parts.hpp"
#include "documents/text_table.hpp"
#include "orchestration/cluster_metrics.hpp"

namespace fmsim::documents {
namespace {

namespace orch = fmsim::orchestration;
using cluster_parts::hours;
using cluster_parts::placement_name;
using cluster_parts::scheduler_text;
using cluster_parts::training_rows;
using cluster_parts::wait_unit;
using cluster_parts::WaitUnit;
using nlohmann::json;
using Variant = jobspec::ClusterPolicy;
using PlacedTraining = jobspec::PlacedTraining;

json cluster_summary_json(const orch::ClusterSummary& s) {
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

void print_comparison(std::ostream& out, const std::vector<Variant>& variants,
                      const std::vector<orch::ClusterSummary>& sums) {
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
  t.print(out);
  out << "\nMean wait by job size (nodes):\n";
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
  w.print(out);
}

void print_training(std::ostream& out, const orch::ClusterLayout& layout, const orch::SimulationResult& r,
                    const PlacedTraining& placed, const std::string& policy) {
  const auto rows = training_rows(layout, r, placed);
  if (rows.empty()) return;
  out << fmt::format(
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
  t.print(out);
  if (rows.size() > 10) out << fmt::format("({} more in --json)\n", rows.size() - 10);
}

/// The shared fleet's table and lines (jobspec/cluster_report).
void print_fleet(std::ostream& out, const jobspec::FleetReport& fleet) {
  out << "\nServing deployments (steady state, not request by request):\n";
  const auto table = jobspec::deployment_table(fleet);
  std::vector<TextTable::Column> cols;
  for (std::size_t c = 0; c < table.header.size(); ++c) cols.push_back({table.header[c], c >= 2});
  TextTable t(cols);
  for (const auto& row : table.rows) t.add(row);
  t.print(out);
  out << "(" << jobspec::fleet_formula() << ")\n";
  for (const auto& line : jobspec::fleet_lines(fleet)) out << line << "\n";
}

}  // namespace

json cluster_json(const jobspec::ClusterJob& job, const jobspec::ClusterRun& run) {
  const auto& layout = job.layout;
  const auto& variants = job.policies;
  const auto& c0 = variants[0].config;
  const auto& results = run.results;
  const auto& fleet = run.fleet;
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
           {"workload", job.workload_note}};
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
           {"summary", cluster_summary_json(run.summaries[i])},
           {"wall_s", run.wall_s[i]},
           {"series",
            {{"bucket_s", results[i].series.bucket_s},
             {"busy_nodes", results[i].series.busy_nodes},
             {"queue_length", results[i].series.queue_length},
             {"fragmented_nodes", results[i].series.fragmented_nodes},
             {"down_nodes", results[i].series.down_nodes}}}};
    if (i == 0) p["jobs"] = jobs_json(layout, results[i], job.jobs, *job.placed);
    policies.push_back(p);
  }
  doc["policies"] = policies;
  if (fleet) doc["shared_fleet"] = jobspec::fleet_json(*fleet);
  return doc;
}

void print_cluster(std::ostream& out, const jobspec::ClusterJob& job, const jobspec::ClusterRun& run,
                   const jobspec::ClusterFlags& f) {
  const auto& layout = job.layout;
  const auto& variants = job.policies;
  const auto& o = variants[0].options;
  const auto& c0 = variants[0].config;
  const auto& placed = *job.placed;
  const auto& results = run.results;
  const auto& sums = run.summaries;
  const auto& walls = run.wall_s;
  const auto& fleet = run.fleet;
  const bool k8s = job.k8s;
  const std::string& conf_note = job.conf_note;
  const std::string& workload_note = job.workload_note;
  out << "Cluster:   " << layout.nodes() << " x " << layout.instance_type << " ("
      << layout.nodes() * layout.gpus_per_node << " GPUs), " << placement_name(c0.placement);
  if (!layout.switches.empty()) out << fmt::format(", {} switches", layout.switches.size());
  if (layout.block_size > 0) out << fmt::format(", NVLink blocks of {} nodes", layout.block_size);
  if (layout.price_per_node_hour > 0) out << fmt::format(", ${:.2f}/node-hour", layout.price_per_node_hour);
  if (k8s)
    out << "\nScheduler: " << scheduler_text(job)
        << (c0.placement == orch::Placement::Consecutive ? ", nodes in order (no topology)\n"
                                                         : ", topology-aware placement from the node labels\n");
  else
    out << "\nScheduler: Slurm " << (c0.backfill ? "sched/backfill" : "sched/builtin") << " ("
        << fmt::format("bf_interval {:g} s, bf_window {:g} min, bf_max_job_test {}", c0.bf_interval_s,
                       c0.bf_window_s / 60, c0.bf_max_job_test)
        << "), " << (c0.multifactor ? "priority/multifactor" : "priority/basic") << "; from " << conf_note << "\n";
  out << "Workload:  " << workload_note;
  if (f.days > 0) out << fmt::format(", {:g} days", f.days);
  out << "\n";
  for (const auto& r : c0.reservations)
    out << fmt::format("Reserved:  {} ({}{} nodes {}, {} to {})\n", r.name, r.capacity_block ? "Capacity Block, " : "",
                       r.nodes.size(), orch::hostlist(layout, r.nodes), hours(r.start_s), hours(r.end_s));
  if (o.failures.rate_per_node_hour > 0)
    out << fmt::format("Failures:  {:.3g} per 1000 node-days, detect {}, repair {}, {} spares (swap {}), restart {}\n",
                       o.failures.rate_per_node_hour * 24000, f.detect, f.repair, f.spares, f.replace, f.restart);
  out << "\n";
  print_comparison(out, variants, sums);
  if (placed.model) print_training(out, layout, results[0], placed, variants[0].name);
  if (fleet) print_fleet(out, *fleet);
  out << "\nSimulated in";
  for (std::size_t i = 0; i < variants.size(); ++i) out << fmt::format(" {:.2f} s ({})", walls[i], variants[i].name);
  out << ".\n";
}

std::string cluster_jobs_csv(const jobspec::ClusterJob& job, const jobspec::ClusterRun& run) {
  const auto& layout = job.layout;
  const auto& r = run.results[0];
  std::string out = "JobID,State,Submit,Start,End,Wait,NNodes,NodeList,Requeues,Backfilled,LostGPUHours\n";
  for (const auto& j : r.jobs)
    out += fmt::format("{},{},{},{},{},{},{},\"{}\",{},{},{:.4f}\n", j.id, orch::to_string(j.state), j.submit_s,
                       j.first_start_s, j.end_s, j.wait_s, j.nodes.size(), orch::hostlist(layout, j.nodes), j.requeues,
                       j.backfilled ? 1 : 0, j.lost_node_s * layout.gpus_per_node / 3600.0);
  return out;
}

}  // namespace fmsim::documents
