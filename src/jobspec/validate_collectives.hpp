// The rows of validation/collectives.csv (nccl-tests busbw or time) predicted with the collectives
// model, and their errors against the targets of docs/models/collectives.md. `fmsim validate
// collectives` prints what this returns.
#pragma once

#include <string>
#include <vector>

#include "collectives/calibration.hpp"
#include "config/collectives_csv.hpp"
#include "hardware/catalog.hpp"

namespace fmsim::jobspec {

/// Targets of the collective model (docs/models/collectives.md): the median |error| over all rows,
/// and the band each large-message (>= 64 MiB busbw) or small-message/latency row must be within.
inline constexpr double kCollectiveMedianTargetPct = 10.0;
inline constexpr double kCollectiveLargeTargetPct = 15.0;
inline constexpr double kCollectiveSmallTargetPct = 30.0;

/// A row and its prediction (or why it has none).
struct CollectiveRowResult {
  config::CollectiveMeasurement m;
  bool predicted = false;
  std::string reason;  ///< why not predicted
  std::string metric;  ///< "busbw_GBps" or "time_us" (the CSV's column)
  bool large = false;  ///< a large-message row (else small-message or latency)
  double bytes = 0.0;
  double measured = 0.0;
  double prediction = 0.0;
  double error_pct = 0.0;  ///< signed
  double band_pct = 0.0;
  std::string algorithm;
  std::string protocol;
  [[nodiscard]] std::string size_class() const { return large ? "large" : "small"; }
};

/// The rows' errors against the targets.
struct CollectiveSummary {
  int rows = 0;
  int predicted = 0;
  double median = 0.0;
  double max = 0.0;
  int large_rows = 0;
  int large_within = 0;
  int small_rows = 0;
  int small_within = 0;
  [[nodiscard]] bool met() const {
    return predicted == rows && median <= kCollectiveMedianTargetPct && large_within == large_rows &&
           small_within == small_rows;
  }
};

/// Predicts one row on whole units of its instance type (the GPUs and nodes it names).
CollectiveRowResult predict_collective_row(const config::CollectiveMeasurement& m, const hardware::Catalog& catalog,
                                           const collectives::Calibration& cal);

/// Median and max |error| and the rows within their bands.
CollectiveSummary summarize_collectives(const std::vector<CollectiveRowResult>& rows);

}  // namespace fmsim::jobspec
