// Rollout generation: an inference engine with continuous batching over the sampled response
// lengths. Behind RolloutEngine so a fuller serving simulator can take its place.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "hardware/specs.hpp"
#include "rl/calibration.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::rl {

/// The generator pool: `replicas` engine instances of `tp` GPUs each.
struct GeneratorConfig {
  workload::ModelSpec model;
  hardware::GpuSpec gpu;
  int tp = 1;
  int replicas = 1;
  core::Precision precision = core::Precision::BF16;  ///< weights and KV cache
  core::Seconds tp_allreduce{};  ///< one decode all-reduce on the TP group (latency-bound)
};

/// What one step asks the generators for.
struct RolloutRequest {
  std::int64_t prompts = 1;
  int samples_per_prompt = 1;
  std::int64_t prompt_len = 256;
  std::vector<std::int64_t> lengths;  ///< response lengths, prompts x samples, in arrival order
};

/// A stretch of constant batch size on one replica.
struct BatchSegment {
  double start_s = 0.0, end_s = 0.0;
  int batch = 0;
};

struct RolloutResult {
  bool feasible = false;
  std::string reason;
  core::Seconds makespan{};             ///< until the last (longest-holding) replica finishes
  core::Seconds mean_replica_time{};    ///< mean over replicas of their own finishing time
  double generated_tokens = 0.0;
  double prefill_tokens = 0.0;
  double busy_fraction = 0.0;           ///< time-averaged batch / concurrency limit, over makespan and replicas
  double full_rate_tokens_per_s = 0.0;  ///< whole pool, while replicas run full (the streaming rate)
  int concurrency = 0;                  ///< sequences one replica runs at once (KV and max_num_seqs bound)
  core::Bytes weights_per_gpu{};
  core::Bytes peak_kv_per_gpu{};
  std::vector<BatchSegment> segments;   ///< replica 0 (the one holding the longest response)
  std::size_t events = 0;
};

/// Bytes of KV cache per token on one GPU of a TP group (MLA latent cache is replicated).
core::Bytes kv_bytes_per_token_per_gpu(const workload::ModelSpec& model, int tp, core::Precision p);

class RolloutEngine {
 public:
  virtual ~RolloutEngine() = default;
  [[nodiscard]] virtual RolloutResult generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                               const RlCalibration& cal) const = 0;
  [[nodiscard]] virtual std::string name() const = 0;
};

/// Event-driven continuous batching: each replica admits requests up to its concurrency limit and
/// advances all running sequences one token per decode iteration; between two completions the
/// batch is constant and the context grows linearly, so the iterations between events are summed
/// in closed form. Iteration time = max(weights touched + KV read over HBM, FLOPs over peak)
/// + TP all-reduces + overheads. Cost O(n log n) in the number of responses.
class ContinuousBatchingEngine final : public RolloutEngine {
 public:
  [[nodiscard]] RolloutResult generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                       const RlCalibration& cal) const override;
  [[nodiscard]] std::string name() const override { return "continuous-batching"; }
};

}  // namespace fmsim::rl
