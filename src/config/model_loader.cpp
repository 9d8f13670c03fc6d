// Hugging Face config.json import, presets and explicit dimensions -> validated workload::ModelSpec.
#include "config/model_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>

#include "config/json_depth.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

using nlohmann::json;
using workload::MlpKind;
using workload::ModelSpec;
using workload::NormKind;
using workload::PositionKind;

constexpr std::string_view kPresetDir = "models/";
constexpr std::string_view kPresetExt = ".json";

/// Builds the InputError for a field; the HF parser adds the line where the key appears.
using ErrorFactory = std::function<core::InputError(const std::string& field, const std::string& message)>;

/// Field names to report, per ModelSpec member: ModelSpec names by default, the JSON keys
/// actually read when parsing a config.json, ModelDimensions names for explicit dimensions.
struct FieldNames {
  std::string num_layers = "num_layers";
  std::string hidden = "hidden";
  std::string ffn_hidden = "ffn_hidden";
  std::string num_heads = "num_heads";
  std::string num_kv_heads = "num_kv_heads";
  std::string head_dim = "head_dim";
  std::string vocab = "vocab";
  std::string max_position = "max_position";
  std::string num_experts = "moe.num_experts";
  std::string top_k = "moe.top_k";
  std::string expert_ffn = "moe.expert_ffn";
  std::string shared_expert_ffn = "moe.shared_expert_ffn";
  std::string first_dense_layers = "moe.first_dense_layers";
  std::string layer_frequency = "moe.layer_frequency";
  std::string kv_lora_rank = "mla.kv_lora_rank";
  std::string q_lora_rank = "mla.q_lora_rank";
  std::string qk_head_dim = "mla.qk_nope_head_dim";
  std::string v_head_dim = "mla.v_head_dim";
  std::string sliding_window = "sliding_window";
  std::string layer_pattern = "layers";
  std::string ssm_inner = "ssm.inner";
  std::string ssm_state = "ssm.state";
  std::string ssm_conv = "ssm.conv_kernel";
  std::string ssm_heads = "ssm.num_heads";
  std::string ssm_head_dim = "ssm.head_dim";
  std::string ssm_groups = "ssm.groups";
  std::string ssm_chunk = "ssm.chunk";
  std::string ssm_dt_rank = "ssm.dt_rank";
  std::string linear_heads = "linear.key_heads";
  std::string linear_head_dim = "linear.key_head_dim";
};

// The most layers a model may have (deeper than any model by three orders of magnitude).
constexpr int kMaxLayers = 1 << 20;

std::string layers_out_of_range(std::int64_t n) {
  return std::to_string(n) + " layers is out of range; allowed: 1 to " + std::to_string(kMaxLayers) + " (2^20)";
}

void validate(const ModelSpec& m, const FieldNames& f, const ErrorFactory& error) {
  auto positive = [&](std::int64_t v, const std::string& field) {
    if (v <= 0) throw error(field, std::to_string(v) + " must be a positive integer");
  };
  positive(m.num_layers, f.num_layers);
  // Every source of a model (YAML, config.json, a validation CSV row) is held to the range the
  // per-layer checks below walk in bounded time (libFuzzer on validation_csv: 1,717,986,905 layers
  // took 17 s in the dense-layer count).
  if (m.num_layers > kMaxLayers) {
    throw error(f.num_layers, layers_out_of_range(m.num_layers));
  }
  positive(m.hidden, f.hidden);
  positive(m.num_heads, f.num_heads);
  positive(m.num_kv_heads, f.num_kv_heads);
  positive(m.head_dim, f.head_dim);
  positive(m.vocab, f.vocab);
  if (m.num_heads % m.num_kv_heads != 0) {
    throw error(f.num_kv_heads, std::to_string(m.num_kv_heads) + " key/value heads do not divide " +
                                    std::to_string(m.num_heads) + " attention heads");
  }
  if (m.ffn_hidden < 0) throw error(f.ffn_hidden, std::to_string(m.ffn_hidden) + " must not be negative");
  if (m.max_position < 0) throw error(f.max_position, std::to_string(m.max_position) + " must not be negative");
  if (m.position == PositionKind::Learned && m.max_position <= 0) {
    throw error(f.max_position, "learned position embeddings need a positive maximum sequence length");
  }
  if (m.sliding_window < 0) throw error(f.sliding_window, std::to_string(m.sliding_window) + " must not be negative");
  if (m.moe.num_experts < 0) throw error(f.num_experts, std::to_string(m.moe.num_experts) + " must not be negative");
  if (m.is_moe()) {
    if (m.moe.top_k < 1 || m.moe.top_k > m.moe.num_experts) {
      throw error(f.top_k, std::to_string(m.moe.top_k) + " must be between 1 and the " +
                               std::to_string(m.moe.num_experts) + " experts");
    }
    positive(m.moe.expert_ffn, f.expert_ffn);
    if (m.moe.shared_expert_ffn < 0) {
      throw error(f.shared_expert_ffn, std::to_string(m.moe.shared_expert_ffn) + " must not be negative");
    }
    if (m.moe.first_dense_layers < 0 || m.moe.first_dense_layers >= m.num_layers) {
      throw error(f.first_dense_layers, std::to_string(m.moe.first_dense_layers) + " must be between 0 and " +
                                            std::to_string(m.num_layers - 1) + " (the number of layers - 1)");
    }
    positive(m.moe.layer_frequency, f.layer_frequency);
  }
  // Parameter and FLOP counts downstream are int64: a model whose weights, estimated here in double
  // from its widths (every layer with dense attention, its FFN and all its experts), pass 2^62 is
  // refused; hidden_size 10^9 wrapped the parameter count (UBSan: signed overflow).
  {
    const double h = static_cast<double>(m.hidden);
    const double q = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim);
    const double kv = static_cast<double>(m.num_kv_heads) * static_cast<double>(m.head_dim);
    const double experts = m.is_moe() ? static_cast<double>(m.moe.num_experts) * static_cast<double>(m.moe.expert_ffn) +
                                            static_cast<double>(m.moe.shared_expert_ffn)
                                      : 0.0;
    const double per_layer = 2.0 * h * (q + kv) + 3.0 * h * (static_cast<double>(m.ffn_hidden) + experts);
    const double weights = static_cast<double>(m.num_layers) * per_layer + 2.0 * static_cast<double>(m.vocab) * h;
    if (!(weights < 0x1p62)) {
      char count[32];
      std::snprintf(count, sizeof count, "%.3g", weights);
      throw error(f.hidden, std::string("the model would have about ") + count + " parameters (hidden_size " +
                                std::to_string(m.hidden) + ", " + std::to_string(m.num_layers) +
                                " layers), past the 2^62 (4.6e18) fmsim counts to");
    }
  }
  // The pattern's length first: the per-layer reads below index it by layer.
  if (!m.layers.empty() && static_cast<int>(m.layers.size()) != m.num_layers) {
    throw error(f.layer_pattern, "has " + std::to_string(m.layers.size()) + " layers for " +
                                     std::to_string(m.num_layers) + " layers (" + f.num_layers + ")");
  }
  int dense_layers = 0;
  for (int i = 0; i < m.num_layers; ++i) dense_layers += m.ffn(i) == workload::FfnKind::Dense ? 1 : 0;
  if (dense_layers > 0 && m.ffn_hidden <= 0) {
    throw error(f.ffn_hidden, "a positive dense FFN width is required: " + std::to_string(dense_layers) + " of the " +
                                  std::to_string(m.num_layers) + " layers have a dense FFN");
  }
  for (const workload::LayerSpec& l : m.layers) {
    if (l.ffn == workload::FfnKind::Moe && !m.is_moe()) {
      throw error(f.layer_pattern, "has MoE layers but the file gives no routed experts (n_routed_experts)");
    }
  }
  if (m.count_mixers(workload::MixerKind::Mamba) > 0) {
    if (!m.ssm) throw error(f.layer_pattern, "has Mamba layers but the file gives no state-space dimensions");
    positive(m.ssm->inner, f.ssm_inner);
    positive(m.ssm->state, f.ssm_state);
    positive(m.ssm->conv_kernel, f.ssm_conv);
    if (m.ssm->version == 2) {
      positive(m.ssm->head_dim, f.ssm_head_dim);
      positive(m.ssm->num_heads, f.ssm_heads);
      positive(m.ssm->groups, f.ssm_groups);
      positive(m.ssm->chunk, f.ssm_chunk);
      if (static_cast<std::int64_t>(m.ssm->num_heads) * m.ssm->head_dim != m.ssm->inner) {
        throw error(f.ssm_heads, std::to_string(m.ssm->num_heads) + " heads of " + std::to_string(m.ssm->head_dim) +
                                     " do not make the Mamba inner width " + std::to_string(m.ssm->inner));
      }
      if (m.ssm->num_heads % m.ssm->groups != 0) {
        throw error(f.ssm_groups, std::to_string(m.ssm->groups) + " groups do not divide " +
                                      std::to_string(m.ssm->num_heads) + " Mamba heads");
      }
    } else {
      positive(m.ssm->dt_rank, f.ssm_dt_rank);
    }
  }
  if (m.count_mixers(workload::MixerKind::LinearAttention) > 0) {
    if (!m.linear)
      throw error(f.layer_pattern, "has linear-attention layers but the file gives no linear_* dimensions");
    positive(m.linear->key_heads, f.linear_heads);
    positive(m.linear->value_heads, f.linear_heads);
    positive(m.linear->key_head_dim, f.linear_head_dim);
    positive(m.linear->value_head_dim, f.linear_head_dim);
  }
  if (m.mla) {
    positive(m.mla->kv_lora_rank, f.kv_lora_rank);
    if (m.mla->q_lora_rank < 0)
      throw error(f.q_lora_rank, std::to_string(m.mla->q_lora_rank) + " must not be negative");
    positive(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim, f.qk_head_dim);
    positive(m.mla->v_head_dim, f.v_head_dim);
  }
}

// 1-based line of the first occurrence of "key" in the JSON text; 0 when absent.
int line_of_key(std::string_view text, std::string_view key) {
  std::string needle;
  needle.reserve(key.size() + 2);
  needle.push_back('"');
  needle.append(key);
  needle.push_back('"');
  const std::size_t pos = text.find(needle);
  if (pos == std::string_view::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

int line_of_offset(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// Reads aliased fields of one JSON object, raising errors that name the file, line and key.
class JsonFields {
 public:
  JsonFields(const json& object, std::string_view text, std::string file, std::string prefix = "")
      : object_(object), text_(text), file_(std::move(file)), prefix_(std::move(prefix)) {}

  [[nodiscard]] core::InputError error(const std::string& key, const std::string& message) const {
    const std::string_view whole = key;
    const std::size_t dot = whole.rfind('.');
    const std::string_view leaf = dot == std::string_view::npos ? whole : whole.substr(dot + 1);
    return core::InputError(file_, line_of_key(text_, leaf), key, message);
  }

  /// The first of `keys` present with a non-null value; its name goes to `used`.
  const json* find(std::initializer_list<std::string_view> keys, std::string* used = nullptr) const {
    for (std::string_view k : keys) {
      const auto it = object_.find(std::string(k));
      if (it != object_.end() && !it->is_null()) {
        if (used) *used = prefix_ + std::string(k);
        return &*it;
      }
    }
    return nullptr;
  }

  std::optional<std::int64_t> integer(std::initializer_list<std::string_view> keys, std::string* used = nullptr) const {
    std::string key;
    const json* v = find(keys, &key);
    if (used && v) *used = key;
    if (!v) return std::nullopt;
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      throw error(key, "expected an integer below 2^63 (9223372036854775808), got " + v->dump());
    }
    if (v->is_number_integer()) return v->get<std::int64_t>();
    if (v->is_number_float()) {
      // Only a whole number inside int64's range may be cast (a cast of 5.12e66 is undefined).
      const double d = v->get<double>();
      if (d >= -0x1p63 && d < 0x1p63 && d == std::trunc(d)) return static_cast<std::int64_t>(d);
      if (std::isfinite(d) && d == std::trunc(d)) {
        throw error(key, "expected an integer below 2^63 (9223372036854775808), got " + v->dump());
      }
    }
    throw error(key, "expected an integer, got " + v->dump());
  }

  std::optional<double> number(std::initializer_list<std::string_view> keys, std::string* used = nullptr) const {
    std::string key;
    const json* v = find(keys, &key);
    if (used && v) *used = key;
    if (!v) return std::nullopt;
    if (!v->is_number()) throw error(key, "expected a number, got " + v->dump());
    return v->get<double>();
  }

  std::optional<bool> boolean(std::initializer_list<std::string_view> keys) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) throw error(key, "expected true or false, got " + v->dump());
    return v->get<bool>();
  }

  std::optional<std::string> string(std::initializer_list<std::string_view> keys) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw error(key, "expected a string, got " + v->dump());
    return v->get<std::string>();
  }

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::string_view text() const { return text_; }

 private:
  const json& object_;
  std::string_view text_;
  std::string file_;
  std::string prefix_;
};

/// Architecture defaults per HF model_type, for what config.json files leave implicit.
struct Family {
  std::string_view model_type;
  MlpKind mlp;
  PositionKind position;
  NormKind norm;
  bool attention_bias;
  bool mlp_bias;
  bool tied;
  bool qk_norm;
  int ffn_multiple;  ///< FFN width = multiple * hidden when the file gives none; 0 = required
};

constexpr Family kFamilies[] = {
    {"llama", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"mistral", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"mixtral", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"qwen2", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, true, false, false, false, 0},
    {"qwen2_moe", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, true, false, false, false, 0},
    {"qwen3", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, true, 0},
    {"qwen3_moe", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, true, 0},
    {"deepseek_v2", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"deepseek_v3", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"llama4", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, true, 0},
    {"gpt_oss", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, true, true, false, false, 0},
    // Gemma: gated GeLU FFN (gate, up, down: three matrices like SwiGLU); GemmaConfig,
    // Gemma2Config and Gemma3TextConfig default tie_word_embeddings to true, and Google's
    // gemma-2 config.json files leave the key out. Gemma 3 adds q/k norms.
    {"gemma", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, true, false, 0},
    {"gemma2", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, true, false, 0},
    {"gemma3_text", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, true, true, 0},
    // Nemotron-H (and Nemotron 3): squared-ReLU FFNs of two matrices (up, down), no biases.
    {"nemotron_h", MlpKind::Gelu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    // Jamba: SwiGLU FFNs, no positional encoding (the Mamba layers carry position).
    {"jamba", MlpKind::SwiGlu, PositionKind::None, NormKind::RmsNorm, false, false, false, false, 0},
    // Qwen3-Next: gated DeltaNet and gated attention with q/k norms.
    {"qwen3_next", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, true, 0},
    {"phi3", MlpKind::SwiGlu, PositionKind::Rope, NormKind::RmsNorm, false, false, false, false, 0},
    {"gpt2", MlpKind::Gelu, PositionKind::Learned, NormKind::LayerNorm, true, true, true, false, 4},
    {"gpt_neox", MlpKind::Gelu, PositionKind::Rope, NormKind::LayerNorm, true, true, false, false, 0},
    {"bloom", MlpKind::Gelu, PositionKind::Alibi, NormKind::LayerNorm, true, true, true, false, 4},
    {"mpt", MlpKind::Gelu, PositionKind::Learned, NormKind::LayerNorm, true, true, true, false, 4},
};

const Family* find_family(std::string_view model_type) {
  for (const Family& f : kFamilies) {
    if (f.model_type == model_type) return &f;
  }
  return nullptr;
}

std::string known_families() {
  std::vector<std::string> names;
  for (const Family& f : kFamilies) names.emplace_back(f.model_type);
  return core::join(names, ", ");
}

int to_int(std::int64_t v, const JsonFields& j, const std::string& key) {
  if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min()) {
    throw j.error(key, std::to_string(v) + " is out of range");
  }
  return static_cast<int>(v);
}

/// a x b of two widths from the file (expand x hidden_size, heads x head_dim): past int64 it is
/// refused by the field's name, not wrapped (libFuzzer/UBSan: "expand": 7777777777777777728).
std::int64_t checked_product(std::int64_t a, std::int64_t b, const JsonFields& j, const std::string& key) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw j.error(key, std::to_string(a) + " x " + std::to_string(b) + " is past 2^63");
  }
  return product;
}

/// Sliding-window layout from GPT-OSS style `layer_types`: every k-th layer full, the rest sliding.
int sliding_pattern_from_layer_types(const json& types, int num_layers, const JsonFields& j) {
  if (!types.is_array()) throw j.error("layer_types", "expected a list of \"sliding_attention\" / \"full_attention\"");
  if (static_cast<int>(types.size()) != num_layers) {
    throw j.error("layer_types",
                  "has " + std::to_string(types.size()) + " entries for " + std::to_string(num_layers) + " layers");
  }
  std::vector<bool> full;
  for (const json& t : types) {
    if (t == "full_attention") {
      full.push_back(true);
    } else if (t == "sliding_attention") {
      full.push_back(false);
    } else {
      throw j.error("layer_types",
                    "unknown layer type " + t.dump() + "; allowed: \"sliding_attention\", \"full_attention\"");
    }
  }
  if (std::none_of(full.begin(), full.end(), [](bool b) { return b; })) return num_layers + 1;
  for (int k = 1; k <= num_layers; ++k) {
    bool fits = true;
    for (int i = 0; i < num_layers && fits; ++i) fits = full[static_cast<std::size_t>(i)] == (i % k == k - 1);
    if (fits) return k;
  }
  throw j.error("layer_types",
                "only a periodic layout (every k-th layer full attention, the others sliding) is supported");
}

/// Mixer and FFN of one entry of `layers_block_type` / `layer_types` / `hybrid_override_pattern`.
struct PatternWord {
  std::string_view word;
  workload::MixerKind mixer;
  std::optional<workload::FfnKind> ffn;  ///< nullopt: the layer also has the model's FFN
};
constexpr workload::MixerKind kAttn = workload::MixerKind::Attention;
constexpr workload::MixerKind kMamba = workload::MixerKind::Mamba;
constexpr workload::MixerKind kLinear = workload::MixerKind::LinearAttention;
constexpr workload::MixerKind kNoMixer = workload::MixerKind::None;
// Nemotron-H's single-block layers (hybrid_override_pattern characters and layers_block_type
// words: NemotronHConfig in Transformers) and the mixer-plus-FFN layers of Qwen3-Next, Granite 4
// and Jamba (layer_types words).
const PatternWord kBlockWords[] = {
    {"M", kMamba, workload::FfnKind::None},      {"*", kAttn, workload::FfnKind::None},
    {"-", kNoMixer, workload::FfnKind::Dense},   {"E", kNoMixer, workload::FfnKind::Moe},
    {"mamba", kMamba, workload::FfnKind::None},  {"attention", kAttn, workload::FfnKind::None},
    {"mlp", kNoMixer, workload::FfnKind::Dense}, {"moe", kNoMixer, workload::FfnKind::Moe},
};
const PatternWord kTypeWords[] = {
    {"full_attention", kAttn, std::nullopt}, {"sliding_attention", kAttn, std::nullopt},
    {"attention", kAttn, std::nullopt},      {"linear_attention", kLinear, std::nullopt},
    {"mamba", kMamba, std::nullopt},
};

template <std::size_t N>
const PatternWord* find_word(const PatternWord (&words)[N], std::string_view w) {
  for (const PatternWord& p : words)
    if (p.word == w) return &p;
  return nullptr;
}

template <std::size_t N>
std::string allowed_words(const PatternWord (&words)[N]) {
  std::vector<std::string> names;
  for (const PatternWord& p : words) names.push_back("\"" + std::string(p.word) + "\"");
  return core::join(names, ", ");
}

/// Reads the per-layer mixer/FFN layout of a hybrid model, and its Mamba / gated DeltaNet
/// dimensions, as Transformers' NemotronHConfig, JambaConfig and Qwen3NextConfig do (their
/// defaults where a key is absent). Leaves `m.layers` empty for a plain transformer.
void parse_hybrid(const JsonFields& j, const std::string& model_type, ModelSpec& m, FieldNames& f) {
  using workload::FfnKind;
  using workload::LayerSpec;
  const auto n = static_cast<std::size_t>(m.num_layers);
  // The FFN a two-block layer has by the MoE rules read above (mlp_only_layers, sparse steps).
  auto model_ffn = [&](int i) { return m.is_moe_layer(i) ? FfnKind::Moe : FfnKind::Dense; };
  std::vector<LayerSpec> layers;
  std::string key;
  if (const auto pattern = j.string({"hybrid_override_pattern"})) {
    key = "hybrid_override_pattern";
    for (char c : *pattern) {
      const PatternWord* w = find_word(kBlockWords, std::string_view(&c, 1));
      if (!w || w->word.size() != 1) {
        throw j.error(key, std::string("unknown layer symbol '") + c +
                               "'; allowed: 'M' (Mamba), '*' (attention), '-' (MLP), 'E' (MoE)");
      }
      layers.push_back({w->mixer, *w->ffn});
    }
  } else if (const json* blocks = j.find({"layers_block_type"}, &key); blocks && model_type != "jamba") {
    if (!blocks->is_array()) throw j.error(key, "expected a list of \"mamba\", \"attention\", \"mlp\", \"moe\"");
    for (const json& b : *blocks) {
      const PatternWord* w = b.is_string() ? find_word(kBlockWords, b.get<std::string>()) : nullptr;
      if (!w || w->word.size() == 1)
        throw j.error(key, "unknown layer type " + b.dump() + "; allowed: \"mamba\", \"attention\", \"mlp\", \"moe\"");
      layers.push_back({w->mixer, *w->ffn});
    }
  } else if (model_type == "jamba" || j.find({"attn_layer_period"})) {
    // JambaConfig: layer i is attention when i % attn_layer_period == attn_layer_offset (defaults
    // 8, 4), else Mamba; its FFN is MoE when i % expert_layer_period == expert_layer_offset
    // (defaults 2, 1) and the model has more than one expert.
    key = "attn_layer_period";
    const std::int64_t ap = j.integer({"attn_layer_period"}).value_or(8);
    const std::int64_t ao = j.integer({"attn_layer_offset"}).value_or(4);
    const std::int64_t ep = j.integer({"expert_layer_period"}).value_or(2);
    const std::int64_t eo = j.integer({"expert_layer_offset"}).value_or(1);
    if (ap <= 0) throw j.error("attn_layer_period", std::to_string(ap) + " must be a positive integer");
    if (ep <= 0) throw j.error("expert_layer_period", std::to_string(ep) + " must be a positive integer");
    for (std::size_t i = 0; i < n; ++i) {
      const auto li = static_cast<std::int64_t>(i);
      layers.push_back(
          {li % ap == ao ? kAttn : kMamba, m.moe.num_experts > 1 && li % ep == eo ? FfnKind::Moe : FfnKind::Dense});
    }
  } else if (const json* types = j.find({"layer_types"}, &key)) {
    // Mixer per layer (Qwen3-Next, Granite 4 hybrids); only a list naming a linear or Mamba mixer
    // makes a hybrid (GPT-OSS / Gemma sliding-window lists are read with the sliding window).
    if (!types->is_array()) throw j.error(key, "expected a list of " + allowed_words(kTypeWords));
    bool hybrid = false;
    for (const json& t : *types) hybrid = hybrid || t == "linear_attention" || t == "mamba";
    if (hybrid) {
      for (std::size_t i = 0; i < types->size(); ++i) {
        const json& t = (*types)[i];
        const PatternWord* w = t.is_string() ? find_word(kTypeWords, t.get<std::string>()) : nullptr;
        if (!w) throw j.error(key, "unknown layer type " + t.dump() + "; allowed: " + allowed_words(kTypeWords));
        layers.push_back({w->mixer, model_ffn(static_cast<int>(i))});
      }
    }
  } else if (const auto interval = j.integer({"full_attention_interval"}, &key);
             interval && j.find({"linear_num_value_heads"})) {
    // Qwen3NextConfig without layer_types: every interval-th layer full attention, the rest linear.
    if (*interval <= 0) throw j.error(key, std::to_string(*interval) + " must be a positive integer");
    for (std::size_t i = 0; i < n; ++i) {
      layers.push_back(
          {(static_cast<std::int64_t>(i) + 1) % *interval == 0 ? kAttn : kLinear, model_ffn(static_cast<int>(i))});
    }
  }
  if (layers.empty()) return;
  f.layer_pattern = key;

  const auto uses = [&](workload::MixerKind k) {
    return std::any_of(layers.begin(), layers.end(), [k](const LayerSpec& l) { return l.mixer == k; });
  };
  if (uses(kMamba)) {
    workload::SsmSpec s;
    const bool mamba1 = model_type == "jamba" || j.find({"mamba_dt_rank"}) != nullptr;
    s.version = mamba1 ? 1 : 2;
    s.state =
        to_int(j.integer({"ssm_state_size", "mamba_d_state", "state_size"}, &f.ssm_state).value_or(mamba1 ? 16 : 128),
               j, f.ssm_state);
    s.conv_kernel = to_int(j.integer({"conv_kernel", "mamba_d_conv"}, &f.ssm_conv).value_or(4), j, f.ssm_conv);
    std::string expand_key = "expand";
    const std::int64_t expand = j.integer({"expand", "mamba_expand"}, &expand_key).value_or(2);
    s.conv_bias = j.boolean({"use_conv_bias", "mamba_conv_bias"}).value_or(true);
    s.proj_bias = j.boolean({"mamba_proj_bias", "use_bias"}).value_or(false);
    if (mamba1) {
      // JambaConfig: mamba_dt_rank "auto" = ceil(hidden / 16); RMSNorms on dt, B and C.
      std::int64_t rank = m.hidden / 16 + (m.hidden % 16 > 0 ? 1 : 0);
      if (const json* r = j.find({"mamba_dt_rank"}, &f.ssm_dt_rank); r && !r->is_string()) {
        rank = j.integer({"mamba_dt_rank"}, &f.ssm_dt_rank).value_or(rank);
      }
      s.dt_rank = to_int(rank, j, f.ssm_dt_rank);
      s.inner = checked_product(expand, m.hidden, j, expand_key);
      s.inner_norms = model_type == "jamba";
    } else {
      // NemotronHConfig: mamba_num_heads x mamba_head_dim (defaults 128, 64); B and C in n_groups.
      s.head_dim = to_int(j.integer({"mamba_head_dim"}, &f.ssm_head_dim).value_or(64), j, f.ssm_head_dim);
      const auto heads = j.integer({"mamba_num_heads"}, &f.ssm_heads);
      s.inner = heads ? checked_product(*heads, s.head_dim, j, f.ssm_heads)
                      : checked_product(expand, m.hidden, j, expand_key);
      s.num_heads = to_int(heads.value_or(s.head_dim > 0 ? s.inner / s.head_dim : 0), j, f.ssm_heads);
      s.groups = to_int(j.integer({"n_groups", "mamba_n_groups"}, &f.ssm_groups).value_or(8), j, f.ssm_groups);
      s.chunk = to_int(j.integer({"chunk_size"}, &f.ssm_chunk).value_or(128), j, f.ssm_chunk);
    }
    f.ssm_inner = f.ssm_heads;
    m.ssm = s;
  }
  if (uses(kLinear)) {
    // Qwen3NextConfig defaults: 16 key heads, 32 value heads, 128-wide, conv 4.
    workload::LinearAttentionSpec a;
    a.key_heads = to_int(j.integer({"linear_num_key_heads"}, &f.linear_heads).value_or(16), j, f.linear_heads);
    a.value_heads = to_int(j.integer({"linear_num_value_heads"}).value_or(32), j, "linear_num_value_heads");
    a.key_head_dim = to_int(j.integer({"linear_key_head_dim"}, &f.linear_head_dim).value_or(128), j, f.linear_head_dim);
    a.value_head_dim = to_int(j.integer({"linear_value_head_dim"}).value_or(128), j, "linear_value_head_dim");
    a.conv_kernel = to_int(j.integer({"linear_conv_kernel_dim"}).value_or(4), j, "linear_conv_kernel_dim");
    m.linear = a;
  }
  m.layers = std::move(layers);
}

}  // namespace

void validate_model(const ModelSpec& model, const std::string& file) {
  validate(model, FieldNames{}, [&](const std::string& field, const std::string& message) {
    return core::InputError(file, 0, field, message);
  });
}

ModelSpec parse_hf_config(const std::string& json_text, const std::string& file_label, const std::string& name) {
  // Nesting beyond kMaxJsonDepth would overflow the stack of the recursive parser and walkers.
  check_json_depth(json_text, file_label);
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    const std::string what = e.what();
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, column C: ".
    const std::size_t colon = what.find(": ", what.find("parse error"));
    const std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    const int line = e.byte == 0 ? 1 : line_of_offset(json_text, e.byte - 1);
    throw core::InputError(file_label, line, "", "malformed JSON: " + detail);
  } catch (const json::out_of_range& e) {
    // A number past the double range: "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    const std::string what = e.what();
    const std::size_t q = what.find('\'');
    const std::string token = q == std::string::npos ? "" : what.substr(q + 1, what.find('\'', q + 1) - q - 1);
    const std::size_t at = token.empty() ? std::string::npos : json_text.find(token);
    const int line = at == std::string::npos ? 1 : line_of_offset(json_text, at);
    throw core::InputError(file_label, line, "", "number " + token + " is out of range (beyond +-1.8e308)");
  }
  if (!root.is_object())
    throw core::InputError(file_label, 1, "", "expected a JSON object (a Hugging Face config.json)");
  const JsonFields top(root, json_text, file_label);
  // Multimodal checkpoints (Llama 4) keep the language model under text_config.
  const bool nested = root.contains("text_config") && root["text_config"].is_object() && !root.contains("hidden_size");
  const JsonFields j = nested ? JsonFields(root["text_config"], json_text, file_label, "text_config.") : top;

  ModelSpec m;
  m.name = name;
  m.source = top.string({"_source"}).value_or(file_label);
  std::string model_type = top.string({"model_type"}).value_or("");
  if (model_type.empty()) {
    if (const json* arch = j.find({"architectures"});
        arch && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
      model_type = core::to_lower((*arch)[0].get<std::string>());
    }
  }
  m.family = model_type.empty() ? "unknown" : model_type;
  const Family* family = find_family(model_type);

  FieldNames f;
  std::vector<std::string> missing;
  auto required = [&](std::optional<std::int64_t> v, std::string_view aliases) -> std::int64_t {
    if (!v) {
      missing.emplace_back(aliases);
      return 0;
    }
    return *v;
  };
  const auto hidden = j.integer({"hidden_size", "n_embd", "d_model"}, &f.hidden);
  const auto layers = j.integer({"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, &f.num_layers);
  const auto heads = j.integer({"num_attention_heads", "n_head", "n_heads", "num_heads"}, &f.num_heads);
  const auto vocab = j.integer({"vocab_size", "padded_vocab_size", "n_vocab"}, &f.vocab);
  auto ffn = j.integer({"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim", "d_ff"}, &f.ffn_hidden);
  const auto experts =
      j.integer({"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}, &f.num_experts);
  auto expert_ffn = j.integer({"moe_intermediate_size", "moe_ffn_hidden_size"}, &f.expert_ffn);
  // Llama 4: intermediate_size is the width of an expert (and of the shared expert), and
  // intermediate_size_mlp that of the dense layers' MLP.
  if (const auto mlp = j.integer({"intermediate_size_mlp"}); mlp && ffn && !expert_ffn) {
    expert_ffn = ffn;
    f.expert_ffn = f.ffn_hidden;
    ffn = mlp;
    f.ffn_hidden = "intermediate_size_mlp";
  }
  // Widths are derived only from a positive hidden_size below 2^40 (a product with a wild one
  // would overflow; without a width the model is refused by name below).
  const bool sane_hidden = hidden && *hidden > 0 && *hidden <= (std::int64_t{1} << 40);
  if (!ffn && model_type == "mpt" && sane_hidden) {
    const double ratio = j.number({"expansion_ratio"}, &f.ffn_hidden).value_or(4.0);
    const double width = ratio * static_cast<double>(*hidden);
    if (width >= 1.0 && width < 9.0e18) ffn = static_cast<std::int64_t>(width);
  }
  if (!ffn && family && family->ffn_multiple > 0 && sane_hidden) ffn = family->ffn_multiple * *hidden;

  m.hidden = required(hidden, "hidden_size (or n_embd, d_model)");
  m.num_layers = to_int(required(layers, "num_hidden_layers (or n_layer, n_layers, num_layers)"), j, f.num_layers);
  m.num_heads = to_int(required(heads, "num_attention_heads (or n_head, n_heads)"), j, f.num_heads);
  m.vocab = required(vocab, "vocab_size");
  const bool moe_width_given = experts && *experts > 0 && expert_ffn;
  if (!ffn && !moe_width_given) missing.emplace_back("intermediate_size (or n_inner, ffn_hidden_size)");
  m.ffn_hidden = ffn.value_or(0);
  if (!missing.empty()) {
    std::string message =
        (missing.size() == 1 ? "missing required field " : "missing required fields ") + core::join(missing, ", ");
    if (!family) {
      message = (model_type.empty() ? std::string("no model_type") : "unknown model_type '" + model_type + "'") +
                " (known: " + known_families() + ") and " + message;
    }
    throw core::InputError(file_label, 0, "", message);
  }
  // Checked before any per-layer list is built (a hybrid layout reserves one entry per layer: a
  // count of -31 read as a size asked for 4 GiB, found by libFuzzer as an out-of-memory).
  if (m.num_layers <= 0) throw j.error(f.num_layers, std::to_string(m.num_layers) + " must be a positive integer");
  if (m.num_layers > kMaxLayers) {
    throw j.error(f.num_layers, layers_out_of_range(m.num_layers));
  }

  if (family) {
    m.mlp = family->mlp;
    m.position = family->position;
    m.norm = family->norm;
    m.attention_bias = family->attention_bias;
    m.mlp_bias = family->mlp_bias;
    m.tied_embeddings = family->tied;
    m.qk_norm = family->qk_norm;
  } else {
    // Unknown architecture: gated FFN when the activation is SiLU (the Llama pattern), else GeLU.
    const std::string act = core::to_lower(j.string({"hidden_act", "activation_function"}).value_or("silu"));
    m.mlp = (act == "silu" || act == "swish" || act == "swiglu") ? MlpKind::SwiGlu : MlpKind::Gelu;
  }
  m.attention_bias = j.boolean({"attention_bias", "add_qkv_bias", "qkv_bias"}).value_or(m.attention_bias);
  m.mlp_bias = j.boolean({"mlp_bias"}).value_or(m.mlp_bias);
  m.tied_embeddings = j.boolean({"tie_word_embeddings"}).value_or(m.tied_embeddings);
  // Rotary scaling: only YaRN changes what the framework runs (Megatron-Bridge's unfused RoPE path).
  if (const json* rs = j.find({"rope_scaling"}); rs && rs->is_object()) {
    const JsonFields r(*rs, json_text, file_label, "rope_scaling.");
    m.rope_yarn = core::to_lower(r.string({"rope_type", "type"}).value_or("")) == "yarn";
  }
  if (const auto limit = j.number({"swiglu_limit"})) {
    if (!(*limit >= 0.0 && *limit < 1e6)) throw j.error("swiglu_limit", std::to_string(*limit) + " must be 0 or more");
    m.activation_clamp = *limit;
  }
  m.max_position =
      j.integer({"max_position_embeddings", "n_positions", "max_seq_len", "n_ctx", "seq_length", "max_sequence_length"},
                &f.max_position)
          .value_or(0);

  // Key/value heads: MHA unless stated (MPT keeps them in attn_config).
  std::optional<std::int64_t> kv =
      j.integer({"num_key_value_heads", "num_kv_heads", "n_kv_heads", "num_query_groups"}, &f.num_kv_heads);
  if (model_type == "mpt") {
    if (const json* attn = j.find({"attn_config"}); attn && attn->is_object()) {
      const JsonFields a(*attn, json_text, file_label, "attn_config.");
      if (!kv) kv = a.integer({"kv_n_heads"}, &f.num_kv_heads);
      if (a.boolean({"alibi"}).value_or(false)) m.position = PositionKind::Alibi;
    }
    if (m.position != PositionKind::Alibi && !j.boolean({"learned_pos_emb"}).value_or(true))
      m.position = PositionKind::None;
    const bool no_bias = j.boolean({"no_bias"}).value_or(false);
    m.attention_bias = m.mlp_bias = !no_bias;
  }
  m.num_kv_heads = kv ? to_int(*kv, j, f.num_kv_heads) : m.num_heads;
  if (model_type == "gpt2" || model_type == "bloom") m.num_kv_heads = m.num_heads;

  if (const auto hd = j.integer({"head_dim", "kv_channels", "attention_head_dim"}, &f.head_dim)) {
    m.head_dim = to_int(*hd, j, f.head_dim);
  } else if (m.num_heads > 0) {
    if (m.hidden % m.num_heads != 0) {
      throw j.error(f.num_heads, std::to_string(m.num_heads) + " heads do not divide hidden size " +
                                     std::to_string(m.hidden) + "; give head_dim explicitly");
    }
    m.head_dim = static_cast<int>(m.hidden / m.num_heads);
  }

  // Multi-head latent attention (DeepSeek-V2/V3).
  if (const auto kv_rank = j.integer({"kv_lora_rank"}, &f.kv_lora_rank)) {
    workload::MlaSpec mla;
    mla.kv_lora_rank = to_int(*kv_rank, j, f.kv_lora_rank);
    mla.q_lora_rank = to_int(j.integer({"q_lora_rank"}, &f.q_lora_rank).value_or(0), j, f.q_lora_rank);
    mla.qk_nope_head_dim = to_int(j.integer({"qk_nope_head_dim"}, &f.qk_head_dim).value_or(0), j, f.qk_head_dim);
    mla.qk_rope_head_dim = to_int(j.integer({"qk_rope_head_dim"}).value_or(0), j, "qk_rope_head_dim");
    mla.v_head_dim = to_int(j.integer({"v_head_dim"}, &f.v_head_dim).value_or(0), j, f.v_head_dim);
    m.mla = mla;
    m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    f.head_dim = f.qk_head_dim;
  }
  m.mtp_layers = to_int(j.integer({"num_nextn_predict_layers"}).value_or(0), j, "num_nextn_predict_layers");

  // Mixture of experts.
  if (experts && *experts > 0) {
    m.moe.num_experts = to_int(*experts, j, f.num_experts);
    const auto top_k = j.integer({"num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_topk",
                                  "moe_top_k", "moe_router_topk"},
                                 &f.top_k);
    if (!top_k)
      throw core::InputError(
          file_label, 0, "",
          "missing required field num_experts_per_tok (or experts_per_token, moe_topk) for a model with " +
              std::to_string(m.moe.num_experts) + " experts");
    m.moe.top_k = to_int(*top_k, j, f.top_k);
    if (expert_ffn) {
      m.moe.expert_ffn = *expert_ffn;
    } else {
      // Mixtral and GPT-OSS give the expert width as intermediate_size.
      m.moe.expert_ffn = m.ffn_hidden;
      f.expert_ffn = f.ffn_hidden;
    }
    if (const auto shared = j.integer({"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"},
                                      &f.shared_expert_ffn)) {
      m.moe.shared_expert_ffn = *shared;
    } else if (const auto n_shared = j.integer({"n_shared_experts", "num_shared_experts"}, &f.shared_expert_ffn)) {
      m.moe.shared_expert_ffn = *n_shared * m.moe.expert_ffn;
    } else if (model_type == "llama4") {
      // Llama4TextMoe: one shared expert of the routed experts' width in every MoE layer
      // (transformers modeling_llama4.py, shared_expert = Llama4TextMLP(config)).
      m.moe.shared_expert_ffn = m.moe.expert_ffn;
    }
    int first_dense =
        to_int(j.integer({"first_k_dense_replace"}, &f.first_dense_layers).value_or(0), j, f.first_dense_layers);
    if (const json* only = j.find({"mlp_only_layers"}); only && only->is_array() && !only->empty()) {
      // Qwen MoE: explicit dense layers; a leading run 0..k-1 maps onto first_dense_layers.
      for (std::size_t i = 0; i < only->size(); ++i) {
        if (!(*only)[i].is_number_integer() || (*only)[i].get<std::int64_t>() != static_cast<std::int64_t>(i)) {
          throw j.error("mlp_only_layers", "only a leading run of dense layers (0, 1, ..., k-1) is supported");
        }
      }
      first_dense = std::max(first_dense, static_cast<int>(only->size()));
      f.first_dense_layers = "mlp_only_layers";
    }
    int frequency = 1;
    std::string freq_key;
    if (const auto step = j.integer({"decoder_sparse_step", "interleave_moe_layer_step"}, &freq_key)) {
      // Qwen (and Llama 4's interleave_moe_layer_step): layer i is sparse when (i + 1) % step == 0,
      // i.e. layers step-1, 2·step-1, ...
      frequency = to_int(*step, j, freq_key);
      if (frequency > 1) first_dense = std::max(first_dense, frequency - 1);
    } else if (const auto freq = j.integer({"moe_layer_freq"}, &freq_key)) {
      // DeepSeek: layer i is MoE when i >= first_k_dense_replace and i % freq == 0.
      frequency = to_int(*freq, j, freq_key);
      if (frequency > 1) first_dense = (first_dense + frequency - 1) / frequency * frequency;
    }
    if (!freq_key.empty()) f.layer_frequency = freq_key;
    m.moe.first_dense_layers = first_dense;
    m.moe.layer_frequency = frequency;
  }

  // Hybrid layouts: Mamba / linear-attention mixers, single-block layers.
  if (model_type == "qwen3_next") m.attention_output_gate = true;
  parse_hybrid(j, model_type, m, f);

  // Sliding-window attention. Llama 4's chunked local attention (attention_chunk_size tokens, on
  // all layers but every no_rope_layer_interval-th, which attend globally without RoPE) is taken
  // as a sliding window of the chunk size: an upper bound on the context a chunked layer reads.
  if (const auto chunk = j.integer({"attention_chunk_size"}, &f.sliding_window); chunk && *chunk > 0) {
    m.sliding_window = to_int(*chunk, j, f.sliding_window);
    m.sliding_window_pattern = to_int(j.integer({"no_rope_layer_interval"}).value_or(4), j, "no_rope_layer_interval");
  }
  const auto window = j.integer({"sliding_window", "window_size"}, &f.sliding_window);
  if (window && *window > 0) {
    const bool enabled = model_type.rfind("qwen", 0) == 0 ? j.boolean({"use_sliding_window"}).value_or(false) : true;
    if (enabled) {
      m.sliding_window = to_int(*window, j, f.sliding_window);
      const json* types = j.find({"layer_types"});
      // Without layer_types: Gemma 2 alternates (even layers sliding, odd full: Gemma2 in
      // Transformers), Gemma 3 makes every sliding_window_pattern-th layer full (default 6), and
      // Mistral-style models slide every layer.
      int pattern = m.num_layers + 1;
      if (model_type == "gemma2") pattern = 2;
      if (model_type == "gemma3_text" || model_type == "gemma3") {
        pattern = to_int(j.integer({"sliding_window_pattern"}).value_or(6), j, "sliding_window_pattern");
      }
      m.sliding_window_pattern =
          types && !m.is_hybrid() ? sliding_pattern_from_layer_types(*types, m.num_layers, j) : pattern;
      if (m.sliding_window_pattern == 1) m.sliding_window = 0;
    }
  }

  validate(m, f, [&](const std::string& field, const std::string& message) { return j.error(field, message); });
  return m;
}

std::vector<std::string> preset_model_names() {
  std::vector<std::string> names;
  for (const core::EmbeddedFile& file : core::embedded_files()) {
    const std::string_view p = file.path;
    if (p.size() > kPresetDir.size() + kPresetExt.size() && p.substr(0, kPresetDir.size()) == kPresetDir &&
        p.substr(p.size() - kPresetExt.size()) == kPresetExt &&
        p.find('/', kPresetDir.size()) == std::string_view::npos) {
      names.emplace_back(p.substr(kPresetDir.size(), p.size() - kPresetDir.size() - kPresetExt.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A published model name reduced to what identifies its architecture (preset_for_published_name).
std::string architecture_name(std::string_view published) {
  std::string s = core::to_lower(std::string(published));
  if (const auto slash = s.rfind('/'); slash != std::string::npos) s = s.substr(slash + 1);
  // Tables write the words apart with underscores or spaces ("Qwen3_30B_a3B", "GPT OSS 120B").
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '_' || c == ' '; }, '-');
  // NVIDIA's repos repeat the organisation ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").
  if (s.starts_with("nvidia-")) s.erase(0, 7);
  static constexpr std::string_view kQualifiers[] = {"-instruct", "-chat",  "-base",  "-hf",    "-it",   "-fp8-dynamic",
                                                     "-fp8",      "-nvfp4", "-mxfp4", "-fp4",   "-bf16", "-awq",
                                                     "-gptq",     "-int4",  "-int8",  "-w4a16", "-w8a8", "-8k"};
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::string_view q : kQualifiers) {
      if (s.size() > q.size() && s.ends_with(q)) {
        s.resize(s.size() - q.size());
        changed = true;
      }
    }
    // A release date (-0528, -2507) or a Mistral release (-v0.1).
    const auto dash = s.rfind('-');
    if (dash != std::string::npos && dash > 0) {
      const std::string_view tail = std::string_view(s).substr(dash + 1);
      const bool date =
          tail.size() == 4 && std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; });
      const bool mistral = tail.size() >= 4 && tail.substr(0, 3) == "v0." &&
                           std::all_of(tail.begin() + 3, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (date || mistral) {
        s.resize(dash);
        changed = true;
      }
    }
  }
  return s;
}

}  // namespace

std::string preset_for_published_name(const std::string& published) {
  static const std::map<std::string, std::string> by_name = [] {
    std::map<std::string, std::string> m;
    // Names without a preset of their own whose architecture a preset's source states is the same.
    m["meta-llama-3-70b"] = "llama3.1-70b";  // Llama 3 70B: the Llama 3.1 70B dimensions (8K context)
    m["llama-3-70b"] = "llama3.1-70b";
    m["meta-llama-3-8b"] = "llama3.1-8b";
    m["llama-3-8b"] = "llama3.1-8b";
    m["llama3-70b"] = "llama3.1-70b";  // Megatron-Bridge's tables: "LLAMA3_70B", "LLAMA3_8B"
    m["llama3-8b"] = "llama3.1-8b";
    // DeepSeek-V3.1: nvidia/DeepSeek-V3.1-NVFP4's config.json differs from DeepSeek-V3's only in
    // quantization_config and transformers_version.
    m["deepseek-v3.1"] = "deepseek-v3";
    for (const std::string& key : preset_model_names()) {
      m.emplace(architecture_name(key), key);  // the preset's own key ("llama3.1-405b", "kimi-k2")
      const auto text = core::embedded_file(std::string(kPresetDir) + key + std::string(kPresetExt));
      if (!text) continue;
      // "_source": "https://huggingface.co/<org>/<repo>/blob/main/config.json ..."
      constexpr std::string_view kHf = "huggingface.co/";
      const auto at = text->find(kHf);
      const auto source_end = text->find('\n', text->find("\"_source\""));
      if (at == std::string_view::npos || at > source_end) continue;
      const auto repo_start = at + kHf.size();
      const auto org_end = text->find('/', repo_start);
      if (org_end == std::string_view::npos) continue;
      const auto repo_end = text->find_first_of("/ \")", org_end + 1);
      if (repo_end == std::string_view::npos) continue;
      m.emplace(architecture_name(text->substr(repo_start, repo_end - repo_start)), key);
    }
    return m;
  }();
  // Compared without the hyphens, which tables place freely ("DeepSeekV3", "Qwen3-30B-A3B").
  auto squash = [](std::string s) {
    std::erase(s, '-');
    return s;
  };
  static const std::map<std::string, std::string> squashed = [&] {
    std::map<std::string, std::string> m;
    for (const auto& [name, key] : by_name) m.emplace(squash(name), key);
    return m;
  }();
  const std::string wanted = squash(architecture_name(published));
  if (wanted.empty()) return {};
  if (const auto it = squashed.find(wanted); it != squashed.end()) return it->second;
  // A name without its size ("Nemotron_3_Nano") is the one preset that continues it with one
  // ("nemotron-3-nano-30b-a3b"); two or more candidates are no match.
  std::string found;
  for (auto it = squashed.lower_bound(wanted); it != squashed.end() && it->first.starts_with(wanted); ++it) {
    const char next = it->first[wanted.size()];
    if (next < '0' || next > '9') continue;
    if (!found.empty() && found != it->second) return {};
    found = it->second;
  }
  return found;
}

ModelSpec load_model(const std::string& name_or_path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!name_or_path.empty() && fs::exists(name_or_path, ec)) {
    fs::path file = name_or_path;
    std::string name = file.stem().string();
    if (fs::is_directory(file, ec)) {
      name = file.filename().empty() ? file.parent_path().filename().string() : file.filename().string();
      file /= "config.json";
      if (!fs::exists(file, ec)) {
        throw core::InputError::flag(flag, "directory '" + name_or_path + "' holds no config.json");
      }
    } else if (file.filename() == "config.json" && file.has_parent_path()) {
      name = file.parent_path().filename().string();
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) throw core::InputError::flag(flag, "cannot read '" + file.string() + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_hf_config(text.str(), file.string(), name);
  }
  const std::string key = core::to_lower(name_or_path);
  const std::string path = std::string(kPresetDir) + key + std::string(kPresetExt);
  if (const auto text = core::embedded_file(path)) {
    // Presets are embedded and never change: each is parsed once per process (a validation
    // table or a sweep resolves the same few models thousands of times).
    static std::mutex turn;
    static std::map<std::string, ModelSpec, std::less<>> parsed;
    const std::lock_guard lock(turn);
    auto it = parsed.find(key);
    if (it == parsed.end()) it = parsed.emplace(key, parse_hf_config(std::string(*text), "data/" + path, key)).first;
    return it->second;
  }
  if (const std::string preset = preset_for_published_name(name_or_path); !preset.empty()) {
    return load_model(preset, flag);
  }
  if (name_or_path.find('/') != std::string::npos || key.ends_with(".json")) {
    throw core::InputError::flag(flag, "no such file or directory, and no preset published as '" + name_or_path + "'");
  }
  throw core::InputError::flag(flag, core::unknown_name_message("model", name_or_path, preset_model_names()) +
                                         " (or give a path to a Hugging Face config.json)");
}

ModelSpec model_from_dimensions(const ModelDimensions& d, const std::string& source) {
  ModelSpec m;
  m.name = d.name;
  m.family = d.family;
  m.source = source;
  m.num_layers = d.num_layers;
  m.hidden = d.hidden;
  m.ffn_hidden = d.ffn_hidden;
  m.num_heads = d.num_heads;
  m.num_kv_heads = d.num_kv_heads > 0 ? d.num_kv_heads : d.num_heads;
  m.vocab = d.vocab;
  m.mlp = d.mlp;
  m.tied_embeddings = d.tied_embeddings;
  m.max_position = d.max_position;
  m.moe.num_experts = d.num_experts;
  m.moe.top_k = d.top_k;
  m.moe.expert_ffn = d.expert_ffn > 0 ? d.expert_ffn : d.ffn_hidden;
  m.moe.shared_expert_ffn = d.shared_expert_ffn;
  m.moe.first_dense_layers = d.first_dense_layers;
  m.moe.layer_frequency = d.moe_layer_frequency;
  FieldNames f;
  f.ffn_hidden = "ffn_hidden";
  f.num_experts = "num_experts";
  f.top_k = "top_k";
  f.expert_ffn = "expert_ffn";
  f.shared_expert_ffn = "shared_expert_ffn";
  f.first_dense_layers = "first_dense_layers";
  f.layer_frequency = "moe_layer_frequency";
  auto error = [&](const std::string& field, const std::string& message) {
    return core::InputError(source, 0, field, message);
  };
  if (d.head_dim > 0) {
    m.head_dim = d.head_dim;
  } else if (d.num_heads > 0 && d.hidden > 0) {
    if (d.hidden % d.num_heads != 0) {
      throw error(f.num_heads, std::to_string(d.num_heads) + " heads do not divide hidden size " +
                                   std::to_string(d.hidden) + "; give head_dim explicitly");
    }
    m.head_dim = static_cast<int>(d.hidden / d.num_heads);
  }
  if (d.num_heads <= 0) m.head_dim = 1;  // let validate() report num_heads rather than head_dim
  validate(m, f, error);
  return m;
}

}  // namespace fmsim::config
