// The plan as a readable report: a report::Document with the ranked layouts per system, the
// step-time breakdown, memory against capacity, scaling over GPU counts and systems side by side.
#pragma once

#include <string>

#include "planner/planner.hpp"
#include "report/document.hpp"

namespace fmsim::planner {

/// Text around the numbers that the planner cannot know by itself.
struct PlanReportContext {
  std::string command_line;      ///< shown in the footer, e.g. "fmsim plan --model llama3.1-70b ..."
  std::string calibration_note;  ///< e.g. where the calibration came from; may be empty
};

/// Builds the report. Sections: summary (key figures and the best layout per system), systems side
/// by side (time and cost to train), step-time breakdown of the top layouts, memory per GPU
/// against usable HBM, scaling over GPU counts (when plan.scaling is filled), the ranked layouts
/// of each system, and how the numbers were computed. Deterministic: the same plan gives the
/// same document.
report::Document build_plan_report(const PlanRequest& request, const Plan& plan, const PlanReportContext& context);

}  // namespace fmsim::planner
