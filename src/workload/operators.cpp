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

// `op` as part of `block` of the layer.
Operator in(OpBlock block, Operator op) {
  op.block = block;
  return op;
}

int head_dim_of(const ModelSpec& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<int>(m.hidden / std::max(1, m.num_heads));
}

// Keys each query attends to on average: s/2 for causal attention over a sequence of s tokens,
// the window for a sliding layer; with documents of d tokens packed into the sequence, a query sees
// only its own document's earlier tokens, d/2 on average (the block-diagonal causal mask of packed
// SFT), and never more than the window.
double effective_kv_len(const ModelSpec& model, int layer, double seq, double document) {
  double keys = seq / 2.0;  // causal
  // A window as long as the sequence masks nothing: the layer is plain causal attention.
  if (model.is_sliding_layer(layer) && model.sliding_window < seq) keys = static_cast<double>(model.sliding_window);
  if (document > 0.0 && document < seq) keys = std::min(keys, document / 2.0);
  return keys;
}

// Attention projections and core of one layer on one GPU.
void append_attention_operators(const ModelSpec& model, int layer, const ShardContext& ctx,
                                std::vector<Operator>& ops) {
  const double t = ctx.tp;
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  const double h = d(model.hidden);
  const double heads = model.num_heads;
  const double kv_heads = model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads;
  const double hd = head_dim_of(model);
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
      ops.push_back(in(OpBlock::MlaUpProj, gemm("q_up", tokens, q_width / t, a.q_lora_rank)));
    } else {
      ops.push_back(gemm("q_proj", tokens, q_width / t, h));
    }
    ops.push_back(gemm("kv_down", tokens, a.kv_lora_rank + a.qk_rope_head_dim, h));
    ops.push_back(
        in(OpBlock::MlaUpProj, gemm("kv_up", tokens, heads * (a.qk_nope_head_dim + a.v_head_dim) / t, a.kv_lora_rank)));
  } else {
    const double gate = model.attention_output_gate ? heads * hd : 0.0;
    ops.push_back(gemm("qkv_proj", tokens, ((heads + 2.0 * kv_heads) * hd + gate) / t, h));
    if (model.rope_yarn && model.position == PositionKind::Rope) {
      // YaRN attention runs Megatron-Core's unfused RoPE (Megatron-Bridge utils/fusions.py
      // validate_rope_fusion_compatibility turns apply_rope_fusion off for position_embedding_type
      // "yarn"; rope_utils.py _apply_rotary_pos_emb_bshd): t*cos, the negate and cat of
      // _rotate_half, *sin, the add and a final cat make 12 reads or writes of each rotated
      // element forward where the fused kernel makes 2, and their autograd about 10 backward
      // where it makes 2: 18 extra 16-bit accesses, 36 bytes per element of q and k. A memory op
      // is charged forward and twice again backward (kElementwiseBackwardRatio), so 12 bytes
      // forward. MLA keeps its fused RoPE (MLA models stay position_embedding_type "rope").
      ops.push_back(memory("rope_unfused", 12.0 * tokens * (heads + kv_heads) * hd / t));
    }
  }
  {
    Operator att;
    att.name = "attention";
    att.kind = OpKind::Attention;
    const double kv_len = effective_kv_len(model, layer, d(ctx.seq_len), d(ctx.document_tokens));
    // QK^T and PV: 2 GEMMs of 2*q*kv*dim FLOPs per head; this GPU holds heads/t heads and s/cp queries.
    att.flops = 2.0 * tokens * kv_len * (heads / t) * (qk_dim + v_width / heads);
    att.m = tokens;
    att.n = kv_len;
    att.k = qk_dim;
    ops.push_back(att);
  }
  ops.push_back(gemm("o_proj", tokens, h, v_width / t));
}

// Mamba mixer of one layer on one GPU: heads (and B/C groups) split over TP.
void append_ssm_operators(const ModelSpec& model, double tokens, double t, std::vector<Operator>& ops) {
  const SsmSpec& s = *model.ssm;
  const double h = d(model.hidden);
  const double inner = d(s.inner);
  const double bytes_per = 2.0;
  double conv_channels = inner;
  Operator scan;
  scan.name = "ssm_scan";
  scan.kind = OpKind::Scan;
  scan.m = tokens;
  if (s.version == 1) {
    ops.push_back(gemm("ssm_in_proj", tokens, 2.0 * inner / t, h));
    ops.push_back(gemm("ssm_x_proj", tokens, s.dt_rank + 2.0 * s.state, inner / t));
    ops.push_back(gemm("ssm_dt_proj", tokens, inner / t, s.dt_rank));
    // Selective scan (Gu & Dao 2023): per token and channel, discretise A and B over N states,
    // update and read out the state: 9 FLOPs per (channel, state); reads u, delta, z and B, C,
    // writes y (16-bit).
    scan.flops = 9.0 * tokens * inner / t * s.state;
    scan.bytes = tokens * (3.0 * inner / t + 2.0 * s.state + inner / t) * bytes_per;
    scan.weights = inner / t * (s.state + 1.0);
  } else {
    const double bc = 2.0 * s.groups * s.state;
    conv_channels = inner + bc;
    ops.push_back(gemm("ssm_in_proj", tokens, (2.0 * inner + bc + s.num_heads) / t, h));
    // SSD chunked scan (Dao & Gu 2024, ssd_combined.py): per chunk of Q tokens, the C·Bᵀ scores
    // (2·Q·N per token and group), scores·x (2·Q·P per token and head), chunk states and their
    // read-out (2·N·P each per token and head); causal masking halves the two Q terms.
    const double q = s.chunk, n = s.state, p = s.head_dim;
    const double heads = s.num_heads / t, groups = std::max(1.0, s.groups / t);
    scan.flops = tokens * (q * n * groups + q * p * heads + 4.0 * n * p * heads);
    // Bytes of the five unfused kernels (chunk_cumsum, bmm, chunk_state, state_passing, chunk_scan),
    // which the PyTorch team finds bound by memory bandwidth and latency ("Accelerating Mamba2 with
    // kernel fusion", pytorch.org/blog, 2025): x and B, C read twice and y written in 16 bits, the
    // C·Bᵀ chunk scores (G·Q per token, fp32) written and read, and the chunk states (H·P·N per
    // chunk, fp32) written by chunk_state, read and written by state_passing, read by chunk_scan.
    scan.bytes = tokens * ((3.0 * inner / t + 4.0 * groups * n) * bytes_per + 2.0 * groups * q * 4.0 +
                           4.0 * heads * p * n * 4.0 / q);
    scan.weights = 3.0 * heads;  // A_log, D, dt_bias
    scan.n = q;
    scan.k = n;
  }
  Operator conv = memory("ssm_conv1d", 2.0 * tokens * conv_channels / t * bytes_per);
  conv.weights = conv_channels / t * (s.conv_kernel + (s.conv_bias ? 1.0 : 0.0));
  ops.push_back(conv);
  ops.push_back(scan);
  // Gated RMSNorm y·silu(z): reads y and z, writes the out_proj input.
  Operator norm = memory("ssm_gated_norm", 3.0 * tokens * inner / t * bytes_per);
  norm.weights = s.version == 2 ? inner / t : 0.0;
  ops.push_back(norm);
  ops.push_back(gemm("ssm_out_proj", tokens, h, inner / t));
}

// Gated DeltaNet mixer of one layer on one GPU: heads split over TP.
void append_linear_attention_operators(const ModelSpec& model, double tokens, double t, std::vector<Operator>& ops) {
  const LinearAttentionSpec& a = *model.linear;
  const double h = d(model.hidden);
  const double kd = static_cast<double>(a.key_heads) * a.key_head_dim;
  const double vd = static_cast<double>(a.value_heads) * a.value_head_dim;
  const double bytes_per = 2.0;
  ops.push_back(gemm("gdn_in_proj", tokens, (2.0 * kd + 2.0 * vd + 2.0 * a.value_heads) / t, h));
  Operator conv = memory("gdn_conv1d", 2.0 * tokens * (2.0 * kd + vd) / t * bytes_per);
  conv.weights = (2.0 * kd + vd) / t * a.conv_kernel;
  ops.push_back(conv);
  Operator scan;
  scan.name = "gdn_recurrence";
  scan.kind = OpKind::Scan;
  scan.m = tokens;
  scan.flops = tokens * 8.0 * a.value_heads / t * a.value_head_dim * a.value_head_dim;
  scan.bytes = tokens * (2.0 * kd + 2.0 * vd) / t * bytes_per;
  scan.weights = 2.0 * a.value_heads / t;
  ops.push_back(scan);
  Operator norm = memory("gdn_gated_norm", 3.0 * tokens * vd / t * bytes_per);
  norm.weights = a.value_head_dim / t;
  ops.push_back(norm);
  ops.push_back(gemm("gdn_out_proj", tokens, h, vd / t));
}

// Bytes per token, split by TP, that the FFN of `layer` keeps for backward: its intermediates
// and FC2's GEMM input; for MoE each routed copy's permuted input too, and the router logits.
double ffn_saved_bytes(const ModelSpec& model, int layer, double gemm_in, double t) {
  const double h = d(model.hidden);
  const double up_mult = model.mlp == MlpKind::SwiGlu ? 2.0 : 1.0;
  if (!model.is_moe_layer(layer)) return 2.0 * up_mult * d(model.ffn_hidden) + gemm_in * d(model.ffn_hidden);
  const MoeSpec& moe = model.moe;
  // Each routed copy: the permuted input (FC1's GEMM input), FC1 output(s), FC2's GEMM input, and
  // one 16-bit h-wide tensor the routing-probability product keeps for its backward: Megatron-Core
  // weights the experts' outputs by the probabilities in unpermute (moe_apply_probs_on_input
  // False) and keeps those outputs; torchtitan's score_before_experts (default True) keeps the
  // gathered input beside the scaled one the grouped GEMM saves.
  double b = moe.top_k * (gemm_in * h + 2.0 * h + 2.0 * up_mult * d(moe.expert_ffn) + gemm_in * d(moe.expert_ffn));
  b += 4.0 * d(moe.num_experts) / t;  // router logits (fp32)
  if (moe.shared_expert_ffn > 0) b += 2.0 * up_mult * d(moe.shared_expert_ffn) + gemm_in * d(moe.shared_expert_ffn);
  return b;
}

// Activations of a hybrid layer (a Mamba or gated DeltaNet mixer, or a mixer or FFN alone), per
// token: each block keeps its norm input (2h, split by SP) and its first GEMM's input (h); the
// mixers keep, split by TP:
// - attention (fused kernel): Q, K, V, the output projection's input and the softmax statistics;
// - Mamba-2 (mamba_ssm MambaChunkScanCombinedFn saves x, z, B, C, dt, dA_cumsum and the output and
//   recomputes the chunk states in backward): in_proj's output (2·d + 2·G·N + H), the conv output
//   (d + 2·G·N), the scan output d in 16 bits, dt and dA_cumsum (H each, fp32), out_proj's input d;
// - Mamba-1: in_proj's output 2d, conv output d, x_proj output R + 2N, dt d, scan output d,
//   out_proj's input d;
// - gated DeltaNet: in_proj's output (2·Kd + 2·Vd + 2·Hv), the conv output (2·Kd + Vd), the
//   recurrence output Vd, out_proj's input Vd.
// Selective recompute drops only the attention core's statistics; per-op SAC is taken as selective.
ActivationBytes hybrid_activation_bytes(const ModelSpec& model, int layer, const ShardContext& ctx, double gemm_in) {
  const double t = ctx.tp;
  const double sp = ctx.sequence_parallel ? t : 1.0;
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  const double h = d(model.hidden);
  const double block_sp = 2.0 * h + gemm_in * h;
  double split_sp = 0.0, split_tp = 0.0, core = 0.0;
  switch (model.mixer(layer)) {
    case MixerKind::Attention: {
      const double heads = model.num_heads;
      const double kv_heads = model.num_kv_heads > 0 ? model.num_kv_heads : model.num_heads;
      const double hd = head_dim_of(model);
      split_sp += block_sp;
      split_tp += 2.0 * (heads + 2.0 * kv_heads) * hd + gemm_in * heads * hd;
      core = tokens * heads / t * 4.0 * 2.0;
      break;
    }
    case MixerKind::Mamba: {
      const SsmSpec& s = *model.ssm;
      const double inner = d(s.inner);
      split_sp += block_sp;
      if (s.version == 1) {
        split_tp += 2.0 * (2.0 * inner + inner + s.dt_rank + 2.0 * s.state + 2.0 * inner) + gemm_in * inner;
      } else {
        const double bc = 2.0 * s.groups * s.state;
        split_tp += 2.0 * (2.0 * inner + bc + s.num_heads) + 2.0 * (inner + bc) + 2.0 * inner + 8.0 * s.num_heads +
                    gemm_in * inner;
      }
      break;
    }
    case MixerKind::LinearAttention: {
      const LinearAttentionSpec& a = *model.linear;
      const double kd = static_cast<double>(a.key_heads) * a.key_head_dim;
      const double vd = static_cast<double>(a.value_heads) * a.value_head_dim;
      split_sp += block_sp;
      split_tp += 2.0 * (2.0 * kd + 2.0 * vd + 2.0 * a.value_heads) + 2.0 * (2.0 * kd + vd) + 2.0 * vd + gemm_in * vd;
      break;
    }
    case MixerKind::None: break;
  }
  if (model.ffn(layer) != FfnKind::None) {
    split_sp += block_sp;
    split_tp += ffn_saved_bytes(model, layer, gemm_in, t);
  }
  ActivationBytes out;
  out.selective = tokens * (split_sp / sp + split_tp / t);
  out.none = out.selective + core;
  out.op_sac = out.selective;
  out.full = tokens * 2.0 * h / sp;
  return out;
}

}  // namespace

std::vector<Operator> layer_operators(const ModelSpec& model, int layer, const ShardContext& ctx) {
  std::vector<Operator> ops;
  ops.reserve(16);
  const double t = ctx.tp;
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;  // tokens of this CP rank
  const double h = d(model.hidden);
  // Activation traffic of 16-bit values; with sequence parallelism norms/residuals are split t ways.
  const double sp = ctx.sequence_parallel ? t : 1.0;
  const double bytes_per = 2.0;

  // Sequence mixer.
  const MixerKind mixer = model.mixer(layer);
  if (mixer == MixerKind::Attention) append_attention_operators(model, layer, ctx, ops);
  if (mixer == MixerKind::Mamba) append_ssm_operators(model, tokens, t, ops);
  if (mixer == MixerKind::LinearAttention) append_linear_attention_operators(model, tokens, t, ops);
  // Per block (mixer, FFN): its norm, residual add, RoPE/bias: ~6 h-wide reads+writes per token.
  const double blocks = (mixer != MixerKind::None ? 1.0 : 0.0) + (model.ffn(layer) != FfnKind::None ? 1.0 : 0.0);
  ops.push_back(in(OpBlock::Norms, memory("norms_residuals", 6.0 * blocks * tokens * h * bytes_per / sp)));

  // Feed-forward.
  if (model.ffn(layer) == FfnKind::None) return ops;

  const bool swiglu = model.mlp == MlpKind::SwiGlu;
  const double up_mult = swiglu ? 2.0 : 1.0;
  if (model.is_moe_layer(layer)) {
    const MoeSpec& moe = model.moe;
    const double local_tokens = tokens / t;  // tokens this GPU dispatches (sequence-split over TP)
    ops.push_back(in(OpBlock::Moe, gemm("router", local_tokens, moe.num_experts, h)));
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
    Operator up = in(OpBlock::Moe, gemm("expert_fc1", per_expert, up_mult * f_e, h, true));
    up.kind = OpKind::GroupedGemm;
    up.groups = static_cast<int>(experts_here);
    up.flops *= experts_here;
    up.weights *= experts_here;
    ops.push_back(up);
    Operator act = in(OpBlock::MoeAct, memory("expert_act", expert_tokens * f_e * (up_mult + 1.0) * bytes_per));
    act.expert = true;
    ops.push_back(act);
    if (model.activation_clamp > 0.0 && swiglu) {
      // The clamp runs outside Megatron-Core's fused gated activation (fusions/fused_bias_geglu.py
      // weighted_bias_quick_geglu_impl: chunk, clamp of each half, cat): 8 reads or writes of f
      // per row forward, about 10 backward (the clamps' masked gradients and the chunk's cat),
      // 36 bytes of f per token-expert row; charged as 12 forward (twice again backward).
      Operator clamp = in(OpBlock::MoeAct, memory("expert_clamp", 12.0 * expert_tokens * f_e));
      clamp.expert = true;
      ops.push_back(clamp);
    }
    Operator down = in(OpBlock::Moe, gemm("expert_fc2", per_expert, h, f_e, true));
    down.kind = OpKind::GroupedGemm;
    down.groups = static_cast<int>(experts_here);
    down.flops *= experts_here;
    down.weights *= experts_here;
    ops.push_back(down);
    if (model.mlp_bias) {
      // FC2's bias is added outside the grouped GEMM (Megatron-Core moe/experts.py: linear_fc2 with
      // skip_bias_add, TEGroupedMLP._apply_bias): t + b * p per local expert with the fp32 router
      // probabilities, a cat and a cast back to 16 bits, 28 bytes of h per token-expert row
      // forward and about 44 backward (72; charged as 24 forward, twice again backward), in
      // 2 kernels per local expert plus the cat and the cast.
      Operator bias = in(OpBlock::Moe, memory("expert_bias", 24.0 * expert_tokens * h));
      bias.expert = true;
      bias.groups = 2 * static_cast<int>(experts_here) + 2;
      ops.push_back(bias);
    }
    Operator combine = dispatch;
    combine.name = "combine";
    ops.push_back(combine);
    // Permutation before the experts and unpermutation after: each reads and writes the top_k
    // copies of every token (4 passes over local_tokens x top_k x hidden activations).
    ops.push_back(in(OpBlock::Moe, memory("permute_unpermute", 4.0 * local_tokens * moe.top_k * h * bytes_per)));
    if (moe.shared_expert_ffn > 0) {
      const double fs = d(moe.shared_expert_ffn) / t;
      ops.push_back(in(OpBlock::SharedExperts, gemm("shared_fc1", tokens, up_mult * fs, h)));
      ops.push_back(in(OpBlock::SharedExperts, memory("shared_act", tokens * fs * (up_mult + 1.0) * bytes_per)));
      ops.push_back(in(OpBlock::SharedExperts, gemm("shared_fc2", tokens, h, fs)));
    }
  } else {
    const double f = d(model.ffn_hidden) / t;
    ops.push_back(in(OpBlock::Mlp, gemm("fc1", tokens, up_mult * f, h)));
    ops.push_back(in(OpBlock::Mlp, memory("activation", tokens * f * (up_mult + 1.0) * bytes_per)));
    ops.push_back(in(OpBlock::Mlp, gemm("fc2", tokens, h, f)));
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
  ops.reserve(3);
  ops.push_back(memory("final_norm", 2.0 * tokens * d(model.hidden) * 2.0 / (ctx.sequence_parallel ? ctx.tp : 1)));
  ops.push_back(gemm("lm_head", tokens, d(model.vocab) / ctx.tp, d(model.hidden)));
  if (model.tied_embeddings) ops.back().weights = 0;
  // Softmax cross-entropy over fp32 logits: read logits, write gradients.
  ops.push_back(memory("loss", 3.0 * tokens * d(model.vocab) / ctx.tp * 4.0));
  return ops;
}

std::vector<Operator> mtp_operators(const ModelSpec& model, const ShardContext& ctx) {
  const double tokens = d(ctx.micro_batch) * d(ctx.seq_len) / ctx.cp;
  const double h = d(model.hidden);
  const double sp = ctx.sequence_parallel ? ctx.tp : 1.0;
  std::vector<Operator> ops;
  ops.reserve(5);
  ops.push_back(memory("mtp_norms", 2.0 * 2.0 * tokens * h * 2.0 / sp));
  ops.push_back(gemm("mtp_eh_proj", tokens, h / ctx.tp, 2.0 * h));
  for (Operator& op : head_operators(model, ctx)) {
    if (op.name == "lm_head") op.weights = 0;  // shared with the main model's output head
    ops.push_back(op);
  }
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
  if (model.mixer(layer) != MixerKind::Attention || model.ffn(layer) == FfnKind::None) {
    return hybrid_activation_bytes(model, layer, ctx, gemm_in);
  }
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
  split_tp += ffn_saved_bytes(model, layer, gemm_in, t);
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
  // The QKV and FC1 inputs kept all-gathered (ActivationOptions::gathered_tp_inputs) are whole on
  // every rank.
  const bool gathered = options.gathered_tp_inputs && ctx.sequence_parallel && t > 1.0;
  if (gathered) {
    split_sp -= 2.0 * gemm_in * h;
    unsplit += 2.0 * gemm_in * h;
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
  // Megatron-Core recompute_modules: what each repeated submodule no longer keeps.
  auto& mod = out.modules;
  mod.core_attn = core;
  mod.layernorm = tokens * 2.0 * gemm_in * h / (gathered ? 1.0 : sp);
  if (model.mla) {
    const MlaSpec& a = *model.mla;
    mod.mla_up_proj = tokens * 2.0 * heads * (2.0 * (a.qk_nope_head_dim + a.qk_rope_head_dim) + a.v_head_dim) / t;
  }
  const double ffn = tokens * ffn_saved_bytes(model, layer, gemm_in, t) / t;
  if (model.is_moe_layer(layer)) {
    const MoeSpec& moe = model.moe;
    mod.moe = ffn;
    mod.moe_act = tokens * moe.top_k * gemm_in * d(moe.expert_ffn) / t;
    if (moe.shared_expert_ffn > 0) {
      mod.shared_experts =
          tokens * ((swiglu ? 4.0 : 2.0) * d(moe.shared_expert_ffn) + gemm_in * d(moe.shared_expert_ffn)) / t;
    }
  } else {
    mod.mlp = ffn;
  }
  return out;
}

}  // namespace fmsim::workload
