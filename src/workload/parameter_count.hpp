// Parameter counts of a transformer (total, per component, per layer, active per token).
#pragma once

#include <cstdint>

#include "workload/model_spec.hpp"

namespace fmsim::workload {

/// Parameters of one ModelSpec, counted from its dimensions (weights, biases and norm vectors).
///
/// Conventions:
/// - Attention: q, k, v, o projections (or the MLA down/up projections and their two RMSNorms),
///   biases when `attention_bias` (all four projections), per-head q/k norms when `qk_norm`.
///   Attention sinks (GPT-OSS, 64 per layer) and Qwen2's bias-free output projection are ignored.
/// - FFN: SwiGLU = gate + up + down (3·h·f), GeLU = up + down (2·h·f); biases when `mlp_bias`.
/// - Routers: h·E (+E biases when `mlp_bias`). DeepSeek-V3's routing correction bias is ignored.
/// - Norms: one before each mixer and one before each FFN (2 per transformer layer, 1 per
///   Nemotron-H layer) + 1 final; RMSNorm = h, LayerNorm = 2h.
/// - Mamba-2 mixers: in_proj h·(2·d_inner + 2·G·N + H), depthwise conv (d_inner + 2·G·N)·(K + 1 bias),
///   A_log, D and dt_bias (H each), gated RMSNorm d_inner, out_proj d_inner·h (HF NemotronHMamba2Mixer).
///   Mamba-1 mixers: in_proj 2·d_inner·h, conv d_inner·(K + 1), x_proj d_inner·(R + 2N), dt_proj
///   R·d_inner + d_inner, A_log d_inner·N, D d_inner, out_proj, and Jamba's dt/B/C RMSNorms (R + 2N).
/// - Gated DeltaNet mixers: in_proj_qkvz h·(2·Kd + 2·Vd), in_proj_ba h·2·Hv, conv (2·Kd + Vd)·K,
///   A_log and dt_bias (Hv each), gated RMSNorm Dv, out_proj Vd·h (HF Qwen3NextGatedDeltaNet).
/// - MTP modules (DeepSeek-V3) are counted in `mtp` and excluded from `total`, matching the
///   published "671B" (the 685B checkpoint adds the MTP module).
struct ParameterCount {
  // Whole model.
  std::int64_t total = 0;             ///< every parameter of the main model
  std::int64_t embedding = 0;         ///< token embedding table, plus the learned position table if any
  std::int64_t lm_head = 0;           ///< output projection; 0 when tied to the embedding
  std::int64_t attention = 0;         ///< all attention layers
  std::int64_t ssm = 0;               ///< all Mamba mixers
  std::int64_t linear_attention = 0;  ///< all gated DeltaNet mixers
  std::int64_t dense_mlp = 0;         ///< all dense-FFN layers
  std::int64_t routed_experts = 0;    ///< all routed experts of all MoE layers
  std::int64_t shared_experts = 0;    ///< all shared experts of all MoE layers
  std::int64_t routers = 0;           ///< all MoE routers
  std::int64_t norms = 0;             ///< per-layer and final norms
  std::int64_t mtp = 0;               ///< multi-token-prediction modules; not part of `total`

  // One layer.
  std::int64_t attention_per_layer = 0;         ///< one attention mixer
  std::int64_t ssm_per_layer = 0;               ///< one Mamba mixer
  std::int64_t linear_attention_per_layer = 0;  ///< one gated DeltaNet mixer
  std::int64_t dense_mlp_per_layer = 0;         ///< one dense FFN (0 when no layer is dense)
  std::int64_t expert = 0;                      ///< one routed expert
  std::int64_t shared_expert_per_layer = 0;     ///< the shared expert(s) of one MoE layer
  std::int64_t router_per_layer = 0;
  std::int64_t norms_per_layer = 0;  ///< the norms of a layer with a mixer and an FFN
  int dense_layers = 0;              ///< layers with a dense FFN
  int moe_layers = 0;                ///< layers with routed experts
  int attention_layers = 0;          ///< layers whose mixer is attention
  int ssm_layers = 0;                ///< layers whose mixer is Mamba
  int linear_attention_layers = 0;   ///< layers whose mixer is gated DeltaNet

  /// Parameters one token's forward pass multiplies by: `total` minus the (E - top_k) experts it
  /// is not routed to in each MoE layer, minus the embedding lookup tables (an index, not a
  /// matmul; a tied table still counts once, as the output projection). This is the convention of
  /// OpenAI's gpt-oss model card (5.1B active for gpt-oss-120b) and the N of torchtitan's and
  /// llm-foundry's 6N FLOP counts; equal to total - embedding for dense untied models.
  std::int64_t active = 0;
  /// Embedding tables used only as lookups (the token table when untied, learned positions): the
  /// part of `total` that `active` leaves out besides the unrouted experts.
  std::int64_t lookup_only = 0;

  /// Active parameters counting the embedding lookup too: the convention of Mistral (Mixtral 8x7B
  /// "12.9B active") and Qwen (Qwen3-30B-A3B "3.3B activated").
  [[nodiscard]] std::int64_t active_with_embedding() const { return active + lookup_only; }
  /// `total` without embedding and output tables (Kaplan et al. 2020's non-embedding N).
  [[nodiscard]] std::int64_t non_embedding() const { return total - embedding - lm_head; }
  friend bool operator==(const ParameterCount&, const ParameterCount&) = default;
};

/// Counts the parameters of `model`. Pure; `model` must be valid (config::load_model checks).
ParameterCount count_parameters(const ModelSpec& model);

/// Weights of the attention GEMMs of one layer (projections only: no biases, no norms).
std::int64_t attention_matmul_weights(const ModelSpec& model);
/// Weights of the GEMMs of one Mamba mixer (in_proj, out_proj; Mamba-1 also x_proj and dt_proj).
std::int64_t ssm_matmul_weights(const ModelSpec& model);
/// Weights of the GEMMs of one gated DeltaNet mixer (in_proj_qkvz, in_proj_ba, out_proj).
std::int64_t linear_attention_matmul_weights(const ModelSpec& model);
/// Weights of one FFN of width `ffn` (gate/up/down GEMMs only).
std::int64_t mlp_matmul_weights(const ModelSpec& model, std::int64_t ffn);

}  // namespace fmsim::workload
