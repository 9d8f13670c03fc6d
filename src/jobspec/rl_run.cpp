// `fmsim rl`'s runs (jobspec/rl_run.hpp).
#include "jobspec/rl_run.hpp"

#include <chrono>

#include "core/error.hpp"

namespace fmsim::jobspec {
namespace {

double milliseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RlPlanRun plan_rl_job(const rl::RlJob& job, const RlModels& models) {
  const auto t0 = std::chrono::steady_clock::now();
  auto candidates = planner::plan_rl(job, models.training, models.rl, models.engine, 10);
  return {std::move(candidates), milliseconds_since(t0)};
}

RlStepRun run_rl_step(const rl::RlJob& job, const RlModels& models, bool trace) {
  engine::TraceBuffer buffer;
  const auto t0 = std::chrono::steady_clock::now();
  auto result = rl::estimate_rl_step(job, models.training, models.rl, models.engine, trace ? &buffer : nullptr);
  const double ms = milliseconds_since(t0);
  if (!result.feasible) throw core::InputError::flag(infeasible_flag(result.reason), result.reason);
  return {std::move(result), ms, buffer.events()};
}

}  // namespace fmsim::jobspec
