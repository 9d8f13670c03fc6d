// The RL placement search (`fmsim rl --plan`, `fmsim plan --rl`): colocated or disaggregated
// placement, generation TP and training layouts (TP, PP) of one RL job, ranked by step time
// (objective Time, planner/ranking.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "planner/ranking.hpp"
#include "rl/calibration.hpp"
#include "rl/rl_step.hpp"
#include "rl/rollout.hpp"
#include "training/calibration.hpp"

namespace fmsim::planner {

/// One candidate of the placement search.
struct RlPlanCandidate {
  rl::RlJob job;
  rl::RlStepResult result;
};

/// Where a candidate ranks (objective Time): feasible (the step runs and training fits memory)
/// first, then the shorter step.
RankKey rank_key(const RlPlanCandidate& candidate);

/// Searches placement (colocated, disaggregated with generator shares of 1/4..3/4 in whole
/// nodes), generation TP and training layouts (TP, PP) for the shortest feasible step, at the
/// job's synchrony (off-policy and fully-async jobs consider separate pools only).
/// Returns the feasible candidates ranked by rank_key, at most `keep`.
std::vector<RlPlanCandidate> plan_rl(const rl::RlJob& base, const training::Calibration& calibration,
                                     const rl::RlCalibration& cal, const rl::RolloutEngine& engine,
                                     std::size_t keep = 10);

}  // namespace fmsim::planner
