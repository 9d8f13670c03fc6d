// Parameter counting from a ModelSpec's dimensions.
#include "workload/parameter_count.hpp"

namespace fmsim::workload {
namespace {

std::int64_t norm_size(const ModelSpec& m, std::int64_t width) {
  return m.norm == NormKind::LayerNorm ? 2 * width : width;
}

std::int64_t mlp_parameters(const ModelSpec& m, std::int64_t ffn) {
  if (ffn <= 0) return 0;
  std::int64_t p = mlp_matmul_weights(m, ffn);
  if (m.mlp_bias) p += (m.mlp == MlpKind::SwiGlu ? 2 * ffn : ffn) + m.hidden;
  return p;
}

std::int64_t attention_parameters(const ModelSpec& m) {
  std::int64_t p = attention_matmul_weights(m);
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    // The two RMSNorms inside MLA, on the compressed query and key/value latents.
    p += a.q_lora_rank + a.kv_lora_rank;
    return p;
  }
  const std::int64_t q = static_cast<std::int64_t>(m.num_heads) * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.num_kv_heads) * m.head_dim;
  if (m.attention_bias) p += q + 2 * kv + m.hidden;
  if (m.qk_norm) p += 2 * static_cast<std::int64_t>(m.head_dim);
  return p;
}

std::int64_t ssm_parameters(const ModelSpec& m) {
  if (!m.ssm) return 0;
  const SsmSpec& s = *m.ssm;
  std::int64_t p = ssm_matmul_weights(m);
  const std::int64_t d = s.inner;
  if (s.version == 1) {
    p += d * s.conv_kernel + (s.conv_bias ? d : 0);  // depthwise conv
    p += d;                                          // dt_proj bias
    p += d * s.state + d;                            // A_log, D
    if (s.proj_bias) p += 2 * d + m.hidden;
    if (s.inner_norms) p += s.dt_rank + 2 * static_cast<std::int64_t>(s.state);
    return p;
  }
  const std::int64_t bc = 2 * static_cast<std::int64_t>(s.groups) * s.state;
  const std::int64_t conv = d + bc;
  p += conv * s.conv_kernel + (s.conv_bias ? conv : 0);
  p += 3 * static_cast<std::int64_t>(s.num_heads);  // A_log, D, dt_bias
  p += d;                                           // gated RMSNorm
  if (s.proj_bias) p += 2 * d + bc + s.num_heads + m.hidden;
  return p;
}

std::int64_t linear_attention_parameters(const ModelSpec& m) {
  if (!m.linear) return 0;
  const LinearAttentionSpec& a = *m.linear;
  const std::int64_t kd = static_cast<std::int64_t>(a.key_heads) * a.key_head_dim;
  const std::int64_t vd = static_cast<std::int64_t>(a.value_heads) * a.value_head_dim;
  return linear_attention_matmul_weights(m) + (2 * kd + vd) * a.conv_kernel +
         2 * static_cast<std::int64_t>(a.value_heads) + a.value_head_dim;
}

int norms_of_layer(const ModelSpec& m, int i) {
  return (m.mixer(i) != MixerKind::None ? 1 : 0) + (m.ffn(i) != FfnKind::None ? 1 : 0);
}

}  // namespace

std::int64_t ssm_matmul_weights(const ModelSpec& m) {
  if (!m.ssm) return 0;
  const SsmSpec& s = *m.ssm;
  const std::int64_t h = m.hidden, d = s.inner;
  if (s.version == 1)
    return h * 2 * d + d * (s.dt_rank + 2 * static_cast<std::int64_t>(s.state)) + s.dt_rank * d + d * h;
  return h * (2 * d + 2 * static_cast<std::int64_t>(s.groups) * s.state + s.num_heads) + d * h;
}

std::int64_t linear_attention_matmul_weights(const ModelSpec& m) {
  if (!m.linear) return 0;
  const LinearAttentionSpec& a = *m.linear;
  const std::int64_t h = m.hidden;
  const std::int64_t kd = static_cast<std::int64_t>(a.key_heads) * a.key_head_dim;
  const std::int64_t vd = static_cast<std::int64_t>(a.value_heads) * a.value_head_dim;
  return h * (2 * kd + 2 * vd) + h * 2 * a.value_heads + vd * h;
}

std::int64_t attention_matmul_weights(const ModelSpec& m) {
  const std::int64_t h = m.hidden;
  const std::int64_t heads = m.num_heads;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const std::int64_t qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim;
    const std::int64_t q =
        a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads * qk_head : h * heads * qk_head;
    // Down-projection to the latent plus the shared rope key, then up-projection to per-head
    // no-rope keys and values.
    const std::int64_t kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) +
                            static_cast<std::int64_t>(a.kv_lora_rank) * heads * (a.qk_nope_head_dim + a.v_head_dim);
    const std::int64_t o = heads * a.v_head_dim * h;
    return q + kv + o;
  }
  const std::int64_t q = heads * m.head_dim;
  const std::int64_t kv = static_cast<std::int64_t>(m.num_kv_heads) * m.head_dim;
  // Qwen3-Next's gated attention: q_proj also yields a per-channel sigmoid gate (2·q outputs).
  return h * q * (m.attention_output_gate ? 2 : 1) + 2 * h * kv + q * h;
}

std::int64_t mlp_matmul_weights(const ModelSpec& m, std::int64_t ffn) {
  return (m.mlp == MlpKind::SwiGlu ? 3 : 2) * m.hidden * ffn;
}

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount c;
  const std::int64_t h = m.hidden;
  int layer_norms = 0;
  for (int i = 0; i < m.num_layers; ++i) {
    switch (m.ffn(i)) {
      case FfnKind::Moe: ++c.moe_layers; break;
      case FfnKind::Dense: ++c.dense_layers; break;
      case FfnKind::None: break;
    }
    switch (m.mixer(i)) {
      case MixerKind::Attention: ++c.attention_layers; break;
      case MixerKind::Mamba: ++c.ssm_layers; break;
      case MixerKind::LinearAttention: ++c.linear_attention_layers; break;
      case MixerKind::None: break;
    }
    layer_norms += norms_of_layer(m, i);
  }
  c.attention_per_layer = c.attention_layers > 0 ? attention_parameters(m) : 0;
  c.ssm_per_layer = c.ssm_layers > 0 ? ssm_parameters(m) : 0;
  c.linear_attention_per_layer = c.linear_attention_layers > 0 ? linear_attention_parameters(m) : 0;
  c.dense_mlp_per_layer = c.dense_layers > 0 ? mlp_parameters(m, m.ffn_hidden) : 0;
  if (m.is_moe()) {
    c.expert = mlp_parameters(m, m.moe.expert_ffn);
    c.shared_expert_per_layer = mlp_parameters(m, m.moe.shared_expert_ffn);
    c.router_per_layer = h * m.moe.num_experts + (m.mlp_bias ? m.moe.num_experts : 0);
  }
  c.norms_per_layer = 2 * norm_size(m, h);

  c.embedding = m.vocab * h;
  if (m.position == PositionKind::Learned) c.embedding += m.max_position * h;
  c.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  c.attention = c.attention_per_layer * c.attention_layers;
  c.ssm = c.ssm_per_layer * c.ssm_layers;
  c.linear_attention = c.linear_attention_per_layer * c.linear_attention_layers;
  c.dense_mlp = c.dense_mlp_per_layer * c.dense_layers;
  c.routed_experts = c.expert * m.moe.num_experts * c.moe_layers;
  c.shared_experts = c.shared_expert_per_layer * c.moe_layers;
  c.routers = c.router_per_layer * c.moe_layers;
  c.norms = norm_size(m, h) * (layer_norms + 1);
  c.total = c.embedding + c.lm_head + c.attention + c.ssm + c.linear_attention + c.dense_mlp + c.routed_experts +
            c.shared_experts + c.routers + c.norms;

  // Each MTP module (DeepSeek-V3 §2.2): two input norms, a 2h -> h projection, one transformer
  // block of the last layer's kind, and an output norm; embedding and output head are shared.
  if (m.mtp_layers > 0) {
    // Hybrid models' MTP blocks (Nemotron 3) are attention + the model's FFN kind.
    const bool last_moe = m.is_hybrid() ? m.is_moe() : m.is_moe_layer(m.num_layers - 1);
    const std::int64_t ffn = last_moe ? c.expert * m.moe.num_experts + c.shared_expert_per_layer + c.router_per_layer
                                      : mlp_parameters(m, m.ffn_hidden);
    const std::int64_t block = attention_parameters(m) + ffn + c.norms_per_layer;
    c.mtp = m.mtp_layers * (block + 2 * h * h + 3 * norm_size(m, h));
  }

  const std::int64_t unrouted =
      m.is_moe() ? c.expert * static_cast<std::int64_t>(m.moe.num_experts - m.moe.top_k) * c.moe_layers : 0;
  c.lookup_only = m.tied_embeddings ? c.embedding - m.vocab * h : c.embedding;
  c.active = c.total - unrouted - c.lookup_only;
  return c;
}

}  // namespace fmsim::workload
