// The rows of validation/inference.csv predicted with the serving simulator: each row's
// deployment and workload (the benchmark's protocol: request counts, the closed loop's steady
// state) built and simulated. `fmsim validate inference` prints what this returns.
#pragma once

#include <optional>
#include <string>

#include "config/inference_csv.hpp"
#include "hardware/catalog.hpp"
#include "serving/calibration.hpp"

namespace fmsim::jobspec {

/// One measured figure of a row and its prediction.
struct InferenceMetric {
  std::optional<double> measured, predicted;
  /// 100 (predicted - measured) / measured; nullopt without both or with measured <= 0.
  [[nodiscard]] std::optional<double> error_pct() const {
    if (!measured || !predicted || *measured <= 0) return std::nullopt;
    return 100.0 * (*predicted - *measured) / *measured;
  }
};

/// A row and what the simulator predicts for it (or why it does not).
struct InferenceRowResult {
  config::InferenceRow row;
  bool predicted = false;
  std::string reason;
  InferenceMetric throughput, ttft, tpot, e2e;  // tok/s/GPU; ms
  double kv_capacity_tokens = 0;
  int batch_mean = 0;
};

/// The row's engine word ("" when unknown).
std::string inference_engine_name(const config::InferenceRow& r);

/// Simulates `row`'s deployment under its benchmark's protocol.
InferenceRowResult predict_inference_row(const config::InferenceRow& row, const serving::ServingCalibration& cal,
                                         const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
