// The "summary" object of every `fmsim validate ... --json`: the same fields in each command.
#pragma once

#include <algorithm>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "jobspec/quantile.hpp"

namespace fmsim::documents {

/// The summary every validate command prints, in this order of meaning:
///   rows                  rows of the measurements CSV
///   predicted             rows the model predicted
///   compared              predictions compared with a measurement (a row may give several)
///   median_abs_error_pct  median |predicted / measured - 1| x 100 over those comparisons
///   p90_abs_error_pct     90th percentile of the same (linear interpolation, jobspec::quantile)
///   max_abs_error_pct     the largest
/// The three errors are null when nothing was compared. A command's own fields (`extra`) follow;
/// they never replace these.
inline nlohmann::json validation_summary(std::size_t rows, std::size_t predicted,
                                         const std::vector<double>& abs_errors_pct,
                                         const nlohmann::json& extra = nlohmann::json::object()) {
  const bool any = !abs_errors_pct.empty();
  auto stat = [&](double v) { return any ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json s{
      {"rows", rows},
      {"predicted", predicted},
      {"compared", abs_errors_pct.size()},
      {"median_abs_error_pct", stat(jobspec::quantile(abs_errors_pct, 0.5))},
      {"p90_abs_error_pct", stat(jobspec::quantile(abs_errors_pct, 0.9))},
      {"max_abs_error_pct", stat(any ? *std::max_element(abs_errors_pct.begin(), abs_errors_pct.end()) : 0.0)}};
  for (const auto& [key, value] : extra.items()) {
    if (!s.contains(key)) s[key] = value;
  }
  return s;
}

}  // namespace fmsim::documents
