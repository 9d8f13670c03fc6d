// ModelSpecs written out by hand for the workload tests (tests/workload links fmsim_workload only,
// not the config.json loader); each mirrors the shipped data/models preset of the same name.
#pragma once

#include "workload/model_spec.hpp"

namespace fmsim::workload::testing {

inline ModelSpec llama(int layers, std::int64_t hidden, std::int64_t ffn, int heads, int kv_heads) {
  ModelSpec m;
  m.name = "llama";
  m.family = "llama";
  m.num_layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = ffn;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = static_cast<int>(hidden / heads);
  m.vocab = 128256;
  m.max_position = 131072;
  return m;
}
inline ModelSpec llama31_8b() { return llama(32, 4096, 14336, 32, 8); }
inline ModelSpec llama31_70b() { return llama(80, 8192, 28672, 64, 8); }
inline ModelSpec llama31_405b() { return llama(126, 16384, 53248, 128, 8); }

inline ModelSpec mixtral(int layers, std::int64_t hidden, std::int64_t ffn, int heads, std::int64_t vocab) {
  ModelSpec m = llama(layers, hidden, ffn, heads, 8);
  m.family = "mixtral";
  m.vocab = vocab;
  m.moe = {.num_experts = 8, .top_k = 2, .expert_ffn = ffn};
  return m;
}
inline ModelSpec mixtral_8x7b() { return mixtral(32, 4096, 14336, 32, 32000); }
inline ModelSpec mixtral_8x22b() { return mixtral(56, 6144, 16384, 48, 32768); }

inline ModelSpec qwen3(int layers, std::int64_t hidden, std::int64_t ffn, int heads, int kv_heads) {
  ModelSpec m = llama(layers, hidden, ffn, heads, kv_heads);
  m.family = "qwen3";
  m.head_dim = 128;
  m.vocab = 151936;
  m.qk_norm = true;
  return m;
}
inline ModelSpec qwen3_moe(int layers, std::int64_t hidden, std::int64_t expert_ffn, int heads, int kv_heads) {
  ModelSpec m = qwen3(layers, hidden, 0, heads, kv_heads);
  m.family = "qwen3_moe";
  m.moe = {.num_experts = 128, .top_k = 8, .expert_ffn = expert_ffn};
  return m;
}

inline ModelSpec deepseek_v3() {
  ModelSpec m = llama(61, 7168, 18432, 128, 128);
  m.family = "deepseek_v3";
  m.vocab = 129280;
  m.head_dim = 192;
  m.moe = {.num_experts = 256, .top_k = 8, .expert_ffn = 2048, .shared_expert_ffn = 2048, .first_dense_layers = 3};
  m.rope_yarn = true;  // rope_scaling type "yarn", factor 40
  m.mla = MlaSpec{
      .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
  m.mtp_layers = 1;
  return m;
}

inline ModelSpec gpt_oss(int layers, int experts) {
  ModelSpec m = llama(layers, 2880, 2880, 64, 8);
  m.family = "gpt_oss";
  m.head_dim = 64;
  m.vocab = 201088;
  m.attention_bias = true;
  m.mlp_bias = true;
  m.moe = {.num_experts = experts, .top_k = 4, .expert_ffn = 2880};
  m.sliding_window = 128;
  m.sliding_window_pattern = 2;
  m.rope_yarn = true;        // rope_scaling rope_type "yarn", factor 32
  m.activation_clamp = 7.0;  // swiglu_limit
  return m;
}

/// GPT-2 style: GeLU 4h FFN, LayerNorm, biases everywhere, learned positions.
inline ModelSpec gpt(int layers, std::int64_t hidden, int heads, std::int64_t vocab, std::int64_t positions,
                     bool tied = true) {
  ModelSpec m;
  m.name = "gpt";
  m.family = "gpt2";
  m.num_layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = static_cast<int>(hidden / heads);
  m.vocab = vocab;
  m.mlp = MlpKind::Gelu;
  m.position = PositionKind::Learned;
  m.norm = NormKind::LayerNorm;
  m.tied_embeddings = tied;
  m.attention_bias = true;
  m.mlp_bias = true;
  m.max_position = positions;
  return m;
}
inline ModelSpec gpt3_175b() { return gpt(96, 12288, 96, 50257, 2048); }

}  // namespace fmsim::workload::testing
