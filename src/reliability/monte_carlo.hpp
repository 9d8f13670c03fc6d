// Monte Carlo simulation of a whole training run under failures, replicated many times.
//
// Each replication walks the run as a renewal process at job level: it draws the time to the next
// interruption (exponential, or Weibull with the given shape and the same mean), books the
// compute, snapshots and losses between interruptions in closed form (no per-checkpoint or
// per-GPU events), then plays the recovery: detect, take a spare (or wait for the earliest
// repaired node when the pool is empty), restart, load. An interruption during recovery restarts
// it. Cost per replication is O(interruptions), so a 90-day run of a 100,000-GPU job
// (~7,000 interruptions) takes well under a millisecond.
//
// Determinism: replication i draws from its own xoshiro256** stream seeded by splitmix64(seed, i)
// and results are reduced in replication order, so output is identical for any thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "reliability/goodput.hpp"

namespace fmsim::reliability {

struct MonteCarloOptions {
  int replications = 1000;
  std::uint64_t seed = 20240723;  ///< default: fixed, so runs repeat
  int threads = 2;
};

/// Mean ETTR and time split over the replications, with the standard deviation and 95% CI of ETTR.
GoodputResult simulate_goodput(const GoodputScenario& scenario, const MonteCarloOptions& options);

/// One replication of the run as it unfolds, for metrics over simulated time.
struct RunTimeline {
  enum class Phase {
    Working,   ///< from `start`: [interval compute][blocking snapshot] repeated (first snapshot at start + interval)
    Snapshot,  ///< a snapshot taken before a planned interruption
    Detect,    ///< from the fault to the decision to restart
    Wait,      ///< waiting for a repaired node (spare pool empty)
    Restart,   ///< swap a spare in, relaunch and re-initialise
    Load,      ///< restore the state
  };
  struct Segment {
    Phase phase = Phase::Working;
    double start = 0.0;  ///< seconds from the start of the run
    double end = 0.0;
  };
  struct Interruption {
    double time = 0.0;
    int cause = 0;              ///< index into the scenario's failure causes
    double lost_seconds = 0.0;  ///< compute thrown away (rolled back to the last restorable snapshot)
  };
  std::vector<Segment> segments;            ///< in time order, covering [0, horizon)
  std::vector<Interruption> interruptions;  ///< in time order
  double interval = 0.0;                    ///< compute between snapshots (effective interval)
  double blocking = 0.0;                    ///< stall per snapshot
  double persist = 0.0;                     ///< from a snapshot's start until restorable (>= blocking)
  TimeSplit time;                           ///< this replication's split (adds up to the horizon)
};

/// Replication 0 of simulate_goodput(scenario, {.seed = seed}) with its timeline recorded: the same
/// draws, so its time split is that replication's.
RunTimeline simulate_timeline(const GoodputScenario& scenario, std::uint64_t seed);

}  // namespace fmsim::reliability
