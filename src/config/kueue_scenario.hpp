// Kueue's scheduler performance test scenarios as the twin's input: the generator config of
// kubernetes-sigs/kueue test/performance/scheduler (configs/baseline/generator.yaml: 5 cohorts of
// 6 ClusterQueues, 15,000 workloads; configs/large-scale/generator.yaml: 20 cohorts of 100,
// 60,000 workloads), read the way its runner/generator/generator.go builds the objects:
//
//   cohorts:                      # cohort sets: count cohorts named <className>-<i>
//   - className: cohort
//     count: 5
//     queuesSets:                 # count ClusterQueues per cohort, named <className>-<set>-<i>-<cohort>
//     - className: cq
//       count: 6
//       nominalQuota: 20          # CPUs (the twin: nodes, one per CPU)
//       borrowingLimit: 100       # optional; lendingLimit too
//       reclaimWithinCohort: Any  # Never (Kueue's default) | LowerPriority | Any
//       withinClusterQueue: LowerPriority  # Never (default) | LowerPriority | LowerOrNewerEqualPriority
//       workloadsSets:            # per queue: count rounds, each creating every workload listed,
//       - count: 350              # one every creationIntervalMs (the first after one interval)
//         creationIntervalMs: 100
//         workloads:
//         - {className: small, runtimeMs: 200, priority: 50, request: 1}
//
// A workload is one pod requesting `request` CPUs, its WorkloadPriorityClass value `priority`,
// running runtimeMs from admission; it has no time limit. The twin's cluster is a flat one of as
// many nodes as the queues' nominal quotas add up to (Kueue's test has no nodes: quota alone
// admits). An unknown key or word is an InputError naming the field and the allowed ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"

namespace fmsim::config {

struct KueueScenario {
  std::vector<orchestration::ClusterQueueConfig> queues;
  std::vector<orchestration::JobSpec> jobs;  ///< in creation order, ids from 1; account = ClusterQueue
  int nodes = 0;                             ///< the nominal quotas' sum
};

/// Reads a generator config file; errors name `path`:line and the field.
KueueScenario load_kueue_scenario(const std::string& path);
/// The same from text in memory (`file` names it in errors).
KueueScenario parse_kueue_scenario(std::string_view text, const std::string& file);

}  // namespace fmsim::config
