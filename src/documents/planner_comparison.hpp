// `fmsim validate planner` (and `plan --against-csv`) as documents: for each group of published
// runs, the best published layout and the planner's best, both predicted, and the verdict.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "planner/published_comparison.hpp"

namespace fmsim::documents {

/// The groups, and the `summary` every validate command shares (the error of the published
/// layout's prediction against its measured step time; groups the planner placed; groups where
/// it is at least as fast). `command` and `file` are echoed.
nlohmann::json planner_comparison_json(const std::string& command, const std::string& file,
                                       const std::vector<planner::PublishedComparison>& lines);

/// The groups as a table (or, with `markdown`, docs/validation.md's table) and the count of
/// groups where the planner's best is at least as fast.
void print_planner_comparison(std::ostream& out, const std::vector<planner::PublishedComparison>& lines, bool markdown);

}  // namespace fmsim::documents
