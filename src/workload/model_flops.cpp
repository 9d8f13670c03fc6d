// Model FLOP counts: Megatron GEMM counting, 6N, PaLM/torchtitan and llm-foundry MPT.
#include "workload/model_flops.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::workload {
namespace {

// Head widths of the score (q·k) and value matmuls.
struct HeadDims {
  double qk;
  double v;
};

HeadDims head_dims(const ModelSpec& m) {
  if (m.mla)
    return {static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim),
            static_cast<double>(m.mla->v_head_dim)};
  return {static_cast<double>(m.head_dim), static_cast<double>(m.head_dim)};
}

std::int64_t logit_width(const ModelSpec& m, std::int64_t padded_vocab) {
  return padded_vocab > 0 ? padded_vocab : m.vocab;
}

}  // namespace

double ssm_scan_flops(const ModelSpec& m, std::int64_t seq_len) {
  if (!m.ssm) return 0.0;
  return 7.0 * static_cast<double>(seq_len) * static_cast<double>(m.ssm->inner) * m.ssm->state;
}

double linear_attention_core_flops(const ModelSpec& m, std::int64_t seq_len) {
  if (!m.linear) return 0.0;
  const LinearAttentionSpec& a = *m.linear;
  const double kd = static_cast<double>(a.key_heads) * a.key_head_dim;
  const double vd = static_cast<double>(a.value_heads) * a.value_head_dim;
  const double s = static_cast<double>(seq_len);
  return 2.0 * s * (a.conv_kernel * (2.0 * kd + vd) + 4.0 * a.value_heads * a.value_head_dim * a.value_head_dim);
}

std::string_view flop_convention_name(FlopConvention c) {
  switch (c) {
    case FlopConvention::Megatron: return "megatron";
    case FlopConvention::SixN: return "6n";
    case FlopConvention::PaLM: return "palm";
    case FlopConvention::Mpt: return "mpt";
  }
  return "megatron";
}

std::string_view attention_mask_name(AttentionMask m) { return m == AttentionMask::Causal ? "causal" : "full"; }

double attended_keys(const ModelSpec& m, int layer, std::int64_t seq_len, AttentionMask mask) {
  const double s = static_cast<double>(seq_len);
  const bool sliding = m.is_sliding_layer(layer) && m.sliding_window < seq_len;
  if (mask == AttentionMask::Full) return sliding ? static_cast<double>(m.sliding_window) : s;
  if (!sliding) return s / 2.0;
  // Query t attends to min(t + 1, W) keys; averaged over t = 0..s-1 (Megatron-Bridge flop_utils).
  const double w = static_cast<double>(m.sliding_window);
  return w - w * (w - 1.0) / (2.0 * s);
}

LayerFlops layer_forward_flops(const ModelSpec& m, int layer, std::int64_t seq_len, AttentionMask mask) {
  FMSIM_CHECK(layer >= 0 && layer < m.num_layers, "layer index out of range");
  const double s = static_cast<double>(seq_len);
  LayerFlops f;
  switch (m.mixer(layer)) {
    case MixerKind::Attention: {
      f.attention_linear = core::flops(2.0 * s * static_cast<double>(attention_matmul_weights(m)));
      const HeadDims d = head_dims(m);
      f.attention_core = core::flops(2.0 * s * attended_keys(m, layer, seq_len, mask) * m.num_heads * (d.qk + d.v));
      break;
    }
    case MixerKind::Mamba:
      f.attention_linear = core::flops(2.0 * s * static_cast<double>(ssm_matmul_weights(m)));
      f.attention_core = core::flops(ssm_scan_flops(m, seq_len));
      break;
    case MixerKind::LinearAttention: {
      f.attention_linear = core::flops(2.0 * s * static_cast<double>(linear_attention_matmul_weights(m)));
      f.attention_core = core::flops(linear_attention_core_flops(m, seq_len));
      break;
    }
    case MixerKind::None: break;
  }
  if (m.ffn(layer) == FfnKind::None) return f;
  if (m.is_moe_layer(layer)) {
    const double routed =
        static_cast<double>(m.moe.top_k) * static_cast<double>(mlp_matmul_weights(m, m.moe.expert_ffn));
    const double shared = static_cast<double>(mlp_matmul_weights(m, m.moe.shared_expert_ffn));
    f.mlp = core::flops(2.0 * s * (routed + shared));
    f.router = core::flops(2.0 * s * static_cast<double>(m.hidden) * m.moe.num_experts);
  } else {
    f.mlp = core::flops(2.0 * s * static_cast<double>(mlp_matmul_weights(m, m.ffn_hidden)));
  }
  return f;
}

core::Flops logits_forward_flops(const ModelSpec& m, std::int64_t seq_len, std::int64_t padded_vocab) {
  return core::flops(2.0 * static_cast<double>(seq_len) * static_cast<double>(m.hidden) *
                     static_cast<double>(logit_width(m, padded_vocab)));
}

core::Flops mtp_forward_flops(const ModelSpec& m, std::int64_t seq_len, AttentionMask mask, std::int64_t padded_vocab) {
  if (m.mtp_layers <= 0) return core::flops(0);
  const double s = static_cast<double>(seq_len);
  const double h = static_cast<double>(m.hidden);
  // Each module: concat(h, embedding) 2h -> h projection, one block like the last layer, logits.
  const core::Flops one = core::flops(2.0 * s * 2.0 * h * h) +
                          layer_forward_flops(m, m.num_layers - 1, seq_len, mask).model() +
                          logits_forward_flops(m, seq_len, padded_vocab);
  return one * static_cast<double>(m.mtp_layers);
}

core::Flops model_flops_per_step(const ModelSpec& m, std::int64_t global_batch, std::int64_t seq_len,
                                 const FlopOptions& options) {
  const double sequences = static_cast<double>(global_batch);
  const double tokens = sequences * static_cast<double>(seq_len);
  switch (options.convention) {
    case FlopConvention::Megatron: {
      core::Flops forward = logits_forward_flops(m, seq_len, options.padded_vocab);
      for (int i = 0; i < m.num_layers; ++i) forward += layer_forward_flops(m, i, seq_len, options.mask).model();
      if (options.include_mtp) forward += mtp_forward_flops(m, seq_len, options.mask, options.padded_vocab);
      // Backward = data gradient + weight gradient, each as costly as the forward GEMM.
      return forward * (3.0 * sequences);
    }
    case FlopConvention::SixN: return core::flops(6.0 * static_cast<double>(count_parameters(m).active) * tokens);
    case FlopConvention::PaLM: {
      const HeadDims d = head_dims(m);
      // 12·l·H·Q·s per token for equal q/k and v head widths, l = the attention layers.
      const double attention =
          6.0 * m.count_mixers(MixerKind::Attention) * m.num_heads * (d.qk + d.v) * static_cast<double>(seq_len);
      return core::flops((6.0 * static_cast<double>(count_parameters(m).active) + attention) * tokens);
    }
    case FlopConvention::Mpt: {
      const double attention =
          12.0 * m.count_mixers(MixerKind::Attention) * static_cast<double>(m.hidden) * static_cast<double>(seq_len);
      return core::flops((6.0 * static_cast<double>(count_parameters(m).active) + attention) * tokens);
    }
  }
  return core::flops(0);
}

core::Flops model_flops_per_token(const ModelSpec& m, std::int64_t seq_len, const FlopOptions& options) {
  return model_flops_per_step(m, 1, seq_len, options) / static_cast<double>(seq_len);
}

}  // namespace fmsim::workload
