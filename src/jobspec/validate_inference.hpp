// The rows of validation/inference.csv predicted with the serving simulator: each row's
// deployment and workload (the benchmark's protocol: request counts, the closed loop's steady
// state) built and simulated. `fmsim validate inference` prints what this returns.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/inference_csv.hpp"
#include "core/vocabulary.hpp"
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
  /// Closed loop: the simulated mean TTFT (ms) of the first round (every client sending at once to
  /// an idle engine) and of the steady round after it; 0 elsewhere.
  double ttft_first_round_ms = 0, ttft_steady_ms = 0;
};

/// The row's engine word ("" when unknown).
std::string inference_engine_name(const config::InferenceRow& r);

/// Simulates `row`'s deployment under its benchmark's protocol.
InferenceRowResult predict_inference_row(const config::InferenceRow& row, const serving::ServingCalibration& cal,
                                         const hardware::Catalog& catalog);

/// Predicts every row, on `threads` threads (0: the hardware's); results in row order.
std::vector<InferenceRowResult> predict_inference_rows(const std::vector<config::InferenceRow>& rows,
                                                       const serving::ServingCalibration& cal,
                                                       const hardware::Catalog& catalog, int threads = 0);

/// An engine's host-side costs measured on closed-loop rows served over HTTP (`fmsim calibrate
/// serving`, `validate inference --holdout`): the rows are predicted with all three at zero, then
///  - TPOT: measured - predicted = iteration_overhead + sequence_overhead x B, B the sequences a
///    decode step of the row carries per attention-DP rank (min(clients, max batch) / ranks),
///    fitted by least absolute deviations (a few broken measurements do not pull it), both >= 0;
///  - TTFT: request_overhead = the median of measured - predicted - (iteration_overhead +
///    sequence_overhead x B) over rows of at most kRequestOverheadClients clients (little queueing).
struct EngineOverheadFit {
  serving::EngineKind engine = serving::EngineKind::Vllm;
  double iteration_overhead_s = 0, sequence_overhead_s = 0, request_overhead_s = 0;
  int tpot_rows = 0, ttft_rows = 0;
};
inline constexpr int kRequestOverheadClients = 8;
inline constexpr int kRequestOverheadSteps = 8;       ///< bisection steps of measure_engine_overheads
inline constexpr double kRequestOverheadMax = 0.512;  ///< s; the bisection's upper end (2 ms resolution)

/// What a leave-one-partition-out run holds out: one GPU model, one GPU generation (architecture),
/// one engine, one model or one serving mode at a time.
enum class InferencePartition { Gpu, Generation, Engine, Model, Mode };
inline constexpr core::Word<InferencePartition> kInferencePartitionWordList[] = {
    {InferencePartition::Gpu, "gpu"},       {InferencePartition::Generation, "generation", "architecture"},
    {InferencePartition::Engine, "engine"}, {InferencePartition::Model, "model"},
    {InferencePartition::Mode, "mode"},
};
inline constexpr core::Vocabulary<InferencePartition> kInferencePartitionWords{"holdout partition",
                                                                               kInferencePartitionWordList};
/// The partition `row` belongs to ("hopper", "vllm", "agg", ...).
std::string partition_of(const config::InferenceRow& row, InferencePartition p, const hardware::Catalog& catalog);

/// Leave-one-partition-out: for each partition, the engines' host costs fitted on the other
/// partitions' rows (fit_engine_overheads), then its rows predicted with them. Results in row order.
std::vector<InferenceRowResult> predict_held_out(const std::vector<config::InferenceRow>& rows,
                                                 const serving::ServingCalibration& cal,
                                                 const hardware::Catalog& catalog, InferencePartition p);

/// `cal` with every engine's three host costs at zero (what a fit starts from).
serving::ServingCalibration without_engine_overheads(serving::ServingCalibration cal);
/// Fits each engine on the rows of `at_zero` (predicted by without_engine_overheads) that `use`
/// accepts; engines without rows are left out.
std::vector<EngineOverheadFit> fit_engine_overheads(const std::vector<InferenceRowResult>& at_zero,
                                                    const std::function<bool(const config::InferenceRow&)>& use);
/// The measurement as `fmsim calibrate serving` runs it: fit_engine_overheads on `at_zero`, then
/// the rows of at most kRequestOverheadClients clients that `use` accepts predicted again with the
/// fitted step costs, and request_overhead the value that leaves their median TTFT residual at
/// zero, by bisection (kRequestOverheadSteps halvings of [0, kRequestOverheadMax]): in a closed
/// loop the prompts of a round regroup as the request path delays them, so TTFT does not move one
/// for one with it.
std::vector<EngineOverheadFit> measure_engine_overheads(const std::vector<config::InferenceRow>& rows,
                                                        const std::vector<InferenceRowResult>& at_zero,
                                                        const serving::ServingCalibration& cal,
                                                        const hardware::Catalog& catalog,
                                                        const std::function<bool(const config::InferenceRow&)>& use);
/// `cal` with the fitted values in place of its engines'.
serving::ServingCalibration with_engine_overheads(serving::ServingCalibration cal,
                                                  const std::vector<EngineOverheadFit>& fits);

}  // namespace fmsim::jobspec
