// fmsim models: list the shipped model presets, or show one model (preset or config.json) in full.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "workload/model_flops.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::cli {
namespace {

using workload::ModelSpec;
using workload::ParameterCount;

std::string format_count(std::int64_t n) { return core::format_count(static_cast<double>(n)); }

std::string_view mlp_name(workload::MlpKind k) { return k == workload::MlpKind::SwiGlu ? "swiglu" : "gelu"; }

std::string_view position_name(workload::PositionKind k) {
  switch (k) {
    case workload::PositionKind::Rope: return "rope";
    case workload::PositionKind::Learned: return "learned";
    case workload::PositionKind::Alibi: return "alibi";
    case workload::PositionKind::None: return "none";
  }
  return "none";
}

std::string_view norm_name(workload::NormKind k) { return k == workload::NormKind::RmsNorm ? "rmsnorm" : "layernorm"; }

std::string experts_cell(const ModelSpec& m) {
  return m.is_moe() ? fmt::format("{}/{}", m.moe.num_experts, m.moe.top_k) : "-";
}

/// The FLOP conventions `models show` reports, per token at a given sequence length.
struct NamedConvention {
  std::string_view key;
  workload::FlopOptions options;
};

std::vector<NamedConvention> flop_conventions() {
  using workload::AttentionMask;
  using workload::FlopConvention;
  return {{"megatron_causal", {FlopConvention::Megatron, AttentionMask::Causal, 0, false}},
          {"megatron_full", {FlopConvention::Megatron, AttentionMask::Full, 0, false}},
          {"6n", {FlopConvention::SixN, AttentionMask::Full, 0, false}},
          {"palm", {FlopConvention::PaLM, AttentionMask::Full, 0, false}},
          {"mpt", {FlopConvention::Mpt, AttentionMask::Full, 0, false}}};
}

nlohmann::json parameters_json(const ParameterCount& p) {
  return {{"total", p.total},
          {"active", p.active},
          {"non_embedding", p.non_embedding()},
          {"embedding", p.embedding},
          {"lm_head", p.lm_head},
          {"attention", p.attention},
          {"dense_mlp", p.dense_mlp},
          {"routed_experts", p.routed_experts},
          {"shared_experts", p.shared_experts},
          {"routers", p.routers},
          {"norms", p.norms},
          {"mtp", p.mtp},
          {"per_layer",
           {{"attention", p.attention_per_layer},
            {"dense_mlp", p.dense_mlp_per_layer},
            {"expert", p.expert},
            {"shared_expert", p.shared_expert_per_layer},
            {"router", p.router_per_layer},
            {"norms", p.norms_per_layer}}},
          {"dense_layers", p.dense_layers},
          {"moe_layers", p.moe_layers},
          {"ssm", p.ssm},
          {"linear_attention", p.linear_attention},
          {"ssm_per_layer", p.ssm_per_layer},
          {"linear_attention_per_layer", p.linear_attention_per_layer},
          {"attention_layers", p.attention_layers},
          {"ssm_layers", p.ssm_layers},
          {"linear_attention_layers", p.linear_attention_layers}};
}

nlohmann::json model_json(const ModelSpec& m, std::int64_t seq_len) {
  nlohmann::json j = {{"name", m.name},
                      {"family", m.family},
                      {"source", m.source},
                      {"num_layers", m.num_layers},
                      {"hidden", m.hidden},
                      {"ffn_hidden", m.ffn_hidden},
                      {"num_heads", m.num_heads},
                      {"num_kv_heads", m.num_kv_heads},
                      {"head_dim", m.head_dim},
                      {"vocab", m.vocab},
                      {"mlp", mlp_name(m.mlp)},
                      {"position", position_name(m.position)},
                      {"norm", norm_name(m.norm)},
                      {"tied_embeddings", m.tied_embeddings},
                      {"attention_bias", m.attention_bias},
                      {"mlp_bias", m.mlp_bias},
                      {"qk_norm", m.qk_norm},
                      {"max_position", m.max_position},
                      {"sliding_window", m.sliding_window},
                      {"sliding_window_pattern", m.sliding_window_pattern},
                      {"mtp_layers", m.mtp_layers}};
  j["moe"] = m.is_moe() ? nlohmann::json{{"num_experts", m.moe.num_experts},
                                         {"top_k", m.moe.top_k},
                                         {"expert_ffn", m.moe.expert_ffn},
                                         {"shared_expert_ffn", m.moe.shared_expert_ffn},
                                         {"first_dense_layers", m.moe.first_dense_layers},
                                         {"layer_frequency", m.moe.layer_frequency}}
                        : nlohmann::json(nullptr);
  j["mla"] = m.mla ? nlohmann::json{{"q_lora_rank", m.mla->q_lora_rank},
                                    {"kv_lora_rank", m.mla->kv_lora_rank},
                                    {"qk_nope_head_dim", m.mla->qk_nope_head_dim},
                                    {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                                    {"v_head_dim", m.mla->v_head_dim}}
                   : nlohmann::json(nullptr);
  j["parameters"] = parameters_json(workload::count_parameters(m));
  nlohmann::json flops = {{"seq_len", seq_len}};
  for (const NamedConvention& c : flop_conventions()) {
    flops[std::string(c.key)] = workload::model_flops_per_token(m, seq_len, c.options).value();
  }
  j["training_flops_per_token"] = flops;
  return j;
}

void print_list(bool as_json) {
  std::vector<ModelSpec> models;
  for (const std::string& name : config::preset_model_names()) models.push_back(config::load_model(name));
  if (as_json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ModelSpec& m : models) {
      const ParameterCount p = workload::count_parameters(m);
      list.push_back({{"name", m.name},
                      {"family", m.family},
                      {"num_layers", m.num_layers},
                      {"hidden", m.hidden},
                      {"num_heads", m.num_heads},
                      {"num_kv_heads", m.num_kv_heads},
                      {"num_experts", m.moe.num_experts},
                      {"top_k", m.moe.top_k},
                      {"params_total", p.total},
                      {"params_active", p.active}});
    }
    std::cout << list.dump(2) << "\n";
    return;
  }
  std::size_t name_width = 4;
  std::size_t family_width = 6;
  for (const ModelSpec& m : models) {
    name_width = std::max(name_width, m.name.size());
    family_width = std::max(family_width, m.family.size());
  }
  std::cout << fmt::format("{:<{}}  {:<{}}  {:>6}  {:>6}  {:>8}  {:>9}  {:>8}  {:>8}\n", "NAME", name_width, "FAMILY",
                           family_width, "LAYERS", "HIDDEN", "HEADS/KV", "EXPERTS/K", "PARAMS", "ACTIVE");
  for (const ModelSpec& m : models) {
    const ParameterCount p = workload::count_parameters(m);
    std::cout << fmt::format("{:<{}}  {:<{}}  {:>6}  {:>6}  {:>8}  {:>9}  {:>8}  {:>8}\n", m.name, name_width, m.family,
                             family_width, m.num_layers, m.hidden, fmt::format("{}/{}", m.num_heads, m.num_kv_heads),
                             experts_cell(m), format_count(p.total), format_count(p.active));
  }
  std::cout << "\nACTIVE: parameters one token's forward pass multiplies by (routed experts only; the embedding\n"
               "lookup excluded). Show one model: fmsim models show NAME|PATH [--json]\n";
}

void print_show(const ModelSpec& m, std::int64_t seq_len) {
  const ParameterCount p = workload::count_parameters(m);
  std::cout << fmt::format("model      {}\nfamily     {}\nsource     {}\n\n", m.name, m.family, m.source);
  std::cout << fmt::format("layers {}, hidden {}, FFN {} ({}), heads {} (kv {}, head_dim {}), vocab {}\n", m.num_layers,
                           m.hidden, m.ffn_hidden, mlp_name(m.mlp), m.num_heads, m.num_kv_heads, m.head_dim, m.vocab);
  std::cout << fmt::format(
      "positions {} (max {}), norm {}, tied embeddings {}, attention bias {}, mlp bias {}, "
      "qk norm {}\n",
      position_name(m.position), m.max_position, norm_name(m.norm), m.tied_embeddings ? "yes" : "no",
      m.attention_bias ? "yes" : "no", m.mlp_bias ? "yes" : "no", m.qk_norm ? "yes" : "no");
  if (m.is_moe()) {
    std::cout << fmt::format(
        "moe: {} experts, top-{}, expert FFN {}, shared-expert FFN {}, first {} layers dense, "
        "every {} layer(s) MoE\n",
        m.moe.num_experts, m.moe.top_k, m.moe.expert_ffn, m.moe.shared_expert_ffn, m.moe.first_dense_layers,
        m.moe.layer_frequency);
  }
  if (m.mla) {
    std::cout << fmt::format("mla: q_lora_rank {}, kv_lora_rank {}, qk head dim {} + {} (rope), v head dim {}\n",
                             m.mla->q_lora_rank, m.mla->kv_lora_rank, m.mla->qk_nope_head_dim, m.mla->qk_rope_head_dim,
                             m.mla->v_head_dim);
  }
  if (m.sliding_window > 0) {
    std::cout << fmt::format("sliding window {} tokens; {}\n", m.sliding_window,
                             m.sliding_window_pattern > m.num_layers
                                 ? std::string("every layer")
                                 : fmt::format("1 of every {} layers full attention", m.sliding_window_pattern));
  }
  if (m.mtp_layers > 0) std::cout << fmt::format("mtp modules: {}\n", m.mtp_layers);
  if (m.is_hybrid()) {
    const int ffn_only =
        static_cast<int>(std::count_if(m.layers.begin(), m.layers.end(), [](const workload::LayerSpec& l) {
          return l.mixer == workload::MixerKind::None;
        }));
    std::cout << fmt::format("hybrid: {} attention, {} Mamba, {} gated DeltaNet and {} FFN-only layers\n",
                             m.count_mixers(workload::MixerKind::Attention), m.count_mixers(workload::MixerKind::Mamba),
                             m.count_mixers(workload::MixerKind::LinearAttention), ffn_only);
  }
  if (m.ssm) {
    const workload::SsmSpec& s = *m.ssm;
    if (s.version == 2) {
      std::cout << fmt::format("mamba-2: {} heads x {} (inner {}), state {}, {} groups, conv {}, chunk {}\n",
                               s.num_heads, s.head_dim, s.inner, s.state, s.groups, s.conv_kernel, s.chunk);
    } else {
      std::cout << fmt::format("mamba-1: inner {}, state {}, dt rank {}, conv {}\n", s.inner, s.state, s.dt_rank,
                               s.conv_kernel);
    }
  }
  if (m.linear) {
    std::cout << fmt::format("gated deltanet: {} key heads x {}, {} value heads x {}, conv {}\n", m.linear->key_heads,
                             m.linear->key_head_dim, m.linear->value_heads, m.linear->value_head_dim,
                             m.linear->conv_kernel);
  }

  std::cout << "\nparameters\n";
  auto row = [](std::string_view label, std::int64_t n) {
    std::cout << fmt::format("  {:<26} {:>16}  {:>8}\n", label, n, format_count(n));
  };
  row("total", p.total);
  row("active per token", p.active);
  row("embedding", p.embedding);
  row("lm head", p.lm_head);
  row("attention", p.attention);
  if (p.ssm > 0) row("mamba", p.ssm);
  if (p.linear_attention > 0) row("gated deltanet", p.linear_attention);
  row("dense mlp", p.dense_mlp);
  row("routed experts", p.routed_experts);
  row("shared experts", p.shared_experts);
  row("routers", p.routers);
  row("norms", p.norms);
  if (p.mtp > 0) row("mtp (not in total)", p.mtp);
  std::cout << fmt::format(
      "  per layer: attention {}, dense mlp {}, one expert {}, shared expert {}, router {}, "
      "norms {}; {} dense + {} MoE layers\n",
      p.attention_per_layer, p.dense_mlp_per_layer, p.expert, p.shared_expert_per_layer, p.router_per_layer,
      p.norms_per_layer, p.dense_layers, p.moe_layers);

  std::cout << fmt::format(
      "\ntraining FLOPs per token at seq_len {} (fwd+bwd, no recompute; docs/models/workload.md)\n", seq_len);
  for (const NamedConvention& c : flop_conventions()) {
    std::cout << fmt::format("  {:<16} {:.4g}\n", c.key,
                             workload::model_flops_per_token(m, seq_len, c.options).value());
  }
}

}  // namespace

void add_models_command(CLI::App& app, Context& /*ctx*/) {
  auto* models = app.add_subcommand("models", "List the model presets, or show one model's normalised architecture");
  models->require_subcommand(0, 1);
  auto list_json = std::make_shared<bool>(false);
  models->add_flag("--json", *list_json, "Print the list as JSON");
  models->footer(
      "Examples:\n"
      "  fmsim models\n"
      "  fmsim models show llama3.1-70b\n"
      "  fmsim models show path/to/config.json --json");

  auto* show = models->add_subcommand("show", "Show every normalised field, parameter counts and FLOPs per token");
  auto name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  auto seq_len = std::make_shared<std::int64_t>(4096);
  show->add_option("model", *name, "Preset name (see 'fmsim models') or path to a config.json or its directory")
      ->required()
      ->type_name("NAME|PATH");
  show->add_flag("--json", *show_json, "Print as JSON");
  show->footer(
      "Examples:\n"
      "  fmsim models show llama3.1-70b\n"
      "  fmsim models show deepseek-v3 --seq-len 8192\n"
      "  fmsim models show path/to/config.json --json");
  show->add_option("--seq-len", *seq_len, "Sequence length for the FLOPs-per-token figures")
      ->capture_default_str()
      ->check(positive(*seq_len));
  show->callback([name, show_json, seq_len] {
    const ModelSpec m = config::load_model(*name, "model");
    if (*show_json) {
      std::cout << model_json(m, *seq_len).dump(2) << "\n";
    } else {
      print_show(m, *seq_len);
    }
  });
  models->callback([models, list_json] {
    if (models->get_subcommands().empty()) print_list(*list_json);
  });
}

}  // namespace fmsim::cli
