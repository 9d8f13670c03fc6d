// Transformer architecture description: dense, MoE, MLA and sliding-window variants, and hybrid
// models whose layers mix attention with state-space (Mamba) or linear-attention mixers.
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

/// The sequence mixer of one layer.
enum class MixerKind {
  Attention,        ///< softmax attention (GQA/MLA, full or sliding)
  Mamba,            ///< selective state-space model (Mamba-1 or Mamba-2 SSD, by SsmSpec::version)
  LinearAttention,  ///< gated DeltaNet linear attention (Qwen3-Next `linear_attention`)
  None,             ///< no mixer: an FFN-only layer (Nemotron-H "-" and "E")
};

/// The feed-forward part of one layer.
enum class FfnKind { Dense, Moe, None };

/// One layer of a hybrid model: its mixer and its FFN (Nemotron-H layers hold one of the two,
/// Jamba and Qwen3-Next layers both).
struct LayerSpec {
  MixerKind mixer = MixerKind::Attention;
  FfnKind ffn = FfnKind::Dense;
  friend bool operator==(const LayerSpec&, const LayerSpec&) = default;
};

/// Mamba mixer dimensions. Mamba-2 (Dao & Gu 2024, SSD): in_proj h -> [z, x, B, C, dt] =
/// 2·d_inner + 2·groups·state + heads, a depthwise conv over x, B, C, per-head A, D and dt bias, a
/// gated RMSNorm of d_inner and out_proj d_inner -> h. Mamba-1 (Gu & Dao 2023, Jamba): in_proj
/// h -> 2·d_inner, conv over x, x_proj d_inner -> dt_rank + 2·state, dt_proj dt_rank -> d_inner,
/// A of d_inner x state, D, out_proj.
struct SsmSpec {
  int version = 2;         ///< 1 = Mamba (selective scan), 2 = Mamba-2 (SSD)
  int num_heads = 0;       ///< Mamba-2 heads (d_inner / head_dim)
  int head_dim = 0;        ///< Mamba-2 head width P
  std::int64_t inner = 0;  ///< d_inner (expand · hidden, or heads · head_dim)
  int state = 0;           ///< state size N (ssm_state_size, mamba_d_state)
  int groups = 1;          ///< B/C groups (n_groups)
  int conv_kernel = 4;     ///< depthwise conv width
  int chunk = 128;         ///< SSD chunk length Q
  int dt_rank = 0;         ///< Mamba-1 time-step rank
  bool conv_bias = true;
  bool proj_bias = false;
  bool inner_norms = false;  ///< Jamba: RMSNorms on dt, B and C inside the mixer
  friend bool operator==(const SsmSpec&, const SsmSpec&) = default;
};

/// Gated DeltaNet dimensions (Yang et al. 2024; Qwen3-Next `linear_*` keys).
struct LinearAttentionSpec {
  int key_heads = 0;
  int value_heads = 0;
  int key_head_dim = 0;
  int value_head_dim = 0;
  int conv_kernel = 4;
  friend bool operator==(const LinearAttentionSpec&, const LinearAttentionSpec&) = default;
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
  /// YaRN rotary scaling (rope_scaling rope_type "yarn": GPT-OSS, DeepSeek-V3). Megatron-Bridge gives
  /// such attention position_embedding_type "yarn", which its fused RoPE kernel does not take.
  bool rope_yarn = false;
  /// Clamp on the gated activation's inputs (GPT-OSS swiglu_limit: 7); 0 = none.
  double activation_clamp = 0.0;
  int mtp_layers = 0;  ///< multi-token-prediction modules (DeepSeek-V3: 1); not in num_layers
  std::int64_t max_position = 0;
  MoeSpec moe;
  std::optional<MlaSpec> mla;
  int sliding_window = 0;          ///< tokens; 0 = all layers full attention
  int sliding_window_pattern = 0;  ///< every k-th layer is full attention, the rest sliding (GPT-OSS: 2);
                                   ///< num_layers + 1 when every layer slides (Mistral 7B v0.1)
  /// Per-layer mixer and FFN of a hybrid model; empty = every layer is attention + FFN (MoE by `moe`).
  std::vector<LayerSpec> layers;
  std::optional<SsmSpec> ssm;                 ///< Mamba layers' dimensions
  std::optional<LinearAttentionSpec> linear;  ///< gated DeltaNet layers' dimensions
  bool attention_output_gate = false;         ///< q_proj also yields a sigmoid output gate (Qwen3-Next)

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;

  [[nodiscard]] bool is_moe() const { return moe.enabled(); }
  [[nodiscard]] bool is_hybrid() const { return !layers.empty(); }
  /// The sequence mixer of layer i.
  [[nodiscard]] MixerKind mixer(int i) const {
    return layers.empty() ? MixerKind::Attention : layers[static_cast<std::size_t>(i)].mixer;
  }
  /// The FFN of layer i.
  [[nodiscard]] FfnKind ffn(int i) const {
    if (!layers.empty()) return layers[static_cast<std::size_t>(i)].ffn;
    return is_moe_layer(i) ? FfnKind::Moe : FfnKind::Dense;
  }
  /// Number of layers with mixer `k`.
  [[nodiscard]] int count_mixers(MixerKind k) const {
    int n = 0;
    for (int i = 0; i < num_layers; ++i) n += mixer(i) == k ? 1 : 0;
    return n;
  }
  /// True when layer i (0-based) has a routed-expert FFN.
  [[nodiscard]] bool is_moe_layer(int i) const {
    if (!layers.empty()) return layers[static_cast<std::size_t>(i)].ffn == FfnKind::Moe;
    return moe.enabled() && i >= moe.first_dense_layers &&
           ((i - moe.first_dense_layers) % (moe.layer_frequency > 0 ? moe.layer_frequency : 1)) == 0;
  }
  /// Number of distinct layer kinds layer_kind() returns (mixer x FFN x sliding window).
  static constexpr int kLayerKinds = 4 * 3 * 2;
  /// Index of layer i's kind: layers of one kind have the same operators, costs and activations.
  [[nodiscard]] int layer_kind(int i) const {
    return (static_cast<int>(mixer(i)) * 3 + static_cast<int>(ffn(i))) * 2 + (is_sliding_layer(i) ? 1 : 0);
  }
  /// True when every layer has the same kind (one mixer, one FFN, one attention window): costing one
  /// layer and multiplying by a count is then exact.
  [[nodiscard]] bool uniform_layers() const {
    const bool one_ffn = !moe.enabled() || (moe.first_dense_layers <= 0 && moe.layer_frequency <= 1);
    const bool one_window = sliding_window <= 0 || sliding_window_pattern <= 1 || sliding_window_pattern > num_layers;
    return layers.empty() && one_ffn && one_window;
  }
  /// True when layer i uses sliding-window attention.
  [[nodiscard]] bool is_sliding_layer(int i) const {
    return mixer(i) == MixerKind::Attention && sliding_window > 0 && sliding_window_pattern > 0 &&
           (i % sliding_window_pattern) != sliding_window_pattern - 1;
  }
};

}  // namespace fmsim::workload
