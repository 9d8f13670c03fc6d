// Named calibration of the serving model: per GPU architecture (kernel efficiencies) and per
// inference engine (vLLM, SGLang, TensorRT-LLM: scheduler defaults and fixed overheads).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"

namespace fmsim::serving {

/// How close inference kernels get to the datasheet peaks on one GPU architecture.
struct GpuServingCalibration {
  double gemm_efficiency_bf16 = 0.70;    ///< large-token GEMMs (prefill), of the dense BF16 peak
  double gemm_efficiency_fp8 = 0.65;     ///< of the FP8 peak
  double gemm_efficiency_fp4 = 0.55;     ///< of the FP4 peak
  double weight_read_efficiency = 0.80;  ///< fraction of HBM bandwidth a small-batch GEMM reaches streaming weights
  double kv_read_efficiency = 0.70;      ///< fraction of HBM bandwidth decode attention reaches streaming the KV cache
  double attention_efficiency = 0.45;    ///< prefill (flash) attention, of the BF16 peak
  core::BytesPerSecond host_link_bandwidth{55e9};  ///< one GPU to/from host memory (KV swap, offload)
  /// One GPU to/from its Grace CPU's LPDDR5X over NVLink-C2C (Grace systems only).
  core::BytesPerSecond grace_link_bandwidth{225e9};
  /// GEMM rows (tokens) at which a GEMM reaches half its large-shape rate: g(m) = m / (m + half).
  /// Under-filled MMA tiles waste compute (decode batches, routed experts with few tokens each).
  double gemm_half_dim = 128;
  std::string source;

  [[nodiscard]] double gemm_efficiency(core::Precision p) const {
    switch (p) {
      case core::Precision::FP8: return gemm_efficiency_fp8;
      case core::Precision::FP4: return gemm_efficiency_fp4;
      default: return gemm_efficiency_bf16;
    }
  }
};

/// Routing statistics of mixture-of-experts models in serving (a property of trained routers on
/// real traffic, not of the GPU or engine).
struct MoeServingCalibration {
  /// Coefficient of variation of the tokens one expert receives in a layer, across the experts,
  /// without a load balancer (EPLB). Sets how much more the busiest EP rank carries than the mean.
  double expert_load_cv = 0.0;
  /// Token rows of one tile of the routed experts' grouped GEMM: the small tile when the step's
  /// tokens are at most the experts (decode), the large one otherwise. An expert with r rows
  /// fills r / (r + tile) of its tiles' work. 0 = the dense GEMMs' gemm_half_dim.
  double grouped_gemm_small_tile = 0.0;
  double grouped_gemm_tile = 0.0;
  std::string source;
};

/// What the engine does when the KV cache cannot hold the next token of a running request.
enum class PreemptionMode { Recompute, Swap };
/// The words of --preemption and serving.yaml's `preemption` (vLLM's preemption_mode).
inline constexpr core::Word<PreemptionMode> kPreemptionModeWordList[] = {
    {PreemptionMode::Recompute, "recompute"},
    {PreemptionMode::Swap, "swap"},
};
inline constexpr core::Vocabulary<PreemptionMode> kPreemptionModeWords{"preemption mode", kPreemptionModeWordList};

/// When the engine reserves KV-cache blocks for a request.
enum class KvAdmission {
  OnDemand,     ///< block by block as tokens arrive; may preempt (vLLM, SGLang)
  ReserveFull,  ///< prompt + max output at admission, never preempts (TensorRT-LLM GUARANTEED_NO_EVICT)
};
/// The words of serving.yaml's `kv_admission`.
inline constexpr core::Word<KvAdmission> kKvAdmissionWordList[] = {
    {KvAdmission::OnDemand, "on-demand"},
    {KvAdmission::ReserveFull, "reserve-full", "guaranteed-no-evict"},
};
inline constexpr core::Vocabulary<KvAdmission> kKvAdmissionWords{"KV admission", kKvAdmissionWordList};

/// What an engine's memory fraction (gpu_memory_utilization and its kin) is a fraction of.
enum class MemoryFractionOf {
  Total,  ///< the whole HBM, weights included (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static)
  Free,   ///< the memory left free after weights, workspace and graphs, all of it for the KV cache
          ///< (TensorRT-LLM's free_gpu_memory_fraction)
};
/// The words of serving.yaml's `memory_fraction_of`.
inline constexpr core::Word<MemoryFractionOf> kMemoryFractionOfWordList[] = {
    {MemoryFractionOf::Total, "total"},
    {MemoryFractionOf::Free, "free"},
};
inline constexpr core::Vocabulary<MemoryFractionOf> kMemoryFractionOfWords{"memory fraction basis",
                                                                           kMemoryFractionOfWordList};

/// The inference engines fmsim has profiles for.
enum class EngineKind { Vllm, Sglang, TrtLlm };
/// The words of --engine and of serving.yaml's engine keys.
inline constexpr core::Word<EngineKind> kEngineKindWordList[] = {
    {EngineKind::Vllm, "vllm"},
    {EngineKind::Sglang, "sglang"},
    {EngineKind::TrtLlm, "trtllm", "tensorrt-llm, tensorrt"},
};
inline constexpr core::Vocabulary<EngineKind> kEngineKindWords{"engine", kEngineKindWordList};

/// One inference engine's scheduler defaults and fixed per-iteration costs.
struct EngineProfile {
  EngineKind kind = EngineKind::Vllm;
  std::string name;  ///< kEngineKindWords' name of `kind`: "vllm", "sglang", "trtllm"
  std::string display_name;
  core::Seconds iteration_overhead{1e-3};  ///< CPU scheduling, input preparation, sampling per iteration (graph replay)
  /// Host time per sequence in an iteration when requests are served over HTTP (detokenizing and
  /// streaming each sequence's token every step; scheduling and sampling it), per attention-DP
  /// rank. A benchmark in the engine's own process (RequestPath::InProcess) has none.
  core::Seconds sequence_overhead{0.0};
  /// Time a request served over HTTP spends outside the GPU on its way to its first token: the
  /// OpenAI-compatible server, tokenization, the hand-off to the engine core and the first
  /// token's detokenization and stream back (RequestPath::Server only).
  core::Seconds request_overhead{0.0};
  core::Seconds graph_layer_overhead{10e-6};  ///< gaps and tails of one layer's kernels replayed from a CUDA graph
  core::Seconds eager_layer_overhead{40e-6};  ///< kernel launches per layer when an iteration runs without a CUDA graph
  int cuda_graph_max_batch = 512;             ///< decode-only batches up to this size replay a captured graph
  /// Captured batch sizes a decode batch is padded up to; empty: 1, 2, 4, then multiples of 8 (vLLM).
  std::vector<int> cuda_graph_batch_sizes;
  int max_num_seqs = 256;             ///< running requests at most
  int max_num_batched_tokens = 8192;  ///< token budget of one iteration (chunked prefill)
  bool chunked_prefill = true;
  int block_size = 16;                                            ///< tokens per KV-cache block
  double gpu_memory_utilization = 0.90;                           ///< fraction of HBM the engine may use
  MemoryFractionOf memory_fraction_of = MemoryFractionOf::Total;  ///< what gpu_memory_utilization is a fraction of
  core::Bytes graph_memory{1.0e9};                                ///< captured CUDA graphs and their pools, per GPU
  KvAdmission admission = KvAdmission::OnDemand;
  PreemptionMode preemption = PreemptionMode::Recompute;
  bool prefix_caching = true;
  core::Seconds allreduce_latency{0.0};  ///< custom (one-shot) all-reduce latency; 0 = the NCCL collectives model
  std::string source;
};

/// The whole serving calibration.
struct ServingCalibration {
  std::map<hardware::Architecture, GpuServingCalibration> gpus;
  std::map<std::string, EngineProfile> engines;
  MoeServingCalibration moe;

  [[nodiscard]] const GpuServingCalibration& gpu(hardware::Architecture a) const;
  /// nullptr when unknown.
  [[nodiscard]] const EngineProfile* engine(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> engine_names() const;
};

}  // namespace fmsim::serving
