// `fmsim cluster`'s replays: the resolved job (jobspec/cluster.hpp) under each of its policies on
// the Slurm/Kueue twin, and, with serving deployments, the batch jobs alone for what sharing the
// cluster costs them. What the command prints of it is documents/cluster.hpp's.
#pragma once

#include <optional>
#include <vector>

#include "jobspec/cluster.hpp"
#include "jobspec/cluster_report.hpp"
#include "orchestration/cluster_metrics.hpp"
#include "orchestration/slurm_simulator.hpp"

namespace fmsim::jobspec {

/// Each policy's replay of the job, in the order of ClusterJob::policies.
struct ClusterRun {
  std::vector<orchestration::SimulationResult> results;
  std::vector<orchestration::ClusterSummary> summaries;
  std::vector<double> wall_s;        ///< wall-clock seconds each replay took
  std::optional<FleetReport> fleet;  ///< with serving deployments: the first policy's shared fleet
};

/// Replays `job` under every policy, then (with deployments) its batch jobs alone under the first.
ClusterRun replay_cluster(const ClusterJob& job);

}  // namespace fmsim::jobspec
