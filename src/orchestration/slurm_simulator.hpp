// Slurm's scheduler as a discrete-event simulation (slurmctld 22.05's job_scheduler.c main loop
// and backfill.c): jobs are ordered by partition PriorityTier, then priority (priority/basic:
// submission order; priority/multifactor: age, fair-share, job size, partition, QOS, minus nice),
// then submit time and job id. The main loop, run after every submission and completion and every
// sched_interval, starts jobs in that order and stops a partition at its first job that does not
// fit. The backfill loop, every bf_interval, walks up to bf_max_job_test jobs in the same order,
// plans each at the earliest time its nodes are free for its whole time limit (running jobs end
// at their time limits, rounded to bf_resolution) within bf_window, starts it if that time is now
// and otherwise reserves the nodes so that later jobs cannot delay it. Whole-node (exclusive)
// gang allocation: a job starts on all its nodes at once or not at all. Jobs end at their run
// time or are killed at their time limit (TIMEOUT); node failures requeue (or fail) the jobs on
// them; spares replace failed nodes (HyperPod-style auto-resume); higher PriorityTier partitions
// or QOS preempt lower ones (REQUEUE or CANCEL).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/vocabulary.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/slurm_config.hpp"
#include "orchestration/workload.hpp"

namespace fmsim::orchestration {

/// Node failures during the simulation.
struct FailureSettings {
  double rate_per_node_hour = 0.0;  ///< unexpected interruptions per node-hour; 0 = none
  double detect_s = 60;             ///< failure to the job being stopped (health checks)
  double repair_s = 48 * 3600.0;    ///< failed node back in service
  double replace_s = 600;           ///< a spare swapped in for a failed node
  int spares = 0;                   ///< spare nodes held outside the partitions
  double restart_s = 180;           ///< a requeued job's relaunch before useful work resumes
  std::uint64_t seed = 7;
};

/// Kubernetes with Kueue instead of Slurm: one ClusterQueue per team (the job's account) with a
/// nominal quota of nodes, in cohorts; a workload is admitted whole (gang) when what its queue
/// has available covers it (Kueue's pkg/cache resource_node.go available(): its guaranteed quota
/// left, nominal less lendingLimit, plus what the cohort has unused, capped by its
/// borrowingLimit) and topology-aware scheduling (the node labels' tree) places every pod;
/// otherwise it waits (BestEffortFIFO: later workloads that fit go ahead; StrictFIFO: the
/// queue's head blocks it). Workloads are ordered by their WorkloadPriorityClass value, then
/// creation time. Preemption (pkg/scheduler/preemption): a queue within its nominal quota
/// reclaims from queues of its cohort that borrow (reclaimWithinCohort); within a queue a
/// workload evicts lower-priority ones (withinClusterQueue); candidates from other queues first,
/// then lowest priority, then the most recently admitted, and of the set that lets it in those not
/// needed are kept (fill-back). Evicted workloads and those hit by node failures are requeued
/// (their pods restarted from the last checkpoint).
/// Which scheduler the cluster runs.
enum class SchedulerKind { Slurm, Kueue };
/// The words of `fmsim cluster --scheduler`.
inline constexpr core::Word<SchedulerKind> kSchedulerKindWordList[] = {
    {SchedulerKind::Slurm, "slurm"},
    {SchedulerKind::Kueue, "k8s", "kubernetes, kueue"},
};
inline constexpr core::Vocabulary<SchedulerKind> kSchedulerKindWords{"scheduler", kSchedulerKindWordList};
/// A ClusterQueue's queueingStrategy.
enum class KueueQueueing { BestEffortFifo, StrictFifo };
/// The words of `fmsim cluster --queueing`.
inline constexpr core::Word<KueueQueueing> kKueueQueueingWordList[] = {
    {KueueQueueing::BestEffortFifo, "best-effort", "besteffortfifo"},
    {KueueQueueing::StrictFifo, "strict", "strictfifo"},
};
inline constexpr core::Vocabulary<KueueQueueing> kKueueQueueingWords{"queueing strategy", kKueueQueueingWordList};

/// A ClusterQueue's preemption.withinClusterQueue (Kueue's PreemptionPolicy): which workloads of
/// its own queue a pending workload may evict.
enum class WithinClusterQueue { Never, LowerPriority, LowerOrNewerEqualPriority };
inline constexpr core::Word<WithinClusterQueue> kWithinClusterQueueWordList[] = {
    {WithinClusterQueue::Never, "Never"},
    {WithinClusterQueue::LowerPriority, "LowerPriority"},
    {WithinClusterQueue::LowerOrNewerEqualPriority, "LowerOrNewerEqualPriority"},
};
inline constexpr core::Vocabulary<WithinClusterQueue> kWithinClusterQueueWords{"withinClusterQueue",
                                                                               kWithinClusterQueueWordList};
/// A ClusterQueue's preemption.reclaimWithinCohort: which workloads of queues of its cohort that
/// borrow a pending workload within its nominal quota may evict.
enum class ReclaimWithinCohort { Never, LowerPriority, Any };
inline constexpr core::Word<ReclaimWithinCohort> kReclaimWithinCohortWordList[] = {
    {ReclaimWithinCohort::Never, "Never"},
    {ReclaimWithinCohort::LowerPriority, "LowerPriority"},
    {ReclaimWithinCohort::Any, "Any"},
};
inline constexpr core::Vocabulary<ReclaimWithinCohort> kReclaimWithinCohortWords{"reclaimWithinCohort",
                                                                                 kReclaimWithinCohortWordList};

/// A ClusterQueue with one resource (nodes; a CPU of Kueue's performance test stands for a node).
struct ClusterQueueConfig {
  std::string name;
  int nominal_nodes = 0;
  int borrowing_limit = -1;  ///< nodes it may borrow beyond nominal; -1 = unlimited
  int lending_limit = -1;    ///< nodes of its nominal quota the cohort may lend to others; -1 = all of them
  std::string cohort;        ///< spec.cohort; "" = the one cohort every queue without a name shares
  std::optional<WithinClusterQueue> within_cluster_queue;    ///< unset: KueueConfig::within_cluster_queue
  std::optional<ReclaimWithinCohort> reclaim_within_cohort;  ///< unset: KueueConfig::reclaim_within_cohort
};
struct KueueConfig {
  bool enabled = false;
  std::vector<ClusterQueueConfig> queues;  ///< empty: every account gets an equal share
  bool strict_fifo = false;                ///< queueingStrategy StrictFIFO (else BestEffortFIFO)
  bool reclaim_within_cohort = true;       ///< queues without their own: reclaimWithinCohort Any (else Never)
  bool within_cluster_queue = true;        ///< queues without their own: withinClusterQueue LowerPriority (else Never)
};

struct SimulationOptions {
  double horizon_s = 0;  ///< stop at this time (0 = until every job has finished)
  FailureSettings failures;
  double utilisation_bucket_s = 3600;  ///< resolution of the time series
  KueueConfig kueue;                   ///< enabled: Kubernetes + Kueue instead of Slurm's loops
  /// Placement-dependent speed: how many times slower job `job` (index in the input) runs on
  /// `nodes` than on the best nodes for it (>= 1; a training job's step time there over its ideal
  /// one). A job's run_s is its run time at full speed. Empty: every job runs at full speed.
  std::function<double(int job, const std::vector<int>& nodes)> slowdown;
};

enum class JobState { Pending, Running, Completed, Timeout, Cancelled, NodeFail, Preempted };
std::string to_string(JobState state);

/// What happened to one job.
struct JobRecord {
  int id = 0;
  double submit_s = 0;
  double start_s = -1;  ///< last start; -1 = never started
  double first_start_s = -1;
  double end_s = -1;   ///< -1 = still running or pending at the horizon
  double wait_s = -1;  ///< first start - submission (from the exact times); -1 = never started
  JobState state = JobState::Pending;
  std::vector<int> nodes;  ///< of the last start
  int requeues = 0;
  bool backfilled = false;           ///< its (last) start came from the backfill loop
  double lost_node_s = 0;            ///< node-seconds of work lost to failures and preemption
  double useful_node_s = 0;          ///< node-seconds of work kept
  double run_done_s = 0;             ///< seconds of its run completed (checkpointed progress)
  std::uint32_t priority = 0;        ///< at its last start (or at the end if never started); Kueue: class + 2^31
  double slowdown = 1;               ///< run time on its (last) nodes over the run time on the best ones
  double slow_placement_node_s = 0;  ///< node-seconds its placements added to its work (kept work x (slowdown - 1))
  /// (start, end) of each run, for serving replica units (JobSpec::deployment >= 0); end -1 =
  /// running at the end of the replay.
  std::vector<std::pair<double, double>> runs;
};

/// Cluster state over time, one sample per bucket (averages over the bucket).
struct TimeSeries {
  double bucket_s = 3600;
  std::vector<double> busy_nodes;        ///< mean nodes allocated
  std::vector<double> queue_length;      ///< mean pending jobs
  std::vector<double> down_nodes;        ///< mean nodes failed and not yet back
  std::vector<double> fragmented_nodes;  ///< mean free nodes while the top pending job cannot fit
};

struct SimulationResult {
  std::vector<JobRecord> jobs;  ///< in job-id order (same order as the input)
  TimeSeries series;
  double end_s = 0;  ///< time of the last event
  long scheduling_passes = 0, backfill_passes = 0;
  int node_failures = 0, spares_used = 0, preemptions = 0;
  double absent_node_s = 0;  ///< node-seconds of Capacity Block nodes outside their windows
};

/// Which input a workload problem lies in: the cluster, the jobs (their partitions, QOS,
/// reservations and sizes) or the Kueue ClusterQueues.
enum class WorkloadInput { Cluster, Jobs, Queues };

/// Why a workload cannot be replayed: a job that could never run.
struct WorkloadProblem {
  WorkloadInput input;
  std::string message;  ///< e.g. "job 7 asks for 9 nodes; partition gpu has 8"
};

/// The first reason `jobs` cannot be replayed on the layout under `config` and `options`: a
/// cluster without nodes, a job id given twice, a partition, QOS or reservation not defined, more
/// nodes than the job's partition or reservation has, a time limit longer than the reservation's
/// window, a team without a ClusterQueue. None when the workload can run; what reads the workload
/// checks this (simulate_slurm's precondition).
std::optional<WorkloadProblem> find_workload_problem(const ClusterLayout& layout, const SlurmConfig& config,
                                                     const std::vector<JobSpec>& jobs,
                                                     const SimulationOptions& options = {});

/// Replays `jobs` (any order) on the layout under `config`. Precondition: find_workload_problem
/// finds none (else core::InternalError).
SimulationResult simulate_slurm(const ClusterLayout& layout, const SlurmConfig& config, std::vector<JobSpec> jobs,
                                const SimulationOptions& options = {});

/// Kendall's tau-b between two orderings of the same items (ranks by value; ties allowed).
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace fmsim::orchestration
