// Time of one engine iteration (a forward pass over a batch of prefill chunks and decode tokens)
// on one model replica, from FLOPs, bytes, bandwidths and the collectives model; and the memory
// left for the KV cache.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "collectives/collective.hpp"
#include "collectives/comm_cost.hpp"
#include "core/precision.hpp"
#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"
#include "serving/calibration.hpp"
#include "workload/expert_load.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::serving {

/// A served checkpoint's number format as --precision and --kv-dtype name it: the precision its
/// weights (or KV cache) are stored and multiplied in, and for MXFP4 the MXFP8 activations it runs
/// with on Blackwell (W4A8); NVFP4 is W4A4.
enum class ServingFormat { BF16, FP16, FP8, NVFP4, MXFP4 };
inline constexpr core::Word<ServingFormat> kServingFormatWordList[] = {
    {ServingFormat::BF16, "bf16"},          {ServingFormat::FP16, "fp16"},   {ServingFormat::FP8, "fp8", "mxfp8"},
    {ServingFormat::NVFP4, "fp4", "nvfp4"}, {ServingFormat::MXFP4, "mxfp4"},
};
inline constexpr core::Vocabulary<ServingFormat> kServingFormatWords{"serving precision", kServingFormatWordList};
/// The stored precision of a format (NVFP4 and MXFP4 are both FP4).
constexpr core::Precision stored_precision(ServingFormat f) {
  switch (f) {
    case ServingFormat::FP16: return core::Precision::FP16;
    case ServingFormat::FP8: return core::Precision::FP8;
    case ServingFormat::NVFP4:
    case ServingFormat::MXFP4: return core::Precision::FP4;
    case ServingFormat::BF16: break;
  }
  return core::Precision::BF16;
}

/// Speculative decoding: k draft tokens per step, verified in one target forward pass.
enum class SpeculativeKind { None, Mtp, Eagle, DraftModel };
/// The words of --speculative.
inline constexpr core::Word<SpeculativeKind> kSpeculativeKindWordList[] = {
    {SpeculativeKind::None, "none", "off"},
    {SpeculativeKind::Mtp, "mtp"},
    {SpeculativeKind::Eagle, "eagle"},
    {SpeculativeKind::DraftModel, "draft", "draft-model"},
};
inline constexpr core::Vocabulary<SpeculativeKind> kSpeculativeKindWords{"speculative decoding",
                                                                         kSpeculativeKindWordList};

/// A KV-cache tier below HBM.
enum class KvTier {
  None,   ///< no tier: sequences that no longer fit are preempted
  Host,   ///< host DRAM over PCIe
  Grace,  ///< Grace LPDDR5X over NVLink-C2C (Grace systems)
  Nvme,   ///< the instance's local NVMe
};
/// The words of --kv-offload.
inline constexpr core::Word<KvTier> kKvTierWordList[] = {
    {KvTier::None, "none"},
    {KvTier::Host, "host", "dram, cpu"},
    {KvTier::Grace, "grace", "lpddr5x"},
    {KvTier::Nvme, "nvme", "ssd, disk"},
};
inline constexpr core::Vocabulary<KvTier> kKvTierWords{"KV offload tier", kKvTierWordList};

struct Speculation {
  SpeculativeKind kind = SpeculativeKind::None;
  int draft_tokens = 0;              ///< k proposed tokens per step
  double acceptance_rate = 0.0;      ///< probability each draft token is accepted (independent)
  double draft_cost_fraction = 0.0;  ///< DraftModel: draft forward cost relative to the target's
  /// Expected tokens emitted per verification step: (1 - a^(k+1)) / (1 - a).
  [[nodiscard]] double tokens_per_step() const;
};

/// One model replica: a model on tp x pp GPUs of a system, its precisions and engine.
struct Deployment {
  workload::ModelSpec model;
  hardware::ClusterSpec cluster;  ///< the replica's machines (one instance, or an NVL72 domain)
  int tp = 1;                     ///< GPUs per pipeline stage (tensor and/or expert parallel)
  int pp = 1;
  int ep = 1;                                       ///< expert-parallel width (divides tp); expert TP = tp / ep
  int attention_dp = 1;                             ///< attention data-parallel ranks (1 or tp: DEP)
  core::Precision weights = core::Precision::BF16;  ///< linear weights
  /// GEMM inputs when they differ from the weights: MXFP4 checkpoints run MXFP8 activations on
  /// Blackwell (W4A8). GPUs without the precision's tensor cores fall back to BF16 (W4A16).
  std::optional<core::Precision> activations;
  core::Precision kv = core::Precision::BF16;  ///< KV cache
  bool cuda_graphs = true;
  Speculation speculation;
  EngineProfile engine;
  GpuServingCalibration gpu_cal;
  MoeServingCalibration moe_cal;
  /// A KV-cache tier below HBM (host DRAM over PCIe, Grace LPDDR5X over NVLink-C2C, local NVMe):
  /// when KV runs out, running sequences move there instead of being preempted and recomputed.
  struct KvOffload {
    KvTier tier = KvTier::None;
    core::Bytes capacity{0.0};            ///< for the replica
    core::BytesPerSecond bandwidth{0.0};  ///< per GPU, one direction (each GPU moves its own shard)
  } kv_offload;

  [[nodiscard]] int gpus() const { return tp * pp; }
};

/// Why a deployment cannot run; empty when it can.
std::string why_invalid(const Deployment& d);

/// The work of one iteration, summed over the requests it carries (whole replica).
struct BatchWork {
  int decode_seqs = 0;             ///< sequences producing a token by decoding
  double decode_ctx_full = 0;      ///< sum of their context lengths (tokens)
  double decode_ctx_window = 0;    ///< sum of min(context, window) (sliding layers)
  int prefill_tokens = 0;          ///< prompt tokens computed this iteration
  int prefill_seqs = 0;            ///< sequences with a prefill chunk
  double prefill_attn_full = 0;    ///< sum over chunks of q x (ctx_before + q/2): causal attention pairs
  double prefill_attn_window = 0;  ///< same with context capped at the window
  int sampled = 0;                 ///< tokens needing logits (decodes + finishing prefills)
};

/// Where an iteration's time goes.
struct IterationCost {
  core::Seconds linear{};     ///< dense GEMMs (attention projections, dense FFN, shared experts, LM head)
  core::Seconds experts{};    ///< routed-expert GEMMs
  core::Seconds attention{};  ///< attention core (prefill flash attention, decode KV reads)
  core::Seconds other{};      ///< elementwise / norms / embedding
  core::Seconds tp_comm{};    ///< all-reduces (or attention-DP gathers)
  core::Seconds ep_comm{};    ///< MoE dispatch/combine all-to-all
  core::Seconds pp_comm{};
  core::Seconds overhead{};  ///< CPU scheduling, sampling, launches
  core::Seconds draft{};     ///< speculative drafting
  [[nodiscard]] core::Seconds total() const {
    return linear + experts + attention + other + tp_comm + ep_comm + pp_comm + overhead + draft;
  }
};

/// Memory of one GPU of the replica.
struct ServingMemory {
  core::Bytes weights{};
  core::Bytes activations{};  ///< forward workspace at the token budget
  core::Bytes graphs{};
  core::Bytes usable{};    ///< HBM usable x gpu_memory_utilization
  core::Bytes kv_cache{};  ///< what is left for KV blocks (may be <= 0: does not fit)
  /// KV of one token of one sequence on this GPU, all its layers (full attention).
  core::Bytes kv_bytes_per_token{};
  core::Bytes kv_bytes_per_token_window{};  ///< of which on sliding-window layers (capped at the window)
  /// Tokens (full context) the replica's KV cache holds.
  double token_capacity = 0;
};

/// Precomputed per-replica constants; `iteration()` is O(1).
class IterationModel {
 public:
  IterationModel(const Deployment& d, const collectives::CommCostFn& comm);

  /// `ranks`: with attention DP, the same work split by DP rank (one entry per rank); the busiest
  /// rank then sets the pace of the rank-local layers. Empty: the work is taken as evenly spread.
  [[nodiscard]] IterationCost iteration(const BatchWork& w, std::span<const BatchWork> ranks = {}) const;
  /// The attention part of a decode-only iteration without attention DP, whose sequences' contexts
  /// sum to `ctx_full` (`ctx_window` capped at the window): the `attention` of iteration() for it,
  /// the same arithmetic. Nothing else of such an iteration depends on the contexts, so a
  /// scheduler may take the rest from one iteration() of the same batch size.
  [[nodiscard]] core::Seconds decode_attention(double ctx_full, double ctx_window) const;
  /// Expected excess load of the busiest EP rank over the mean, as a fraction, when `tokens` tokens
  /// are routed: multinomial routing plus unequal expert popularity (MoeServingCalibration).
  [[nodiscard]] double ep_imbalance(double tokens) const;
  /// One iteration prefilling `tokens` prompt tokens of one sequence from scratch.
  [[nodiscard]] core::Seconds prefill_time(int tokens) const;
  /// One decode iteration of `batch` sequences whose context is `mean_context` tokens on average.
  [[nodiscard]] core::Seconds decode_step_time(int batch, double mean_context) const;
  [[nodiscard]] const ServingMemory& memory() const { return memory_; }
  [[nodiscard]] const Deployment& deployment() const { return d_; }
  /// KV bytes (replica, whole context) of one sequence of `ctx` tokens, in whole blocks.
  [[nodiscard]] double kv_bytes(double ctx) const;
  /// Replica KV-cache capacity (bytes, summed consistently with kv_bytes()).
  [[nodiscard]] double kv_capacity() const { return kv_capacity_; }
  /// Decode batch padded to the next captured CUDA-graph size (the engine's list; else vLLM's
  /// 1, 2, 4, then multiples of 8).
  [[nodiscard]] int graph_batch(int batch) const;

 private:
  double comm_time(collectives::Op op, int tokens, double bytes_per_token, collectives::CommGroup g) const;
  struct LocalWork {
    double tokens, decode_ctx_full, decode_ctx_window, prefill_attn_full, prefill_attn_window, per_seq;
  };
  struct LocalCost {
    core::Seconds linear{}, attention{}, other{};
    [[nodiscard]] core::Seconds total() const { return linear + attention + other; }
  };
  /// Dense GEMMs, attention and elementwise work of one GPU; `heads_share`: ways the heads are split.
  [[nodiscard]] LocalCost local_cost(const LocalWork& lw, double heads_share) const;
  [[nodiscard]] core::Seconds attention_time(const LocalWork& lw, double heads_share) const;

  Deployment d_;
  collectives::CommCostFn comm_;
  ServingMemory memory_;
  double kv_capacity_ = 0;
  double ssm_state_bytes_ = 0;  ///< a hybrid's Mamba / DeltaNet state per sequence on this GPU (all its layers)
  // Per GPU, per stage, summed over its layers.
  double layers_ = 0;  ///< layers per pipeline stage
  double moe_layers_ = 0;
  double dense_weights_tp_ = 0;   ///< params split tp ways (GEMMs every token crosses)
  double dense_weights_rep_ = 0;  ///< params replicated per attention-DP rank
  double expert_weights_ = 0;     ///< routed-expert params on this GPU, all MoE layers
  double expert_params_one_ = 0;  ///< params of one expert slice (one layer) on this GPU
  double experts_local_ = 0;      ///< experts per GPU per layer
  double lm_head_ = 0;            ///< params of the LM head slice
  double bytes_per_weight_ = 2;
  double bytes_per_kv_ = 2;
  double peak_gemm_ = 0, peak_attn_ = 0, hbm_ = 0;
  double half_dim_ = 128;
  double max_normal_ep_ =
      0;  ///< expected maximum of ep standard normals             ///< gemm_half_dim of the GPU's calibration
  double attn_flops_per_pair_ = 0;        ///< prefill FLOPs per (query, key) pair per layer, whole model
  double decode_attn_flops_per_ctx_ = 0;  ///< decode FLOPs per context token per layer (MLA absorbed: large)
  double kv_elems_full_ = 0;              ///< KV elements per token per GPU on full-attention layers of the stage
  double kv_elems_window_ = 0;
  int kv_shard_ = 1;  ///< ways the replica's KV of one token is spread (heads or attention DP)
  double window_ = 0;
  std::array<double, 18> ar_table_{};   ///< tp all-reduce time at 2^i tokens
  std::array<double, 18> a2a_table_{};  ///< ep all-to-all time at 2^i tokens (dispatch + combine)
};

/// Expected maximum of n independent standard normal variables (workload/expert_load.hpp).
using workload::expected_max_standard_normal;

/// Bytes of one stored value of `p`, including block scales (NVFP4: 16 values share an FP8 scale).
double stored_bytes(core::Precision p);

}  // namespace fmsim::serving
