// The scheduler settings of a slurm.conf, with Slurm 22.05's defaults (config/slurm_conf.hpp reads
// the file into them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/fair_share.hpp"
#include "orchestration/node_select.hpp"
#include "orchestration/reservation.hpp"

namespace fmsim::orchestration {

/// PreemptMode (slurm.conf(5)): what happens to a preempted job (GANG and SUSPEND are not modelled).
enum class PreemptMode { Off, Cancel, Requeue };
inline constexpr core::Word<PreemptMode> kPreemptModeWordList[] = {
    {PreemptMode::Off, "OFF"},
    {PreemptMode::Cancel, "CANCEL"},
    {PreemptMode::Requeue, "REQUEUE"},
};
inline constexpr core::Vocabulary<PreemptMode> kPreemptModeWords{"PreemptMode", kPreemptModeWordList};

struct PartitionConfig {
  std::string name;
  std::vector<int> nodes;  ///< node indices; empty = every node (Nodes=ALL)
  bool is_default = false;
  double max_time_s = 0;                    ///< MaxTime; 0 = UNLIMITED
  double default_time_s = 0;                ///< DefaultTime; 0 = MaxTime
  int priority_tier = 1;                    ///< PriorityTier: scheduled first, may preempt lower tiers
  int priority_job_factor = 1;              ///< PriorityJobFactor: the partition factor of multifactor
  std::optional<PreemptMode> preempt_mode;  ///< PreemptMode= on the partition (none = cluster-wide)
  double grace_time_s = 0;                  ///< GraceTime: a preempted job's time to go before SIGTERM
};

struct QosConfig {
  std::string name;
  int priority = 0;
  std::vector<std::string> preempt;  ///< QOS this one may preempt
  double grace_time_s = 0;           ///< GraceTime (sacctmgr): under preempt/qos, a victim's grace
};

/// SchedulerType: the backfill loop on top of the main loop, or the main loop alone (strict FIFO).
enum class SchedulerType { Backfill, Builtin };
/// The words of `fmsim cluster --policy` and --compare.
inline constexpr core::Word<SchedulerType> kSchedulerTypeWordList[] = {
    {SchedulerType::Backfill, "backfill"},
    {SchedulerType::Builtin, "fifo", "builtin"},
};
inline constexpr core::Vocabulary<SchedulerType> kSchedulerTypeWords{"scheduling policy", kSchedulerTypeWordList};
/// PriorityType: submit order, or the weighted multifactor sum.
enum class PriorityType { Basic, Multifactor };
/// The words of `fmsim cluster --compare`.
inline constexpr core::Word<PriorityType> kPriorityTypeWordList[] = {
    {PriorityType::Basic, "basic"},
    {PriorityType::Multifactor, "multifactor"},
};
inline constexpr core::Vocabulary<PriorityType> kPriorityTypeWords{"priority type", kPriorityTypeWordList};

/// PreemptType (slurm.conf(5)): which jobs may preempt which.
enum class PreemptType { None, PartitionPrio, Qos };
inline constexpr core::Word<PreemptType> kPreemptTypeWordList[] = {
    {PreemptType::None, "preempt/none"},
    {PreemptType::PartitionPrio, "preempt/partition_prio"},
    {PreemptType::Qos, "preempt/qos"},
};
inline constexpr core::Vocabulary<PreemptType> kPreemptTypeWords{"PreemptType", kPreemptTypeWordList};

/// What slurmctld's schedulers use. Times in seconds unless named otherwise.
struct SlurmConfig {
  bool backfill = true;      ///< SchedulerType=sched/backfill (else sched/builtin: strict FIFO)
  bool multifactor = false;  ///< PriorityType=priority/multifactor (else priority/basic)
  // SchedulerParameters (slurm.conf(5), 22.05 defaults)
  double bf_interval_s = 30;
  double bf_window_s = 1440 * 60.0;  ///< bf_window is in minutes
  int bf_max_job_test = 500;
  double bf_resolution_s = 60;
  double sched_interval_s = 60;
  int default_queue_depth = 100;  ///< jobs the event-triggered main loop tests
  /// From a node failure or return, a preemption or a reservation edge to the main loop's pass.
  double main_delay_s = 0.1;
  /// SchedulerParameters sched_min_interval (microseconds in the file): the least time between
  /// two main-loop passes (job_scheduler.c, _sched_agent); 22.05's default is 2 us.
  double sched_min_interval_s = 2e-6;
  /// SchedulerParameters batch_sched_delay: the background thread asks for a batch submission's
  /// pass only when this many whole seconds have passed since it last asked (controller.c).
  double batch_sched_delay_s = 3;
  /// Where in each second slurmctld's background thread wakes (unknown: the middle).
  double background_phase = 0.5;
  /// A finished job's nodes stay COMPLETING until slurmd reports its epilog done; the report
  /// asks for a main-loop pass. On loopback (slurmctld.log of the differential runs, 2026-11-28)
  /// the nodes of a finished job were taken 0.022 s and 0.053 s after its "_job_complete ...
  /// done" line, and a job submitted 0.066 s after one was not started by the report's pass.
  double completing_s = 0.05;
  /// Where in each second the backfill thread checks for work, as a fraction of the second (its
  /// checks fall a whole number of seconds apart: backfill.c, backfill_agent): the phase of a real
  /// daemon's thread is unknown, the middle is its expectation.
  double bf_phase = 0.5;
  // Multifactor priority
  double weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0, weight_qos = 0;
  double max_age_s = 7 * 86400.0;  ///< PriorityMaxAge
  bool favor_small = false;        ///< PriorityFavorSmall
  /// CPUs of all nodes (NodeName CPUs=); > 0 adds the CPU half of the job-size factor:
  /// size = (nodes/N + cpus/total_cpus) / 2 (or (N-nodes)/N and (total-cpus)/total with
  /// PriorityFavorSmall), as priority/multifactor computes it.
  long total_cpus = 0;
  double decay_half_life_s = 7 * 86400.0;  ///< PriorityDecayHalfLife (fair-share usage decay)
  double calc_period_s = 300;              ///< PriorityCalcPeriod (minutes in the file)
  // Preemption
  PreemptType preempt_type = PreemptType::None;
  PreemptMode preempt_mode = PreemptMode::Off;
  // Placement
  Placement placement = Placement::Consecutive;  ///< from TopologyPlugin
  std::vector<PartitionConfig> partitions;
  std::vector<QosConfig> qos;
  /// slurmdbd's association tree (accounts, users, Fairshare= shares); jobs of users it lacks get
  /// an association of 1 share under their account (the account under root), as sacctmgr would add.
  FairShareTree associations;
  bool fair_tree = true;                  ///< PriorityFlags without NO_FAIR_TREE (Fair Tree, 19.05+ default)
  std::vector<Reservation> reservations;  ///< advance reservations and Capacity Blocks (--reservations)
  bool requeue_default = true;            ///< JobRequeue=1 (Slurm's default)
  double kill_wait_s = 30;                ///< KillWait: between SIGTERM and SIGKILL (time limit, preemption)
  double over_time_limit_s = 0;           ///< OverTimeLimit (minutes in the file)
  /// slurmctld checks time limits every PERIODIC_TIMEOUT (30 s, slurmctld.h) from its background
  /// thread; 0 = at the limit itself (an idealisation for unit tests).
  double time_limit_check_s = 30;
  /// Where those checks fall in their 30 s period, from time 0 (unknown: the middle).
  double time_limit_phase_s = 15;

  [[nodiscard]] int partition_index(const std::string& name) const;  ///< "" = default; -1 when absent
  [[nodiscard]] int qos_index(const std::string& name) const;        ///< -1 when absent
};

}  // namespace fmsim::orchestration
