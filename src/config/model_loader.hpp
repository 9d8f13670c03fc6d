// Loading transformer architectures: Hugging Face config.json files, shipped presets, explicit dimensions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/model_spec.hpp"

namespace fmsim::config {

/// A preset key (case-insensitive: "llama3.1-70b", see preset_model_names()), a published name
/// of a preset's checkpoint (preset_for_published_name: "meta-llama/Llama-3.1-70B"), a path to a
/// config.json, or a directory holding one. Errors (unknown preset with did-you-mean, unreadable
/// file, malformed JSON, missing or invalid fields) are core::InputError; when the input names no
/// file, the error is reported against `flag`.
workload::ModelSpec load_model(const std::string& name_or_path, const std::string& flag = "--model");

/// Parses the text of a Hugging Face config.json, normalising the field names of Llama,
/// Mistral/Mixtral, Qwen2/Qwen3 (dense and MoE), DeepSeek-V2/V3, GPT-OSS, GPT-2/GPT-NeoX, BLOOM
/// and MPT. `file_label` names the file in errors (`file:line: field: message`); `name` becomes
/// ModelSpec::name. Unknown model_type values are accepted when the generic fields are present;
/// otherwise the error lists every missing field.
workload::ModelSpec parse_hf_config(const std::string& json_text, const std::string& file_label,
                                    const std::string& name);

/// Keys of the shipped presets (data/models/*.json), sorted.
std::vector<std::string> preset_model_names();

/// A model as its publisher spells it (a Hugging Face repo id such as "Qwen/Qwen3-32B" or
/// "nvidia/Llama-3.1-8B-Instruct-FP8", or a table's "Llama-3.3-70B-Instruct") -> the preset whose
/// config.json came from that repo; empty when none does. The rule (docs/models/workload.md,
/// "Published names"): lower case, the organisation dropped, then the qualifiers that name a
/// checkpoint of the same architecture stripped from the end (-instruct, -chat, -base, -hf, -it,
/// quantisations such as -fp8 or -nvfp4, four-digit release dates such as -0528, Mistral's -v0.N);
/// compared with the repo named in each preset's `_source` treated alike, or with a name the
/// presets' sources state is the same architecture (Meta-Llama-3-70B: Llama 3.1 70B's).
std::string preset_for_published_name(const std::string& published);

/// A model given by its dimensions (validation CSV rows, command-line flags). Zero means "not
/// given" where a default exists (num_kv_heads = num_heads, head_dim = hidden / num_heads).
struct ModelDimensions {
  std::string name;
  std::string family = "custom";
  int num_layers = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn_hidden = 0;  ///< dense FFN width; may be 0 when every layer is MoE
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  std::int64_t vocab = 0;
  workload::MlpKind mlp = workload::MlpKind::SwiGlu;
  bool tied_embeddings = false;
  std::int64_t max_position = 0;
  int num_experts = 0;  ///< 0 = dense
  int top_k = 0;
  std::int64_t expert_ffn = 0;
  std::int64_t shared_expert_ffn = 0;
  int first_dense_layers = 0;
  int moe_layer_frequency = 1;
};

/// Builds and validates a ModelSpec from explicit dimensions. Bad values raise core::InputError
/// naming `source` (a file label, may be empty) and the ModelDimensions field.
workload::ModelSpec model_from_dimensions(const ModelDimensions& dims, const std::string& source = "");

/// Checks the invariants every consumer relies on (positive sizes, heads divisible by KV heads,
/// top_k <= experts, ...); raises core::InputError naming `file` and the offending field.
void validate_model(const workload::ModelSpec& model, const std::string& file);

}  // namespace fmsim::config
