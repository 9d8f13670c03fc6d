// Transformer architecture description: dense, MoE, MLA and sliding-window variants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fmsim::workload {

enum class MlpKind {
  Gelu,    ///< two matrices: up (h x f), down (f x h)
  SwiGlu,  ///< three matrices: gate and up (h x f each), down (f x h)
};

enum class PositionKind { Rope, Learned, Alibi, None };

/// Normalisation layers: RMSNorm carries a scale vector, LayerNorm a scale and a bias.
enum class NormKind { RmsNorm, LayerNorm };

/// Mixture-of-experts feed-forward layers.
struct MoeSpec {
  int num_experts = 0;                 ///< routed experts; 0 = dense model
  int top_k = 0;                       ///< experts per token
  std::int64_t expert_ffn = 0;         ///< FFN width of one routed expert
  std::int64_t shared_expert_ffn = 0;  ///< total FFN width of the shared expert(s); 0 = none
  int first_dense_layers = 0;          ///< leading layers with a dense FFN (DeepSeek-V3: 3)
  int layer_frequency = 1;             ///< every k-th layer is MoE (1 = all, after first_dense_layers)
  [[nodiscard]] bool enabled() const { return num_experts > 0; }
  friend bool operator==(const MoeSpec&, const MoeSpec&) = default;
};

/// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaSpec {
  int q_lora_rank = 0;  ///< 0 = queries not compressed
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  friend bool operator==(const MlaSpec&, const MlaSpec&) = default;
};

/// One transformer model. Built from a Hugging Face config.json (config::load_model), a shipped
/// preset (data/models/*.json), or explicit dimensions.
struct ModelSpec {
  std::string name;    ///< preset key or file stem, e.g. "llama3.1-70b"
  std::string family;  ///< HF model_type: "llama", "mixtral", "qwen3_moe", "deepseek_v3", "gpt_oss", "gpt2"...
  std::string source;  ///< provenance: a preset's "_source", or the file it was read from
  int num_layers = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn_hidden = 0;  ///< dense FFN width (intermediate_size)
  int num_heads = 0;
  int num_kv_heads = 0;  ///< == num_heads for MHA
  int head_dim = 0;      ///< usually hidden / num_heads; Qwen3/GPT-OSS set it explicitly
  std::int64_t vocab = 0;
  MlpKind mlp = MlpKind::SwiGlu;
  PositionKind position = PositionKind::Rope;
  bool tied_embeddings = false;
  bool attention_bias = false;        ///< q/k/v/o projections carry biases (GPT-2, Qwen2, GPT-OSS)
  bool mlp_bias = false;              ///< FFN / expert matrices and the router carry biases (GPT-2, MPT, GPT-OSS)
  NormKind norm = NormKind::RmsNorm;  ///< LayerNorm for GPT-2/GPT-3/MPT
  bool qk_norm = false;               ///< per-head RMSNorm on queries and keys (Qwen3)
  int mtp_layers = 0;                 ///< multi-token-prediction modules (DeepSeek-V3: 1); not in num_layers
  std::int64_t max_position = 0;
  MoeSpec moe;
  std::optional<MlaSpec> mla;
  int sliding_window = 0;          ///< tokens; 0 = all layers full attention
  int sliding_window_pattern = 0;  ///< every k-th layer is full attention, the rest sliding (GPT-OSS: 2);
                                   ///< num_layers + 1 when every layer slides (Mistral 7B v0.1)

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;

  [[nodiscard]] bool is_moe() const { return moe.enabled(); }
  /// True when layer i (0-based) has a routed-expert FFN.
  [[nodiscard]] bool is_moe_layer(int i) const {
    return moe.enabled() && i >= moe.first_dense_layers &&
           ((i - moe.first_dense_layers) % (moe.layer_frequency > 0 ? moe.layer_frequency : 1)) == 0;
  }
  /// True when layer i uses sliding-window attention.
  [[nodiscard]] bool is_sliding_layer(int i) const {
    return sliding_window > 0 && sliding_window_pattern > 0 &&
           (i % sliding_window_pattern) != sliding_window_pattern - 1;
  }
};

}  // namespace fmsim::workload
