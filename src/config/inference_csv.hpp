// Reading published serving measurements (validation/inference.csv schema).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "serving/workload.hpp"

namespace fmsim::config {

/// One row of an inference-measurements CSV and what fmsim needs to predict it.
struct InferenceRow {
  int line = 0;
  std::string id, engine_text, gpu_text, model_text, scenario_text;
  // Mapped configuration (empty reason = predictable).
  std::string model;   ///< preset key
  std::string system;  ///< catalog system holding the GPU
  std::string engine;  ///< engine profile: trtllm, vllm, sglang
  int gpu_count = 1;
  int tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;
  int instances = 1;
  core::Precision weights = core::Precision::BF16;
  core::Precision kv = core::Precision::BF16;
  std::optional<core::Precision> activations;  ///< MXFP4 checkpoints: MXFP8 GEMM inputs
  serving::ArrivalKind arrival = serving::ArrivalKind::Offline;
  std::string scenario;  ///< "offline", "closed-loop", "static-batch"
  std::int64_t isl = 0, osl = 0;
  int concurrency = 0;  ///< closed-loop clients or static batch size (0 = engine max)
  std::string reason;   ///< why the row cannot be predicted
  // Measurements.
  std::optional<double> output_tok_s_per_gpu;
  std::optional<double> ttft_ms;  ///< mean
  std::optional<double> tpot_ms;  ///< mean (ITL for NIM)
  std::optional<double> e2e_ms;   ///< mean
};

/// Reads the file; a missing column or malformed CSV is core::InputError naming the file.
std::vector<InferenceRow> read_inference_csv(const std::string& path);

}  // namespace fmsim::config
