// What the cluster documents share (documents/cluster_parts.hpp).
#include "documents/cluster_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace fmsim::documents::cluster_parts {

namespace orch = fmsim::orchestration;
using PlacedTraining = jobspec::PlacedTraining;

std::string placement_name(orch::Placement p) {
  switch (p) {
    case orch::Placement::Tree: return "topology/tree";
    case orch::Placement::Block: return "topology/block";
    case orch::Placement::Consecutive: break;
  }
  return "topology/none";
}

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

std::string scheduler_text(const jobspec::ClusterJob& job) {
  const auto& o = job.policies[0].options;
  const auto& c0 = job.policies[0].config;
  std::set<std::string> cohorts;
  for (const auto& q : o.kueue.queues) cohorts.insert(q.cohort);
  const std::string in = cohorts.size() > 1 ? fmt::format("in {} cohorts", cohorts.size()) : "in one cohort";
  return job.k8s ? fmt::format("Kubernetes + Kueue ({}, {} ClusterQueues {}{})",
                               o.kueue.strict_fifo ? "StrictFIFO" : "BestEffortFIFO",
                               o.kueue.queues.empty() ? std::string("per-team") : std::to_string(o.kueue.queues.size()),
                               in, o.kueue.reclaim_within_cohort ? ", reclaim and priority preemption" : "")
                 : fmt::format("Slurm {} {} ({})", c0.backfill ? "sched/backfill" : "sched/builtin",
                               c0.multifactor ? "priority/multifactor" : "priority/basic", job.conf_note);
}

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

}  // namespace fmsim::documents::cluster_parts
