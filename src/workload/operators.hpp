// Per-operator FLOPs, bytes and weights of one transformer layer on one GPU, after sharding.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "workload/model_spec.hpp"

namespace fmsim::workload {

enum class OpKind {
  Gemm,         ///< dense matmul: m x k times k x n
  GroupedGemm,  ///< expert matmuls: `groups` GEMMs of m x k times k x n (m = tokens per expert)
  Attention,    ///< fused (flash) attention core: QK^T, softmax, PV
  Scan,         ///< state-space scan (Mamba-2 SSD chunked scan) or gated DeltaNet recurrence: FLOPs and bytes
  Memory,       ///< memory-bound elementwise work (norms, activations, residuals, RoPE, casts)
  AllToAll,     ///< marker for MoE token dispatch/combine (the bytes; time comes from the network)
};

/// One operator of the forward pass on one GPU. Backward costs follow from the kind:
/// GEMMs 2x (input and weight gradients), attention 2.5x (flash backward), memory ops 2x.
/// The block of the layer an operator belongs to, as Megatron-Core's recompute_modules name them
/// (the training model repeats a block's forward under --recompute-modules): set where the operator
/// is built, so no model compares names. Attention and the all-to-all are told by their kind.
enum class OpBlock : std::uint8_t {
  Other,          ///< in no recompute module (projections, the mixer's own ops, embedding, head)
  MlaUpProj,      ///< mla_up_proj: MLA's q_up and kv_up
  Mlp,            ///< mlp: a dense layer's fc1, activation, fc2
  MoeAct,         ///< moe_act: the routed experts' activation
  SharedExperts,  ///< shared_experts: the shared expert's fc1, activation, fc2
  Moe,            ///< moe: router, expert GEMMs, permute/unpermute
  Norms,          ///< layernorm: the norms/residuals pass (layer norms are a third of it)
};

struct Operator {
  std::string_view name;
  OpKind kind = OpKind::Gemm;
  OpBlock block = OpBlock::Other;
  double m = 0, n = 0, k = 0;  ///< GEMM shape on this GPU (m = tokens)
  int groups = 1;              ///< grouped GEMM: expert GEMMs on this GPU; memory op: its forward kernels
  double flops = 0;            ///< forward FLOPs on this GPU
  double bytes = 0;            ///< forward HBM bytes of memory-bound work (16-bit activations)
  double weights = 0;          ///< parameters of this op held on this GPU
  bool expert = false;         ///< belongs to routed experts (sharded by ep*etp, not tp)
};

/// How one layer is split across GPUs for one micro-batch.
struct ShardContext {
  std::int64_t micro_batch = 1;  ///< sequences
  std::int64_t seq_len = 2048;
  int tp = 1;
  int cp = 1;
  int ep = 1;
  int etp = 1;
  bool sequence_parallel = true;
  /// Mean length of the documents packed into each sequence (SFT sequence packing: NeMo's packed
  /// datasets, TE's THD layout with cu_seqlens); attention stays inside a document. 0 = one document
  /// per sequence.
  std::int64_t document_tokens = 0;
};

/// Forward operators of transformer layer `layer` (0-based) on one GPU. Mamba-2 layers (Megatron-Core
/// MambaMixer: heads and groups split over TP) run in_proj (column-parallel), the depthwise conv1d,
/// the SSD chunked scan and the gated RMSNorm, then out_proj (row-parallel); Mamba-1 adds x_proj
/// and dt_proj. Gated DeltaNet layers run in_proj_qkvz/ba, conv1d, the chunked delta-rule
/// recurrence, the gated norm and out_proj. FFN-only layers (Nemotron-H "-"/"E") have no mixer.
/// Assumptions: causal attention computed by a fused kernel (FLOPs = 4*b*s*s_kv*heads*head_dim with
/// s_kv = s/2 for full causal, min(window, s) for sliding layers, at most d/2 for packed documents
/// of d tokens), balanced MoE routing (every
/// expert gets tokens*top_k/experts tokens), Megatron sharding (column-parallel QKV/FC1,
/// row-parallel O/FC2; experts split ep ways, each expert's FFN etp ways).
std::vector<Operator> layer_operators(const ModelSpec& model, int layer, const ShardContext& ctx);

/// Input embedding (first pipeline stage): a lookup, memory-bound.
std::vector<Operator> embedding_operators(const ModelSpec& model, const ShardContext& ctx);

/// Output head and loss (last pipeline stage): vocab-parallel GEMM, softmax and cross-entropy.
std::vector<Operator> head_operators(const ModelSpec& model, const ShardContext& ctx);

/// One multi-token-prediction module's own operators beyond its transformer block (DeepSeek-V3
/// §2.2): the norms of the hidden state and of the next token's embedding, the 2h -> h projection
/// (eh_proj, column-parallel), and its output head (shared weights) with the loss.
std::vector<Operator> mtp_operators(const ModelSpec& model, const ShardContext& ctx);

/// Bytes of activations one layer stores for backward, per micro-batch on one GPU, by what the
/// recompute policy keeps (Korthikanti et al. 2022, Table 2: 34 s b h / t + 5 a s^2 b / t bytes
/// per layer without recompute, with sequence parallelism; generalised to GQA, SwiGLU and MoE).
struct ActivationBytes {
  double none = 0;       ///< everything
  double selective = 0;  ///< attention core (scores, softmax, dropout) recomputed: Megatron's "selective"
  double full = 0;       ///< layer input only
  double op_sac = 0;     ///< torch per-op selective checkpointing: every other matmul output kept
  /// What recomputing each Megatron-Core recompute_modules entry frees (bytes, included in `none`).
  struct Modules {
    double core_attn = 0;       ///< attention core (softmax statistics, or the s^2 tensors)
    double layernorm = 0;       ///< norm outputs kept as the QKV/FC1 GEMM inputs
    double mla_up_proj = 0;     ///< MLA Q, K, V (the up-projections' outputs)
    double mlp = 0;             ///< dense MLP intermediates
    double moe = 0;             ///< the whole MoE block (routed copies, router, shared experts)
    double moe_act = 0;         ///< routed experts' activation outputs (FC2's GEMM inputs)
    double shared_experts = 0;  ///< shared experts' intermediates
  } modules;
};

/// How the framework stores activations.
struct ActivationOptions {
  bool flash_attention = true;  ///< fused attention: no s^2 tensors, only softmax statistics; no dropout masks
  bool fp8_inputs = false;      ///< GEMM inputs saved in FP8 (Transformer Engine): 1 byte instead of 2
  /// Tensor parallelism through DTensor (torchtitan: ColwiseParallel after a SequenceParallel norm):
  /// the column-parallel GEMMs (QKV, FC1) keep their all-gathered input for the weight gradient,
  /// whole on every TP rank, where Megatron-Core and Transformer Engine keep the sequence-split
  /// input and gather it again in backward.
  bool gathered_tp_inputs = false;
};
ActivationBytes layer_activation_bytes(const ModelSpec& model, int layer, const ShardContext& ctx,
                                       const ActivationOptions& options = {});

}  // namespace fmsim::workload
