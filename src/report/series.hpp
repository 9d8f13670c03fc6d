// Time series made readable for a chart: equal-width buckets merged into fewer, wider ones.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace fmsim::report {

/// A series of equal-width bucket means merged `factor` buckets at a time.
struct CoarseSeries {
  std::size_t factor = 1;    ///< input buckets per output bucket
  std::vector<double> mean;  ///< mean of each group of `factor` inputs (the last group may be shorter)
};

/// Merges consecutive buckets so that at most `max_points` remain (max_points >= 1). The factor is
/// the smallest of 1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 168, 336, 720 (whole hours, days and weeks
/// for hourly input) that gets there, else ceil(size / max_points). Each output value is the mean
/// of its inputs, so with equal-width inputs it is the time-weighted mean over the wider bucket.
CoarseSeries coarsen(std::span<const double> values, std::size_t max_points);

}  // namespace fmsim::report
