// `fmsim plan` as documents: the layouts the planner ranked on each system (or the best layout
// at each GPU count with --scaling), the best overall and the search's statistics, as a JSON
// document and as text tables.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "planner/planner.hpp"

namespace fmsim::documents {

/// The request (model, GPU counts, sequence, batch, tokens, objective, stack), the search's
/// statistics (`threads` worker threads), each system with its ranked layouts, the best layout
/// and, when swept, the scaling points with their knee.
nlohmann::json plan_json(const planner::PlanRequest& request, const planner::Plan& plan, int threads);

/// The text report: the request and search line, then each system's ranked layouts and the best
/// layout to train `tokens` (as given, e.g. "15T"), or with `scaling` the scaling tables.
void print_plan(std::ostream& out, const planner::PlanRequest& request, const planner::Plan& plan, int threads,
                const std::string& tokens, bool scaling);

}  // namespace fmsim::documents
