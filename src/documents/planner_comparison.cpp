// `fmsim validate planner` as a JSON document and text (documents/planner_comparison.hpp).
#include "documents/planner_comparison.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "documents/json_values.hpp"
#include "documents/text_table.hpp"
#include "documents/validation_summary.hpp"

namespace fmsim::documents {

using nlohmann::json;

json planner_comparison_json(const std::string& command, const std::string& file,
                             const std::vector<planner::PublishedComparison>& lines) {
  json arr = json::array();
  for (const auto& l : lines) {
    arr.push_back({{"model", l.model},
                   {"system", l.system},
                   {"gpus", l.gpus},
                   {"seq_len", l.seq_len},
                   {"global_batch", l.global_batch},
                   {"precision", l.precision},
                   {"published_layout", l.published_layout},
                   {"published_predicted_step_s", l.published_step_s},
                   {"published_fits_memory", l.published_fits},
                   {"measured_step_s", finite_or_null(l.measured_step_s)},
                   {"planner_layout", l.planner_layout},
                   {"planner_predicted_step_s", finite_or_null(l.planner_step_s)},
                   {"ratio", finite_or_null(l.planner_step_s / l.published_step_s)},
                   {"verdict", l.verdict}});
  }
  // The summary every validate command prints: groups, those the planner placed, and the error of
  // the published layout's prediction against its measured step time.
  std::vector<double> abs_errors;
  std::size_t placed = 0, as_fast = 0;
  for (const auto& l : lines) {
    placed += std::isfinite(l.planner_step_s) ? 1 : 0;
    as_fast += l.planner_at_least_as_fast() ? 1 : 0;
    if (std::isfinite(l.measured_step_s) && l.measured_step_s > 0)
      abs_errors.push_back(std::abs(l.published_step_s / l.measured_step_s - 1.0) * 100.0);
  }
  return {{"command", command},
          {"file", file},
          {"groups", arr},
          {"summary", validation_summary(lines.size(), placed, abs_errors, {{"planner_at_least_as_fast", as_fast}})}};
}

void print_planner_comparison(std::ostream& out, const std::vector<planner::PublishedComparison>& lines,
                              bool markdown) {
  std::size_t at_least_as_fast = 0;
  for (const auto& l : lines) at_least_as_fast += l.planner_at_least_as_fast();
  if (markdown) {
    out << "| model | system | GPUs | seq | GBS | prec | best published layout | predicted (s) | planner's best "
           "| predicted (s) | planner/published | verdict |\n";
    out << "|---|---|--:|--:|--:|---|---|--:|---|--:|--:|---|\n";
    for (const auto& l : lines) {
      out << fmt::format(
          "| {} | {} | {} | {} | {} | {} | {}{} | {:.3f} | {} | {} | {} | {} |\n", l.model, l.system, l.gpus, l.seq_len,
          l.global_batch, l.precision, l.published_layout, l.published_fits ? "" : " (OOM in model)",
          l.published_step_s, l.planner_layout,
          std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
          std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s) : "-",
          l.verdict);
    }
  } else {
    TextTable t({{"MODEL"},
                 {"SYSTEM"},
                 {"GPUS", true},
                 {"PUBLISHED (BEST)"},
                 {"PRED s", true},
                 {"PLANNER"},
                 {"PRED s", true},
                 {"RATIO", true},
                 {"VERDICT"}});
    for (const auto& l : lines) {
      t.add({l.model, l.system, std::to_string(l.gpus), l.published_layout + (l.published_fits ? "" : " (OOM)"),
             fmt::format("{:.3f}", l.published_step_s), l.planner_layout,
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s) : "-",
             std::isfinite(l.planner_step_s) ? fmt::format("{:.3f}", l.planner_step_s / l.published_step_s) : "-",
             l.verdict});
    }
    t.print(out);
  }
  out << fmt::format(
      "\n{} of {} groups: the planner's best is at least as fast as the best published layout "
      "(both predicted).\n",
      at_least_as_fast, lines.size());
}

}  // namespace fmsim::documents
