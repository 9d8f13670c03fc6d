// Rollout generation: the responses of one RL step played through an inference engine. The
// engine is the serving model (src/serving/): its per-iteration cost and its scheduler
// (continuous batching, chunked prefill, paged KV cache); RolloutEngine keeps the step model
// testable with a stand-in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "hardware/specs.hpp"
#include "rl/agentic.hpp"
#include "rl/calibration.hpp"
#include "serving/calibration.hpp"
#include "serving/iteration_model.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::rl {

/// The generator pool: `replicas` engine instances of `tp` GPUs each, on machines of `cluster`.
struct GeneratorConfig {
  workload::ModelSpec model;
  hardware::ClusterSpec cluster;
  int tp = 1;
  int ep = 1;  ///< expert-parallel width within the replica (divides tp)
  int replicas = 1;
  core::Precision precision = core::Precision::BF16;  ///< weights and KV cache
};

/// What one step asks the generators for.
struct RolloutRequest {
  std::int64_t prompts = 1;
  int samples_per_prompt = 1;
  std::int64_t prompt_len = 256;
  std::vector<std::int64_t> lengths;  ///< response lengths, prompt-major (prompt i's samples together)
  /// Sequences the whole pool may hold at once when it streams (slots refilled as responses
  /// finish, RolloutResult::stream_tokens_per_s): the staleness bound of asynchronous training
  /// (k batches ahead, or a window plus its run-ahead). 0 = every slot.
  std::int64_t max_in_flight = 0;
  /// Multi-turn episodes with tool calls (agentic.hpp); single-turn when !agent.is_agentic().
  AgentSpec agent;
};

/// A stretch of constant batch size on one replica.
struct BatchSegment {
  double start_s = 0.0, end_s = 0.0;
  int batch = 0;
};

struct RolloutResult {
  bool feasible = false;
  std::string reason;
  core::Seconds makespan{};       ///< until the replica holding the longest response finishes
  double generated_tokens = 0.0;  ///< whole pool
  double prefill_tokens = 0.0;    ///< whole pool (prompts, once per prompt: samples share its KV)
  double busy_fraction = 0.0;     ///< time-averaged running sequences / concurrency, that replica over the makespan
  double full_rate_tokens_per_s = 0.0;  ///< whole pool, decode with every slot busy
  /// Whole pool, decode with the slots refilled as responses finish but at most
  /// RolloutRequest::max_in_flight sequences at once (= full_rate_tokens_per_s without a bound).
  double stream_tokens_per_s = 0.0;
  double prefill_tokens_per_s = 0.0;  ///< whole pool, prefill at the engine's token budget per iteration
  int concurrency = 0;                ///< sequences one replica runs at once (KV and max_num_seqs bound)
  int pipeline_stages = 1;            ///< TP beyond an NVLink domain runs as TP = domain x PP stages
  core::Bytes weights_per_gpu{};
  core::Bytes peak_kv_per_gpu{};
  std::vector<BatchSegment> segments;  ///< the replica holding the longest response
  std::size_t events = 0;              ///< engine iterations simulated
  /// Agentic episodes (RolloutRequest::agent): mean turns and tool calls per episode, observation
  /// tokens appended per episode, tool seconds and engine idle seconds (all episodes waiting on
  /// tools) on the simulated replica.
  EpisodeTotals episode;
  double tool_seconds = 0.0, engine_idle_seconds = 0.0;
};

class RolloutEngine {
 public:
  virtual ~RolloutEngine() = default;
  [[nodiscard]] virtual RolloutResult generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                               const RlCalibration& cal) const = 0;
  [[nodiscard]] virtual std::string name() const = 0;
};

/// The serving simulator as the rollout engine. Prompts go to replicas round-robin (an RL
/// framework's load balancer); the replicas see statistically the same load, so only the one
/// holding the longest response is simulated, iteration by iteration: it sets the makespan.
/// The engine profile (vLLM, SGLang) gets the RL frameworks' memory share and sequence limit
/// (RlCalibration::gpu_memory_utilization, max_num_seqs).
class ServingRolloutEngine final : public RolloutEngine {
 public:
  ServingRolloutEngine(serving::ServingCalibration calibration, std::string engine = "vllm");
  [[nodiscard]] RolloutResult generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                       const RlCalibration& cal) const override;
  [[nodiscard]] std::string name() const override { return engine_; }

 private:
  /// The agentic path of generate(): the replica's episodes through simulate_agentic_replica.
  [[nodiscard]] RolloutResult generate_agentic(const serving::IterationModel& model, const serving::Deployment& d,
                                               const RolloutRequest& req, const RlCalibration& cal, RolloutResult r,
                                               std::size_t mine, int replicas, double mean_len,
                                               const GeneratorConfig& gen) const;
  serving::ServingCalibration calibration_;
  std::string engine_;
};

}  // namespace fmsim::rl
