// Model FLOPs of a transformer training step under the published counting conventions.
//
// Conventions (docs/models/workload.md gives the formulas and their sources):
//   Megatron  GEMM FLOPs, fwd + bwd = 3 x forward, no recomputation: Narayanan et al., SC21
//             (arXiv:2104.04473) eq. 3 and Appendix, 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) for a
//             GPT with MHA and a 4h GeLU FFN; generalised to GQA, SwiGLU, MoE, MLA and sliding
//             windows by counting every GEMM as Megatron-LM `num_floating_point_operations` and
//             Megatron-Bridge `flop_utils.py` do. The mask is selectable: the SC21 paper, Megatron-LM
//             `training.py` and NeMo `flops_formulas.py` count the full s x s score matrix,
//             Megatron-Bridge counts half (causal).
//   SixN      6·N per token (Kaplan et al. 2020), N = active parameters without lookup tables.
//   PaLM      6·N + 12·l·H·Q·s per token (Chowdhery et al. 2022, PaLM, Appendix B); torchtitan's
//             MFU. Full (non-causal) attention.
//   Mpt       llm-foundry MPT MFU: 3·(2·N·s + 4·l·d·s²) per sequence; full attention, N without
//             the learned position table.
// Domain of validity: decoder-only transformers; norms, activations, softmax and optimizer
// FLOPs are not counted by any of these conventions.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/units.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::workload {

/// How the score and value matmuls of attention are counted.
enum class AttentionMask {
  Causal,  ///< each query attends to s/2 keys on average (Megatron-Bridge flop_utils.py)
  Full,    ///< each query attends to s keys (SC21 paper, Megatron-LM training.py, NeMo flops_formulas.py)
};

/// Which published FLOP count to reproduce.
enum class FlopConvention { Megatron, SixN, PaLM, Mpt };

/// Lower-case name used on the command line and in reports: "megatron", "6n", "palm", "mpt".
std::string_view flop_convention_name(FlopConvention c);
std::string_view attention_mask_name(AttentionMask m);

struct FlopOptions {
  FlopConvention convention = FlopConvention::Megatron;
  AttentionMask mask = AttentionMask::Causal;  ///< read by Megatron only (PaLM/Mpt are full, 6N has none)
  std::int64_t padded_vocab = 0;               ///< logit width; Megatron pads to a multiple of 128·TP; 0 = model.vocab
  bool include_mtp = false;  ///< count DeepSeek-V3's MTP modules (Megatron-Bridge does when training them)
};

/// Forward FLOPs of one layer for one sequence, by GEMM group.
struct LayerFlops {
  core::Flops attention_linear;  ///< the mixer's projections: q/k/v/o (or MLA), Mamba in/out, DeltaNet in/out
  core::Flops attention_core;    ///< q·kᵀ and scores·v; the Mamba scan or the DeltaNet recurrence
  core::Flops mlp;               ///< dense FFN, or top_k routed experts + shared experts
  core::Flops router;            ///< h x E router GEMM (not counted by the Megatron convention)
  /// Everything the Megatron convention counts (all but the router).
  [[nodiscard]] core::Flops model() const { return attention_linear + attention_core + mlp; }
  friend bool operator==(const LayerFlops&, const LayerFlops&) = default;
};

/// Average number of keys a query attends to in layer `layer` (sliding windows included):
/// Full: min(W, s); Causal: s/2, or W - W(W-1)/(2s) for a window W < s (Megatron-Bridge).
double attended_keys(const ModelSpec& model, int layer, std::int64_t seq_len, AttentionMask mask);

/// Forward FLOPs of layer `layer` (0-based) for one sequence of `seq_len` tokens, assuming
/// perfectly balanced routing (each token reaches exactly top_k experts). Mamba and gated DeltaNet
/// mixers follow Megatron-Bridge flop_utils.py (`mamba_layer_flops`, `gdn_layer_flops`): scan
/// 7·s·d_inner·N; DeltaNet conv 2·s·K·(2·Kd + Vd) and recurrence 8·s·Hv·Dv².
LayerFlops layer_forward_flops(const ModelSpec& model, int layer, std::int64_t seq_len, AttentionMask mask);

/// Forward FLOPs of one Mamba scan over a sequence (Megatron-Bridge: 7·s·d_inner·N); 0 without SSM.
double ssm_scan_flops(const ModelSpec& model, std::int64_t seq_len);
/// Forward FLOPs of one gated DeltaNet's conv and recurrence (Megatron-Bridge gdn_layer_flops).
double linear_attention_core_flops(const ModelSpec& model, std::int64_t seq_len);

/// Forward FLOPs of the output projection for one sequence: 2·s·h·V (V = padded_vocab if > 0).
core::Flops logits_forward_flops(const ModelSpec& model, std::int64_t seq_len, std::int64_t padded_vocab = 0);

/// Forward FLOPs of all MTP modules for one sequence (eh projection, one block, logits each).
core::Flops mtp_forward_flops(const ModelSpec& model, std::int64_t seq_len, AttentionMask mask,
                              std::int64_t padded_vocab = 0);

/// Model FLOPs of one training step (forward and backward, no recomputation) over
/// `global_batch` sequences of `seq_len` tokens, under `options.convention`. MFU =
/// this / (step time · GPUs · peak FLOP/s).
core::Flops model_flops_per_step(const ModelSpec& model, std::int64_t global_batch, std::int64_t seq_len,
                                 const FlopOptions& options = {});

/// model_flops_per_step / (global_batch · seq_len).
core::Flops model_flops_per_token(const ModelSpec& model, std::int64_t seq_len, const FlopOptions& options = {});

}  // namespace fmsim::workload
