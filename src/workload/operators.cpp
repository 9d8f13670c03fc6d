// Operator lists of dense, GQA, MLA, MoE and sliding-window transformer layers.
#include "workload/operators.hpp"

#include <algorithm>

namespace fmsim::workload {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

Operator gemm(std::string_view name, double m, double n, double k, bool expert = false) {
  Operator op;
  op.name = name;
  op.kind = OpKind::Gemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flops = 2.0 * m * n * k;
  op.weights = n * k;
  op.expert = expert;
  return op;
}

Operator memory(std::string_view name, double bytes) {
  Operator op;
  op.name = name;
  op.kind = OpKind::Memory;
  op.bytes = bytes;
  return op;
}

int head_dim_of(const ModelSpec& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<int>(m.hidden / std::max(1, m.num_heads));
}

// Fraction of keys each query attends to on average, times the sequence length.
double effective_kv_len(const ModelSpec& model, int layer, double seq) {
  if (model.is_sliding_layer(layer)) return std::min(static_cast<double>(model.sliding_window), seq);
  return seq / 2.0;  // causal
}

}  // namespace

std::vector<Operator> layer_operators(const ModelSpec& model, int layer, const ShardContext& ctx) {
  std::vector<Operator> ops;
  ops.reserve(16);
  const double t = ctx.tp;
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;  // tokens of this CP rank
  const double h = d(model.hidden);
  const double heads = model.num_heads;
  const double kv_heads = model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads;
  const double hd = head_dim_of(model);
  // Activation traffic of 16-bit values; with sequence parallelism norms/residuals are split t ways.
  const double sp = ctx.sequence_parallel ? t : 1.0;
  const double bytes_per = 2.0;

  // Attention.
  double q_width = heads * hd;
  double v_width = heads * hd;
  double qk_dim = hd;
  if (model.mla) {
    const MlaSpec& a = *model.mla;
    qk_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
    q_width = heads * qk_dim;
    v_width = heads * a.v_head_dim;
    if (a.q_lora_rank > 0) {
      ops.push_back(gemm("q_down", tokens, a.q_lora_rank, h));  // replicated across TP in Megatron
      ops.push_back(gemm("q_up", tokens, q_width / t, a.q_lora_rank));
    } else {
      ops.push_back(gemm("q_proj", tokens, q_width / t, h));
    }
    ops.push_back(gemm("kv_down", tokens, a.kv_lora_rank + a.qk_rope_head_dim, h));
    ops.push_back(gemm("kv_up", tokens, heads * (a.qk_nope_head_dim + a.v_head_dim) / t, a.kv_lora_rank));
  } else {
    ops.push_back(gemm("qkv_proj", tokens, (heads + 2.0 * kv_heads) * hd / t, h));
  }
  {
    Operator att;
    att.name = "attention";
    att.kind = OpKind::Attention;
    const double kv_len = effective_kv_len(model, layer, d(ctx.seq_len));
    // QK^T and PV: 2 GEMMs of 2*q*kv*dim FLOPs per head; this GPU holds heads/t heads and s/cp queries.
    att.flops = 2.0 * tokens * kv_len * (heads / t) * (qk_dim + v_width / heads);
    att.m = tokens;
    att.n = kv_len;
    att.k = qk_dim;
    ops.push_back(att);
  }
  ops.push_back(gemm("o_proj", tokens, h, v_width / t));
  // Norms (2), residual adds (2), RoPE, bias/dropout: ~12 h-wide reads+writes per token.
  ops.push_back(memory("norms_residuals", 12.0 * tokens * h * bytes_per / sp));

  // Feed-forward.
  const bool swiglu = model.mlp == MlpKind::SwiGlu;
  const double up_mult = swiglu ? 2.0 : 1.0;
  if (model.is_moe_layer(layer)) {
    const MoeSpec& moe = model.moe;
    const double local_tokens = tokens / t;  // tokens this GPU dispatches (sequence-split over TP)
    ops.push_back(gemm("router", local_tokens, moe.num_experts, h));
    ops.back().weights = d(moe.num_experts) * h / t;  // replicated; count a 1/t share to sum exactly
    Operator dispatch;
    dispatch.name = "dispatch";
    dispatch.kind = OpKind::AllToAll;
    dispatch.bytes = local_tokens * moe.top_k * h * bytes_per;
    ops.push_back(dispatch);
    // Balanced routing: this GPU's experts receive tokens * top_k / t token-copies in total.
    const double experts_here = static_cast<double>(moe.num_experts) / ctx.ep;
    const double expert_tokens = local_tokens * moe.top_k * ctx.etp;  // etp ranks share each token
    const double f_e = d(moe.expert_ffn) / ctx.etp;
    const double per_expert = expert_tokens / experts_here;
    Operator up = gemm("expert_fc1", per_expert, up_mult * f_e, h, true);
    up.kind = OpKind::GroupedGemm;
    up.groups = static_cast<int>(experts_here);
    up.flops *= experts_here;
    up.weights *= experts_here;
    ops.push_back(up);
    ops.push_back(memory("expert_act", expert_tokens * f_e * (up_mult + 1.0) * bytes_per));
    Operator down = gemm("expert_fc2", per_expert, h, f_e, true);
    down.kind = OpKind::GroupedGemm;
    down.groups = static_cast<int>(experts_here);
    down.flops *= experts_here;
    down.weights *= experts_here;
    ops.push_back(down);
    Operator combine = dispatch;
    combine.name = "combine";
    ops.push_back(combine);
    // Permutation before the experts and unpermutation after: each reads and writes the top_k
    // copies of every token (4 passes over local_tokens x top_k x hidden activations).
    ops.push_back(memory("permute_unpermute", 4.0 * local_tokens * moe.top_k * h * bytes_per));
    if (moe.shared_expert_ffn > 0) {
      const double fs = d(moe.shared_expert_ffn) / t;
      ops.push_back(gemm("shared_fc1", tokens, up_mult * fs, h));
      ops.push_back(memory("shared_act", tokens * fs * (up_mult + 1.0) * bytes_per));
      ops.push_back(gemm("shared_fc2", tokens, h, fs));
    }
  } else {
    const double f = d(model.ffn_hidden) / t;
    ops.push_back(gemm("fc1", tokens, up_mult * f, h));
    ops.push_back(memory("activation", tokens * f * (up_mult + 1.0) * bytes_per));
    ops.push_back(gemm("fc2", tokens, h, f));
  }
  return ops;
}

std::vector<Operator> embedding_operators(const ModelSpec& model, const ShardContext& ctx) {
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  Operator op = memory("embedding", 2.0 * tokens * d(model.hidden) * 2.0);
  op.weights = d(model.vocab) * d(model.hidden) / ctx.tp;
  return {op};
}

std::vector<Operator> head_operators(const ModelSpec& model, const ShardContext& ctx) {
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  std::vector<Operator> ops;
  ops.push_back(memory("final_norm", 2.0 * tokens * d(model.hidden) * 2.0 / (ctx.sequence_parallel ? ctx.tp : 1)));
  ops.push_back(gemm("lm_head", tokens, d(model.vocab) / ctx.tp, d(model.hidden)));
  if (model.tied_embeddings) ops.back().weights = 0;
  // Softmax cross-entropy over fp32 logits: read logits, write gradients.
  ops.push_back(memory("loss", 3.0 * tokens * d(model.vocab) / ctx.tp * 4.0));
  return ops;
}

ActivationBytes layer_activation_bytes(const ModelSpec& model, int layer, const ShardContext& ctx,
                                       const ActivationOptions& options) {
  const double t = ctx.tp;
  const double sp = ctx.sequence_parallel ? t : 1.0;
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  const double h = d(model.hidden);
  const double heads = model.num_heads;
  const double kv_heads = model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads;
  const double hd = head_dim_of(model);
  const double gemm_in = options.fp8_inputs ? 1.0 : 2.0;  // bytes of a saved GEMM input
  // Bytes saved per token (Korthikanti et al. 2022, Table 2, generalised). Split by sequence
  // parallelism: the two norm inputs (2 x 2h) and the QKV and FC1 inputs (GEMM inputs, h each).
  // Split by TP: Q, K, V, the attention output (the projection's GEMM input), the FFN intermediates.
  double split_sp = 4.0 * h + 2.0 * gemm_in * h;
  double split_tp = 2.0 * (heads + 2.0 * kv_heads) * hd + gemm_in * heads * hd;
  double unsplit = 0.0;  // per token on every TP rank (gathered, not split by TP or SP)
  if (model.mla) {
    // MLA (DeepSeek-V2/V3; Megatron-Core MultiLatentAttention): flash attention keeps Q and K of
    // heads x (nope + rope) and V of heads x v_head_dim in 16 bits, the output (the projection's
    // GEMM input) heads x v_head_dim; the up-projections' GEMM inputs are the latents (q_lora_rank,
    // kv_lora_rank), gathered over the sequence-parallel ranks (the down-projections are not split
    // by TP), and their RMSNorm inputs (with the decoupled RoPE key) stay sequence-split.
    const MlaSpec& a = *model.mla;
    const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const double v = a.v_head_dim > 0 ? a.v_head_dim : hd;
    split_tp = 2.0 * heads * (2.0 * qk + v) + gemm_in * heads * v;
    unsplit += gemm_in * (a.q_lora_rank + a.kv_lora_rank);
    split_sp += 2.0 * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim);
  }
  const bool swiglu = model.mlp == MlpKind::SwiGlu;
  const double up_mult = swiglu ? 2.0 : 1.0;
  if (model.is_moe_layer(layer)) {
    const MoeSpec& moe = model.moe;
    const double copies = moe.top_k;
    // Each routed copy: the permuted input (FC1's GEMM input), FC1 output(s), FC2's GEMM input, and
    // one 16-bit h-wide tensor the routing-probability product keeps for its backward: Megatron-Core
    // weights the experts' outputs by the probabilities in unpermute (moe_apply_probs_on_input
    // False) and keeps those outputs; torchtitan's score_before_experts (default True) keeps the
    // gathered input beside the scaled one the grouped GEMM saves.
    split_tp += copies * (gemm_in * h + 2.0 * h + 2.0 * up_mult * d(moe.expert_ffn) + gemm_in * d(moe.expert_ffn));
    split_tp += 4.0 * d(moe.num_experts) / t;  // router logits (fp32)
    if (moe.shared_expert_ffn > 0)
      split_tp += 2.0 * up_mult * d(moe.shared_expert_ffn) + gemm_in * d(moe.shared_expert_ffn);
  } else {
    split_tp += 2.0 * up_mult * d(model.ffn_hidden) + gemm_in * d(model.ffn_hidden);
  }
  double core = 0.0;  // attention core, dropped by selective recompute
  if (options.flash_attention) {
    core = tokens * heads / t * 4.0 * 2.0;  // softmax max and sum (fp32)
  } else {
    // Scores/softmax output (2), dropout mask (1) and dropout output (2) bytes per score entry,
    // causal kernels of the time still materialise the whole s x s block.
    const double s = d(ctx.seq_len) / ctx.cp;
    core = 5.0 * heads / t * s * s * d(ctx.micro_batch);
    split_sp += 2.0 * h;  // dropout masks after attention and MLP (1 byte each)
  }
  ActivationBytes out;
  const double kept = tokens * (split_sp / sp + split_tp / t + unsplit);
  {
    // torch per-op selective checkpointing (torchtitan's "op" policy): the block input, every
    // other matmul output in execution order, the attention output and its log-sum-exp (fp32).
    std::vector<double> mm{heads * hd, kv_heads * hd, kv_heads * hd, h};
    if (model.is_moe_layer(layer)) {
      const MoeSpec& moe = model.moe;
      for (int c = 0; c < (swiglu ? 2 : 1); ++c) mm.push_back(moe.top_k * d(moe.expert_ffn));
      mm.push_back(moe.top_k * h);
    } else {
      for (int c = 0; c < (swiglu ? 2 : 1); ++c) mm.push_back(d(model.ffn_hidden));
      mm.push_back(h);
    }
    double saved = 0.0;
    for (std::size_t i = 0; i < mm.size(); i += 2) saved += mm[i];
    out.op_sac = tokens * (2.0 * h / sp + 2.0 * (saved + heads * hd) / t + 4.0 * heads / t);
  }
  out.selective = kept;
  out.none = kept + core;
  out.full = tokens * 2.0 * h / sp;
  return out;
}

}  // namespace fmsim::workload
