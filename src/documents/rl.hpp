// `fmsim rl` as documents: one step's phases, batch, layouts, weight sync, utilisation, tokens and
// cost; the placement search's ranked candidates; a test-time-compute method's cost per query; as
// JSON documents and as text.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "jobspec/rl_run.hpp"
#include "rl/test_time.hpp"

namespace fmsim::documents {

/// One step of `job` (`fmsim rl --json`; each candidate of the search).
nlohmann::json rl_step_json(const rl::RlJob& job, const rl::RlStepResult& result);
/// The step as text; `elapsed_ms` is how long the prediction took.
void print_rl_step(std::ostream& out, const rl::RlJob& job, const rl::RlStepResult& result, double elapsed_ms);
/// The step's phases as Chrome/Perfetto trace JSON (--trace-out).
std::string rl_trace_json(const rl::RlJob& job, const jobspec::RlStepRun& run);

/// The placement search (`rl --plan --json`): every candidate's step and the search's time.
nlohmann::json rl_plan_json(const jobspec::RlPlanRun& run);
/// The candidates ranked, one row each (at least one candidate).
void print_rl_plan(std::ostream& out, const rl::RlJob& job, const jobspec::RlPlanRun& run);

/// A test-time-compute method's cost per query (`rl --test-time`), on `job`'s policy.
nlohmann::json ttc_json(const rl::RlJob& job, const rl::TtcJob& ttc, const rl::TtcResult& result);
void print_ttc(std::ostream& out, const rl::RlJob& job, const rl::TtcJob& ttc, const rl::TtcResult& result);

}  // namespace fmsim::documents
