// `fmsim rl`'s runs on the loaded models (jobspec/rl.hpp): the placement search and one step with
// its trace. What the command prints of them is documents/rl.hpp's.
#pragma once

#include <vector>

#include "jobspec/rl.hpp"
#include "planner/rl_plan.hpp"
#include "rl/rl_step.hpp"

namespace fmsim::jobspec {

/// The placement search (--plan): the best ten feasible candidates, and how long it took.
struct RlPlanRun {
  std::vector<planner::RlPlanCandidate> candidates;
  double search_ms = 0;  ///< wall-clock milliseconds
};
RlPlanRun plan_rl_job(const rl::RlJob& job, const RlModels& models);

/// One step of the job, with its phases as trace events when `trace`; an InputError naming the
/// flag that made the step infeasible.
struct RlStepRun {
  rl::RlStepResult result;
  double elapsed_ms = 0;                   ///< wall-clock milliseconds of the prediction
  std::vector<engine::TraceEvent> events;  ///< when traced (engine/trace.hpp comes with rl/rl_step.hpp)
};
RlStepRun run_rl_step(const rl::RlJob& job, const RlModels& models, bool trace);

}  // namespace fmsim::jobspec
