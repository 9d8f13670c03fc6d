// Goodput of a training job under failures: a scenario (failure process, checkpoint strategy,
// recovery path) and its analytic effective training time ratio (ETTR).
//
// Timeline: the job computes for `interval`, then stalls `blocking` to snapshot; a snapshot is
// restorable `persist` after it starts (sync: persist = blocking; async/in-memory: the copy
// blocks, the write to the tier runs in the background). An interruption triggers recovery:
//   detect -> [replacement: swap a spare in, or wait for a repaired node] -> restart and
//   re-initialise -> load state -> recompute what was lost.
// Lost work: back to the last restorable snapshot, except
//   - planned interruptions: a snapshot is taken first, nothing is lost;
//   - peer recovery (a replacement failure with a healthy data-parallel replica): the new node
//     pulls its state from the replica, only the step in flight is lost.
// Wall-clock time is split into useful compute, checkpoint stalls, restart (detect, swap,
// re-initialise, load), lost work (compute thrown away) and waiting (for a replacement node).
//
// Analytic model: Daly's renewal argument for exponential failures, generalised to a mix of
// recovery times (a failure during recovery restarts it): per segment of P = interval + blocking,
//   E[wall] = P + e^{lP} E[X; X<P] + (e^{lP} - 1) E_rec,   E_rec = sum p_c (1-e^{-l R_c}) / (l sum p_c e^{-l R_c})
// which reduces to Daly's T_w = M e^{R/M}(e^{P/M} - 1) for one recovery time. Planned and
// peer-recovered interruptions and the async persist lag enter to first order. Waiting for spares
// is not in the analytic model (the Monte Carlo has it).
#pragma once

#include <string>

#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "reliability/failure_model.hpp"

namespace fmsim::reliability {

enum class CheckpointStrategy {
  SyncDisk,     ///< training stalls for the whole save
  AsyncDisk,    ///< stalls for the GPU-to-host copy; the write runs in the background
  InMemory,     ///< snapshot to host DRAM, replicated to peers; restore from a peer's memory
  PeerReplica,  ///< replacement failures restore from a data-parallel replica; disk checkpoints otherwise
};

/// The words of --strategy (checkpoint, goodput, run).
inline constexpr core::Word<CheckpointStrategy> kCheckpointStrategyWordList[] = {
    {CheckpointStrategy::SyncDisk, "sync"},
    {CheckpointStrategy::AsyncDisk, "async"},
    {CheckpointStrategy::InMemory, "in-memory", "memory"},
    {CheckpointStrategy::PeerReplica, "peer"},
};
inline constexpr core::Vocabulary<CheckpointStrategy> kCheckpointStrategyWords{"checkpoint strategy",
                                                                               kCheckpointStrategyWordList};

/// "sync", "async", "in-memory", "peer".
std::string to_string(CheckpointStrategy s);

/// Recovery path costs.
struct RecoveryCosts {
  core::Seconds detect{};   ///< from the fault to the decision to restart (timeouts, health checks)
  core::Seconds replace{};  ///< swap a hot spare into the job
  core::Seconds restart{};  ///< relaunch and re-initialise (scheduler, containers, NCCL, data loaders)
  int spares = -1;          ///< hot spare nodes; -1 = never short of one
  core::Seconds repair{};   ///< mean time until a failed node is back in the spare pool
};

/// Checkpoint timing of the chosen strategy.
struct CheckpointTiming {
  core::Seconds interval{};  ///< compute time between snapshots
  core::Seconds blocking{};  ///< stall per snapshot
  core::Seconds persist{};   ///< from snapshot start until restorable (>= blocking)
  core::Seconds load{};      ///< restore from the snapshot
};

/// Everything the goodput models need.
struct GoodputScenario {
  JobFailureProcess failures;
  RecoveryCosts recovery;
  CheckpointTiming checkpoint;
  bool peer_recovery = false;  ///< replacement failures restore from a data-parallel replica
  core::Seconds peer_load{};   ///< time for a new node to pull its state from a replica
  core::Seconds step_time{};   ///< one training step (lost on peer recovery); 0 = negligible
  core::Seconds horizon{};     ///< wall-clock length of the run
  int gpus = 0;
  double weibull_shape = 1.0;  ///< job-level inter-arrival shape (1 = exponential); Monte Carlo only
};

/// Wall-clock split of a run (seconds; they add up to the horizon).
struct TimeSplit {
  double useful = 0.0;
  double checkpoint = 0.0;
  double restart = 0.0;
  double lost_work = 0.0;
  double waiting = 0.0;
  [[nodiscard]] double total() const { return useful + checkpoint + restart + lost_work + waiting; }
};

struct GoodputResult {
  double ettr = 0.0;           ///< useful / wall-clock
  TimeSplit time;              ///< per run
  double interruptions = 0.0;  ///< expected per run
  // Monte Carlo only:
  double ettr_stddev = 0.0;
  double ettr_ci95 = 0.0;  ///< half-width of the 95% confidence interval of the mean
  int replications = 0;
};

/// The analytic ETTR and time split of `scenario`.
GoodputResult analytic_goodput(const GoodputScenario& scenario);

/// The interval that maximises the analytic ETTR (golden-section search).
core::Seconds optimal_interval(const GoodputScenario& scenario);

/// Effective compute interval: an async save cannot start before the previous one is restorable.
core::Seconds effective_interval(const CheckpointTiming& t);

}  // namespace fmsim::reliability
