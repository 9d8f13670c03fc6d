// The shared cluster of `fmsim cluster` from its flag values: the layout (catalog, slurm.conf,
// topology.conf), the scheduler's configuration (Slurm or Kubernetes with Kueue), the workload
// (a trace or a synthetic mix, training jobs timed through the step model on the nodes they get),
// failures and spares, and the policies of --compare, each a full configuration run side by side.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/placed_training.hpp"
#include "orchestration/serving_fleet.hpp"
#include "orchestration/slurm_config.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"

namespace fmsim::jobspec {

/// Raw flag values; the defaults are those of `fmsim cluster`.
struct ClusterFlags {
  std::string cluster = "p5en.48xlarge:128";
  std::string scheduler = "slurm";  ///< a word of orchestration::kSchedulerKindWords
  std::string slurm_conf;
  std::string topology_conf;
  std::string placement;  ///< a word of orchestration::kPlacementWords (overrides TopologyPlugin)
  std::string policy;     ///< a word of orchestration::kSchedulerTypeWords (overrides SchedulerType)
  std::string trace;
  std::vector<std::string> trace_map;
  double limit_factor = 2.0;
  int synthetic = 0;
  std::string arrival = "5m";
  std::uint64_t seed = 1;
  double days = 0;
  std::vector<std::string> compare;
  std::string node_failure_rate;
  int spares = 0;
  std::string detect = "1m", repair = "48h", replace = "10m", restart = "3m";
  std::string checkpoint;                ///< checkpoint interval for jobs without one
  std::vector<std::string> queues;       ///< k8s: TEAM=NODES[:BORROW]
  std::string kueue_scenario;            ///< k8s: a Kueue performance-test generator config (config/kueue_scenario.hpp)
  std::string queueing = "best-effort";  ///< a word of orchestration::kKueueQueueingWords
  bool no_preemption = false;
  std::string associations;               ///< sacctmgr dump (accounts, users, Fairshare=)
  std::string reservations_file;          ///< reservation lines (scontrol syntax)
  std::vector<std::string> reservations;  ///< --reservation LINE, repeatable
  std::string sigterm_checkpoint;         ///< jobs write a checkpoint on SIGTERM in this long
  std::string deployments_file;           ///< serving deployments (config/deployments.hpp)
  std::vector<std::string> deployments;   ///< --deployment KEY=VALUE,..., repeatable
};

/// The knobs of a --compare entry written KEY=VALUE.
enum class CompareKnob {
  Spares,        ///< spares=N: spare nodes
  BfWindow,      ///< bf_window=MIN: backfill window in minutes
  BfMaxJobTest,  ///< bf_max_job_test=N
  BfInterval,    ///< bf_interval=S: seconds between backfill passes
};
inline constexpr core::Word<CompareKnob> kCompareKnobWordList[] = {
    {CompareKnob::Spares, "spares"},
    {CompareKnob::BfWindow, "bf_window"},
    {CompareKnob::BfMaxJobTest, "bf_max_job_test"},
    {CompareKnob::BfInterval, "bf_interval"},
};
inline constexpr core::Vocabulary<CompareKnob> kCompareKnobWords{"--compare setting", kCompareKnobWordList};

/// One scheduling policy of the comparison: a whole scheduler configuration.
struct ClusterPolicy {
  std::string name;
  orchestration::SlurmConfig config;
  orchestration::SimulationOptions options;
  int spares = 0;
};

/// Training jobs of the workload (trace rows with a model): each distinct (model, layout, batch,
/// sequence, nodes) gets one step model; its ideal step time (on the best nodes) sets the job's
/// run time, and the simulator asks for its slowdown on the nodes each start gets.
struct PlacedTraining {
  orchestration::ClusterLayout layout;  ///< the cluster's layout, which `model` refers to
  std::unique_ptr<orchestration::PlacedStepModel> model;
  std::vector<int> handle;         ///< per job (input order); -1 = not a training job
  std::vector<double> ideal_step;  ///< per handle, s
  std::vector<std::string> label;  ///< per handle: model and layout
};

/// Everything `fmsim cluster` simulates.
struct ClusterJob {
  hardware::ClusterSpec spec;
  orchestration::ClusterLayout layout;
  bool k8s = false;           ///< Kubernetes with Kueue instead of Slurm
  std::string conf_note;      ///< where the Slurm configuration came from
  std::string workload_note;  ///< what the workload is
  std::vector<orchestration::JobSpec> jobs;
  /// Shared with the policies' slowdown functions, so it outlives moves of the job.
  std::shared_ptr<const PlacedTraining> placed;
  std::vector<ClusterPolicy> policies;  ///< the flags' own first, then one per --compare entry
  /// Serving deployments sharing the cluster (--deployments, --deployment); their replica units
  /// are jobs[batch_jobs ...] (JobSpec::deployment), replayed over [0, fleet_horizon_s).
  std::vector<orchestration::ServingDeployment> deployments;
  std::size_t batch_jobs = 0;
  double fleet_horizon_s = 0;
  /// The first policy without the serving partitions: the batch jobs alone, for what serving costs them.
  orchestration::SlurmConfig training_alone;
};

/// The flags resolved against the catalog and the files they name; InputError naming the flag (or
/// the file and line) on anything wrong.
ClusterJob resolve_cluster_job(const ClusterFlags& flags, const hardware::Catalog& catalog);

/// One --compare entry applied on top of `base`: fifo, backfill, basic, multifactor, consecutive,
/// tree, block, spares=N, bf_window=MIN, bf_max_job_test=N, bf_interval=S.
ClusterPolicy apply_compare_entry(ClusterPolicy base, const std::string& entry,
                                  const orchestration::ClusterLayout& layout);

}  // namespace fmsim::jobspec
