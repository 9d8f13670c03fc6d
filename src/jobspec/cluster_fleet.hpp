// Serving deployments of `fmsim cluster` resolved into what the cluster replays: each entry's
// per-replica steady state from the serving model (the largest rate one replica sustains under
// its SLO and its latency there, planner::max_rate_under_slo, as `fmsim serve` and `fmsim
// plan-serve` compute it), its cold start from the storage model, its offered rate over the
// horizon, its autoscaler, and the serving partitions of the scheduler. Orchestration receives
// typed values (orchestration::ServingDeployment) and links no serving code.
#pragma once

#include <string>
#include <vector>

#include "config/deployments.hpp"
#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/serving_fleet.hpp"
#include "orchestration/slurm_config.hpp"

namespace fmsim::jobspec {

/// Diurnal rates are held constant over steps this long (sampled at each step's middle).
inline constexpr double kDiurnalStepS = 600;

/// The offered rate of `e` over [0, horizon) as steps.
std::vector<orchestration::Step> offered_rate(const config::DeploymentEntry& e, double horizon_s);

/// Each entry against the catalog and the serving model on the cluster's system; InputError naming
/// the entry's file:line (or --deployment) and field.
std::vector<orchestration::ServingDeployment> resolve_deployments(const std::vector<config::DeploymentEntry>& entries,
                                                                  const hardware::ClusterSpec& spec,
                                                                  const hardware::Catalog& catalog, double horizon_s);

/// Adds the serving partitions to `config` and returns each deployment's partition: one partition
/// "serving" of a higher PriorityTier over every node, which preempts (requeues) the jobs of the
/// other partitions (preempt/partition_prio), for the deployments that share the fleet; one
/// partition per reserved deployment over its own nodes (the last nodes of the cluster), taken
/// out of every other partition. InputError naming --deployments when the reserved nodes do not
/// fit or the configuration preempts by QOS.
std::vector<std::string> add_serving_partitions(orchestration::SlurmConfig& config,
                                                const std::vector<orchestration::ServingDeployment>& deployments,
                                                const orchestration::ClusterLayout& layout, const std::string& source);

}  // namespace fmsim::jobspec
