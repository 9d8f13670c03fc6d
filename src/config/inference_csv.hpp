// Reading published serving measurements (validation/inference.csv schema).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "core/vocabulary.hpp"
#include "serving/calibration.hpp"
#include "serving/workload.hpp"

namespace fmsim::config {

/// The benchmark protocol a published row was measured under.
enum class BenchmarkScenario {
  Offline,      ///< every request queued at once (max-throughput runs)
  ClosedLoop,   ///< a fixed number of clients, each sending its next request when the last completes
  StaticBatch,  ///< one batch of the given size, start to finish
};
inline constexpr core::Word<BenchmarkScenario> kBenchmarkScenarioWordList[] = {
    {BenchmarkScenario::Offline, "offline"},
    {BenchmarkScenario::ClosedLoop, "closed-loop"},
    {BenchmarkScenario::StaticBatch, "static-batch"},
};
inline constexpr core::Vocabulary<BenchmarkScenario> kBenchmarkScenarioWords{"benchmark scenario",
                                                                             kBenchmarkScenarioWordList};

/// The parallel layout of one pool of a disaggregated deployment (prefill or decode).
struct PoolLayout {
  int tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;
  int workers = 1;         ///< instances of the pool
  int batch = 0;           ///< the engine's max batch of one instance as run (0 = not stated)
  int max_num_tokens = 0;  ///< the engine's token budget per iteration as run (0 = its default)
};

/// One row of an inference-measurements CSV and what fmsim needs to predict it.
struct InferenceRow {
  int line = 0;
  std::string id, engine_text, engine_version, gpu_text, model_text, scenario_text, source_type;
  // Mapped configuration (empty reason = predictable).
  std::string model;                          ///< preset key
  std::string system;                         ///< catalog system holding the GPU
  std::optional<serving::EngineKind> engine;  ///< the engine profile; none when the engine is unknown
  int gpu_count = 1;
  int tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;
  int instances = 1;
  bool disaggregated = false;  ///< serving_mode disagg: prefill and decode pools below
  PoolLayout prefill, decode;
  core::Precision weights = core::Precision::BF16;
  core::Precision kv = core::Precision::BF16;
  std::optional<core::Precision> activations;  ///< MXFP4 checkpoints: MXFP8 GEMM inputs
  serving::ArrivalKind arrival = serving::ArrivalKind::Offline;
  std::optional<BenchmarkScenario> scenario;  ///< none when the scenario is unknown
  std::int64_t isl = 0, osl = 0;
  int concurrency = 0;     ///< closed-loop clients or static batch size (0 = engine max)
  int max_batch = 0;       ///< the engine's max batch per attention-DP rank as run (column max_batch; 0 = its default)
  int max_num_tokens = 0;  ///< the engine's token budget per iteration as run (0 = its default)
  std::optional<bool> chunked_prefill;  ///< as run; none = the engine's default
  /// Closed loop: the requests per client the reported means cover, counted from a drained engine:
  /// the first of them sent by every client at once (AIPerf waits for every warm-up response before
  /// it profiles). Column profiled_rounds; 0 = the steady state only.
  int profiled_rounds = 0;
  std::string reason;  ///< why the row cannot be predicted
  // Measurements.
  std::optional<double> output_tok_s_per_gpu;
  std::optional<double> ttft_ms;  ///< mean
  std::optional<double> tpot_ms;  ///< mean (ITL for NIM)
  std::optional<double> e2e_ms;   ///< mean
};

/// Reads the file; a missing column or malformed CSV is core::InputError naming the file.
std::vector<InferenceRow> read_inference_csv(const std::string& path);

}  // namespace fmsim::config
