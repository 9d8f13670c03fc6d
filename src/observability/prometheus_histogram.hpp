// Prometheus histograms (text format 0.0.4): cumulative `_bucket{le=...}`, `_sum` and `_count`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fmsim::observability {

struct Histogram {
  std::string name;  ///< base name, e.g. "vllm:time_to_first_token_seconds"
  std::string help;
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<double> bounds;      ///< upper bounds, increasing (the +Inf bucket is added)
  std::vector<double> cumulative;  ///< observations <= each bound (same length as bounds)
  double sum = 0;
  double count = 0;
};

/// Cumulative bucket counts of `values` at `bounds`.
std::vector<double> cumulative_counts(const std::vector<double>& values, const std::vector<double>& bounds);

/// Renders the histograms: one HELP and TYPE line each, then buckets, +Inf, _sum and _count.
std::string to_prometheus_histograms(const std::vector<Histogram>& histograms);

}  // namespace fmsim::observability
