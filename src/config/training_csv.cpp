// Lenient mapping of published training-run cells to catalog systems, models and layouts.
#include "config/training_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "config/cluster_loader.hpp"
#include "config/csv.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::config {
namespace {

bool contains(const std::string& haystack, std::string_view needle) {
  return core::to_lower(haystack).find(core::to_lower(needle)) != std::string::npos;
}

std::optional<double> number(const std::string& cell);

// The first count or size cell of a row outside the range its integer takes, as a reason.
template <class Get>
std::optional<std::string> count_out_of_range(Get&& get) {
  static const std::pair<const char*, double> kLimits[] = {{"num_gpus", 2e9},
                                                           {"num_layers", 2e9},
                                                           {"num_attention_heads", 2e9},
                                                           {"num_kv_heads", 2e9},
                                                           {"moe_num_experts", 2e9},
                                                           {"moe_topk", 2e9},
                                                           {"micro_batch_size", 2e9},
                                                           {"tp", 2e9},
                                                           {"pp", 2e9},
                                                           {"vp", 2e9},
                                                           {"cp", 2e9},
                                                           {"ep", 2e9},
                                                           {"etp", 2e9},
                                                           {"hidden_size", 9e15},
                                                           {"ffn_hidden_size", 9e15},
                                                           {"vocab_size", 9e15},
                                                           {"moe_expert_ffn", 9e15},
                                                           {"moe_shared_expert_ffn", 9e15},
                                                           {"seq_len", 9e15},
                                                           {"global_batch_size", 9e15}};
  for (const auto& [column, limit] : kLimits) {
    const auto v = number(get(column));
    if (v && std::fabs(*v) > limit)
      return fmt::format("{}: {} is out of range (at most {:g})", column, get(column), limit);
  }
  if (const auto mbs = number(get("micro_batch_size")); mbs && std::lround(*mbs) < 1) {
    return fmt::format("micro_batch_size: {} must be at least 1", get("micro_batch_size"));
  }
  return std::nullopt;
}

std::optional<double> number(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  std::string s;
  for (char c : cell) {
    if (c != ',' && c != ' ') s += c;
  }
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == 0 || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// "96GB" in a hardware cell (the last "<digits>GB" with the case as written, so "Gbps" is not one).
std::optional<double> memory_size_gb(const std::string& hw) {
  std::optional<double> size;
  for (std::size_t at = hw.find("GB"); at != std::string::npos; at = hw.find("GB", at + 2)) {
    std::size_t b = at;
    while (b > 0 && hw[b - 1] == ' ') --b;
    std::size_t e = b;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(hw[b - 1]))) --b;
    if (b < e) size = std::stod(hw.substr(b, e - b));
  }
  return size;
}

std::string stack_of(const std::string& framework) {
  using parallelism::Stack;
  if (contains(framework, "torchtitan")) return std::string(to_string(Stack::TorchTitan));
  if (contains(framework, "composer") || contains(framework, "foundry"))
    return std::string(to_string(Stack::LlmFoundry));
  // Megatron-LM of 2021-2022 (SC21, Korthikanti et al.) and Megatron-DeepSpeed (BigScience's 2022
  // fork: BLOOM): before FlashAttention, Transformer Engine and sequence parallelism.
  if (contains(framework, "megatron-lm (2021") || contains(framework, "megatron-lm (2022") ||
      contains(framework, "megatron-deepspeed"))
    return std::string(to_string(Stack::MegatronLegacy));
  return std::string(to_string(Stack::Megatron));  // NeMo, Megatron-LM/Core/Bridge, Meta's 4D parallelism
}

core::Precision precision_of(const std::string& p) {
  if (const auto word = core::kTrainingPrecisionWords.parse(p)) return *word;
  if (contains(p, "fp4")) return core::Precision::FP4;
  if (contains(p, "fp8")) return core::Precision::FP8;
  if (contains(p, "fp16")) return core::Precision::FP16;
  return core::Precision::BF16;
}

// The FP8 scaling recipe a precision cell names: "float8 rowwise" (torchao), "block-scaled" or
// "MXFP8"; per-tensor (delayed or current scaling) otherwise.
core::Fp8Recipe fp8_recipe_of(const std::string& p) {
  if (const auto word = core::kFp8RecipeWords.parse(p)) return *word;
  if (contains(p, "rowwise")) return core::Fp8Recipe::Rowwise;
  if (contains(p, "block") || contains(p, "mxfp8")) return core::Fp8Recipe::Block;
  return core::Fp8Recipe::Tensorwise;
}

workload::MlpKind mlp_of(const std::string& model) {
  for (const char* gelu : {"gpt", "mpt", "bloom", "bigscience", "mt-nlg", "nemotron"}) {
    if (contains(model, gelu) && !contains(model, "gpt-oss")) return workload::MlpKind::Gelu;
  }
  return workload::MlpKind::SwiGlu;
}

// A dense GPT's layer count from the parameter count its row states (params_total, else the
// "200B" in the model's name), for rows that give the size but not the layers (BigScience's tr11
// topology tables: "the number of layers had to be tweaked to fit PP and NHIDDEN was fixed").
// Megatron's GPT has P = L (12 h^2 + 13 h) + (V + s) h with multi-head attention, a 4h MLP and
// tied embeddings (per layer: QKV and output projections 4 h^2 + 4 h, MLP 8 h^2 + 5 h, two layer
// norms 4 h; word and position embeddings). With pp > 1 the nearest multiple of pp: Megatron-LM
// splits its layers evenly over the stages (ParallelTransformer._get_num_layers asserts
// num_layers % pp == 0). Without a derivation, `how` says why.
struct DerivedLayers {
  int layers = 0;   // 0: not derived
  std::string how;  // the derivation, or why there is none
};
template <class Get>
DerivedLayers layers_from_size(Get&& get, const std::string& model) {
  auto none = [](const std::string& why) { return DerivedLayers{0, "num_layers missing and not derivable: " + why}; };
  const auto h = number(get("hidden_size"));
  const auto v = number(get("vocab_size"));
  if (!h || *h <= 0 || !v || *v <= 0) return none("hidden_size and vocab_size are needed");
  if (number(get("moe_num_experts")).value_or(0.0) > 1.0) return none("a mixture-of-experts model");
  if (mlp_of(model) != workload::MlpKind::Gelu || contains(model, "nemotron"))
    return none("the count holds for a GPT with a GELU MLP and tied embeddings");
  if (const auto ffn = number(get("ffn_hidden_size")); ffn && *ffn != 4.0 * *h)
    return none(fmt::format("ffn_hidden_size {} is not 4 x hidden_size", get("ffn_hidden_size")));
  if (const auto kv = number(get("num_kv_heads")); kv && *kv != number(get("num_attention_heads")).value_or(-1.0))
    return none("grouped-query attention (num_kv_heads differs from num_attention_heads)");
  std::optional<double> params;
  std::string stated = get("params_total");
  if (!stated.empty()) {
    const std::string first = stated.substr(0, stated.find(' '));
    params = core::parse_count(first).value;
    if (!params) return none(fmt::format("params_total '{}' is not a count (e.g. 176B)", stated));
    stated = first;
  } else {
    // The last word of the name that is a count of billions ("GPT 200B"): digits, a point, a B.
    std::stringstream words(model);
    for (std::string w; words >> w;) {
      const bool size_word =
          w.size() > 1 && (w.back() == 'B' || w.back() == 'b') && w.find_first_not_of("0123456789.") == w.size() - 1;
      if (const auto n = size_word ? core::parse_count(w).value : std::nullopt) {
        params = n;
        stated = w;
      }
    }
    if (!params) return none("no params_total and no size such as 200B in the model name");
  }
  const double s = number(get("seq_len")).value_or(0.0);
  const double exact = (*params - (*v + s) * *h) / (12.0 * *h * *h + 13.0 * *h);
  if (!(exact >= 0.5) || exact > 1e6)
    return none(fmt::format("the stated {} parameters give {:.3g} layers", stated, exact));
  const int pp = std::max(1, static_cast<int>(std::lround(number(get("pp")).value_or(1.0))));
  const int layers = std::max(pp, static_cast<int>(std::lround(exact / pp)) * pp);
  return DerivedLayers{
      layers, fmt::format("{} layers from the stated {} parameters: P = L (12 h^2 + 13 h) + "
                          "(V + s) h gives {:.1f}{}",
                          layers, stated, exact, pp > 1 ? fmt::format(", the nearest multiple of pp {}", pp) : "")};
}

}  // namespace

std::optional<HardwareMatch> map_hardware(const std::string& hw) {
  const std::string h = core::to_lower(hw);
  if (contains(h, "gb300")) return HardwareMatch{"gb300-nvl72", ""};
  if (contains(h, "gb200")) return HardwareMatch{"gb200-nvl72", ""};
  if (contains(h, "b300")) return HardwareMatch{"dgx-b300", ""};
  if (contains(h, "b200")) return HardwareMatch{"dgx-b200", ""};
  if (contains(h, "sm100")) {
    // Compute capability 10.0 is B200 (183,359 MiB visible, 179 GiB) or GB200's Blackwell (185 GiB):
    // a capacity stated above 182 GiB (the largest "<n> GiB" in the cell) is the GB200's.
    double cap = 0.0;
    for (std::size_t at = h.find("gib"); at != std::string::npos; at = h.find("gib", at + 3)) {
      std::size_t e = at;
      while (e > 0 && h[e - 1] == ' ') --e;
      std::size_t b = e;
      while (b > 0 && (std::isdigit(static_cast<unsigned char>(h[b - 1])) || h[b - 1] == '.')) --b;
      if (b < e) cap = std::max(cap, number(h.substr(b, e - b)).value_or(0.0));
    }
    return HardwareMatch{cap > 182.0 ? "gb200-nvl72" : "dgx-b200", ""};
  }
  if (contains(h, "h200")) return HardwareMatch{"p5en.48xlarge", ""};
  if (contains(h, "h800")) return HardwareMatch{"dgx-h100", "h800-sxm"};
  if (contains(h, "h100")) return HardwareMatch{"dgx-h100", ""};
  if (contains(h, "a100") && contains(h, "40")) return HardwareMatch{"dgx-a100", "a100-sxm-40gb"};
  if (contains(h, "a100")) return HardwareMatch{"dgx-a100", ""};
  return std::nullopt;
}

std::vector<TrainingRow> read_training_csv(const std::string& csv_path, const hardware::Catalog& catalog) {
  std::string path;
  const std::string text = read_measurements(csv_path, "training.csv", "--csv", path);
  return training_rows(parse_csv(text, path), path, catalog, {});
}

namespace {

// What a row's `recipe_settings` cell ("key=value; ..." read from the recipe files the source ran;
// validation/README.md lists the keys and their sources) sets on its layout and its packed documents'
// length. An unknown key or a bad value is an InputError naming the file, line and column.
void apply_training_recipe(const std::string& text, parallelism::Layout& l, std::int64_t& document_tokens,
                           std::optional<training::MoeDispatcher>& dispatcher, const std::string& file, int line) {
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ';')) {
    const auto eq = item.find('=');
    const std::string key(core::trim_blanks(std::string_view(item).substr(0, eq)));
    const std::string value(eq == std::string::npos ? std::string_view()
                                                    : core::trim_blanks(std::string_view(item).substr(eq + 1)));
    if (key.empty() && value.empty()) continue;
    auto bad = [&](const std::string& allowed) {
      return core::InputError(file, line, "recipe_settings",
                              fmt::format("'{}={}': bad value (allowed: {})", key, value, allowed));
    };
    // A count: the whole value is a number ("8x" is not 8).
    auto count = [&]() -> std::optional<double> {
      if (value.empty() || value.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
      return number(value);
    };
    if (key == "activation_offload_layers") {
      const auto v = count();
      if (!v || *v < 0.0 || *v > 1e6 || *v != std::floor(*v)) throw bad("a whole number of layers");
      l.offload_layers = static_cast<int>(*v);
    } else if (key == "recompute") {
      const auto r = parallelism::kRecomputeWords.parse(value);
      if (!r) throw bad(parallelism::kRecomputeWords.allowed());
      l.recompute = *r;
    } else if (key == "recompute_modules") {
      // Megatron-Core recompute_modules, comma-separated: selective recompute of those submodules.
      std::uint8_t bits = 0;
      std::stringstream names(value);
      std::string name;
      while (std::getline(names, name, ',')) {
        const auto m = parallelism::kRecomputeModuleWords.parse(std::string(core::trim_blanks(name)));
        if (!m) throw bad(parallelism::kRecomputeModuleWords.allowed());
        bits = static_cast<std::uint8_t>(bits | parallelism::module_bit(*m));
      }
      if (bits == 0) throw bad(parallelism::kRecomputeModuleWords.allowed());
      l.recompute = parallelism::Recompute::Selective;
      l.recompute_modules = bits;
    } else if (key == "document_tokens") {
      // SFT sequence packing: the mean tokens of the documents packed into each sequence.
      const auto v = count();
      if (!v || *v < 1.0 || *v > 1e9 || *v != std::floor(*v)) throw bad("a whole number of tokens, at least 1");
      document_tokens = static_cast<std::int64_t>(*v);
    } else if (key == "micro_batch_size" || key == "vp") {
      const auto v = count();
      if (!v || *v < 1.0 || *v > 1e6 || *v != std::floor(*v)) throw bad("a whole number of at least 1");
      (key == "vp" ? l.vp : l.micro_batch) = static_cast<int>(*v);
    } else if (key == "fp8_params") {
      const auto v = core::kYesNoWords.parse(value);
      if (!v) throw bad(core::kYesNoWords.allowed());
      l.fp8_param_storage = *v;
    } else if (key == "tp_overlap") {
      // TP collectives overlapped with the GEMMs: Megatron's tp_comm_overlap, torchtitan's async TP.
      const auto v = core::kYesNoWords.parse(value);
      if (!v) throw bad(core::kYesNoWords.allowed());
      l.overlap_tp_comm = *v && l.tp > 1;
    } else if (key == "grad_reduce_in_fp32") {
      // NeMo / Megatron-Bridge mixed-precision plugin: false reduces the gradients in 16 bits.
      const auto v = core::kYesNoWords.parse(value);
      if (!v) throw bad(core::kYesNoWords.allowed());
      l.bf16_grad_reduce = !*v;
    } else if (key == "cuda_graph_impl") {
      // Megatron-Core cuda_graph_impl: "full_iteration" graphs the whole step; "transformer_engine"
      // and "local" graph chosen layer parts, which the calibrated per-layer overheads include.
      if (value == "full_iteration") {
        l.recipe.full_iteration_graph = true;
      } else if (value == "transformer_engine" || value == "local" || value == "none") {
        l.recipe.full_iteration_graph = false;
      } else {
        throw bad("full_iteration, transformer_engine, local, none");
      }
    } else if (key == "compile_loss") {
      // The loss compiled with the model (`fmsim train --compile-loss`; torchtune's compiled chunked
      // cross-entropy, torchtitan's compiled loss): 16-bit logits and gradient.
      const auto v = core::kYesNoWords.parse(value);
      if (!v) throw bad(core::kYesNoWords.allowed());
      l.recipe.compiled_loss = *v;
    } else if (key == "moe_a2a_overlap" || key == "cutedsl_fused_grouped_mlp" || key == "fp8_dot_product_attention") {
      // Megatron-Bridge performance-recipe switches (scripts/performance/configs, WorkloadBaseConfig).
      const auto v = core::kYesNoWords.parse(value);
      if (!v) throw bad(core::kYesNoWords.allowed());
      (key == "moe_a2a_overlap"             ? l.recipe.overlap_ep_comm
       : key == "cutedsl_fused_grouped_mlp" ? l.recipe.fused_grouped_mlp
                                            : l.recipe.fp8_attention) = *v;
    } else if (key == "moe_token_dispatcher_type") {
      // Megatron-Core's dispatcher: "alltoall" sends a copy per selected expert (NCCL all-to-all),
      // "flex" (with the HybridEP or DeepEP backend) one per destination NVLink domain.
      if (value == "alltoall") {
        dispatcher = training::MoeDispatcher::AllToAll;
      } else if (value == "flex") {
        dispatcher = training::MoeDispatcher::Deduplicated;
      } else {
        throw bad("alltoall, flex");
      }
    } else if (key == "pp_partition_method") {
      // Megatron-DeepSpeed's --pp-partition-method (DeepSpeed PipelineModule partition_method):
      // unit weights on the transformer layers, and on the two tied embedding layers with
      // '|embedding' (Layout::greedy_split, embedding_slot, loss_slot).
      if (value != "type:transformer" && value != "type:transformer|embedding") {
        throw bad("type:transformer, type:transformer|embedding");
      }
      l.greedy_split = l.pp > 1;
      l.embedding_slot = l.loss_slot = l.pp > 1 && value == "type:transformer|embedding";
      l.first_stage_layers = l.last_stage_layers = 0;
      l.balanced_head_layers = 0.0;
    } else if (key == "loss_chunks") {
      // torchtitan's ChunkedLossWrapper num_chunks (RecipeSwitches::loss_chunks).
      const auto v = count();
      if (!v || *v < 1.0 || *v > 1048576.0 || *v != std::floor(*v)) throw bad("a whole number from 1 to 1048576");
      l.recipe.loss_chunks = static_cast<int>(*v);
    } else if (key == "optimizer_dtype") {
      const auto v = core::kOptimizerDtypeWords.parse(value);
      if (!v) throw bad(core::kOptimizerDtypeWords.allowed());
      l.bf16_optimizer_states = *v;
    } else {
      throw core::InputError(
          file, line, "recipe_settings",
          fmt::format("unknown key '{}' (allowed: activation_offload_layers, recompute, recompute_modules, "
                      "micro_batch_size, vp, tp_overlap, fp8_params, grad_reduce_in_fp32, optimizer_dtype, "
                      "document_tokens, cuda_graph_impl, moe_a2a_overlap, cutedsl_fused_grouped_mlp, "
                      "fp8_dot_product_attention, moe_token_dispatcher_type, pp_partition_method, compile_loss, "
                      "loss_chunks)",
                      key));
    }
  }
}

}  // namespace

std::vector<TrainingRow> training_rows(const std::vector<CsvRecord>& table, const std::string& path,
                                       const hardware::Catalog& catalog, const TrainingRowOptions& options) {
  const CsvTable csv(table, path, "empty file; expected a header row", options.aliases);
  std::vector<std::string> required{
      "row_id", "hardware", "num_gpus", "model", "num_layers", "hidden_size", "num_attention_heads", "seq_len"};
  if (options.require_step_time) required.push_back("global_batch_size");
  csv.require(required, "required column missing from the header");

  // Every preset, loaded once for all rows (in preset_model_names' order).
  const std::vector<std::string> preset_names = preset_model_names();
  std::vector<workload::ModelSpec> presets;
  for (const auto& name : preset_names) presets.push_back(load_model(name));
  auto preset_named = [&](const std::string& key) -> const workload::ModelSpec* {
    const auto it = std::find(preset_names.begin(), preset_names.end(), key);
    return it == preset_names.end() ? nullptr : &presets[static_cast<std::size_t>(it - preset_names.begin())];
  };
  std::vector<TrainingRow> out;
  for (std::size_t ri = 0; ri < csv.rows(); ++ri) {
    auto get = [&](const std::string& name) { return csv.cell(ri, name); };
    auto num = [&](const std::string& name) { return number(get(name)); };
    auto integer = [&](const std::string& name, int fallback) {
      const auto v = num(name);
      return v ? static_cast<int>(std::lround(*v)) : fallback;
    };
    TrainingRow row;
    row.line = csv.line(ri);
    row.row_id = get("row_id");
    row.source_id = get("source_id");
    row.hardware = get("hardware");
    row.model = get("model");
    row.arch_type = get("arch_type");
    row.precision = get("precision");
    row.framework = get("framework");
    row.task = get("task");
    row.num_gpus = integer("num_gpus", 0);

    auto gbs = num("global_batch_size");
    const auto seq = num("seq_len");
    if (const auto st = num("step_time_s")) {
      row.measured_step_time_s = *st;
    } else if (const auto tps = num("tokens_per_s_per_gpu"); tps && gbs && seq && row.num_gpus > 0) {
      row.measured_step_time_s = *gbs * *seq / (*tps * row.num_gpus);
    }
    auto reject = [&](std::string why) {
      row.reason = std::move(why);
      out.push_back(row);
    };
    // Counts and sizes become ints and int64s below: a cell past their range (or a micro-batch
    // below 1, which the batch arithmetic divides by) is the row's reason, never a cast.
    if (const auto bad = count_out_of_range(get)) {
      reject(*bad);
      continue;
    }
    // Narayanan et al. SC21 (arXiv 2104.04473, Section 5.1; the Megatron-LM README table of
    // 2021): with activation recomputation one iteration is F = 96 B s l h^2 (1 + s/(6h) +
    // V/(16 l h)) FLOPs, and the published TFLOP/s per GPU is F / (t x GPUs). Inverted for t.
    const bool sc21 = contains(get("source"), "SC21");
    if (!row.measured_step_time_s && sc21) {
      const auto tflops = num("tflops_per_gpu");
      const auto l = num("num_layers"), h = num("hidden_size"), v = num("vocab_size");
      if (tflops && gbs && seq && l && h && v && row.num_gpus > 0) {
        const double flops = 96.0 * *gbs * *seq * *l * *h * *h * (1.0 + *seq / (6.0 * *h) + *v / (16.0 * *l * *h));
        row.derived_step_time_s = flops / (*tflops * 1e12 * row.num_gpus);
        row.derived_from =
            fmt::format("{:g} TFLOP/s/GPU by the SC21 formula 96 B s l h^2 (1 + s/6h + V/16lh)", *tflops);
      }
    }
    // Megatron-Core's weak-scaling table (Megatron-LM README, images/model_table.png, r0.8.0) logs
    // TFLOP/s per GPU as Megatron-LM's training loop counts them, num_floating_point_operations
    // (megatron/training/training.py); NeMo's performance tables (NVIDIA/NeMo
    // docs/source/performance/*.md) as NeMo's FLOPsMeasurementCallback does, nemo/utils/flops_formulas.py
    // (llama2/llama3: B s l h^2 (12 + 12 q/a + 18 f/h + 12 s/h + 6 V/(l h)); gpt3, nemotron and
    // mixtral the same with their MLP). Both are F = 12 B s l h^2 (1 + q/a + g k f/h + s/h + V/(2 l h)):
    // f the FFN width (an expert's for MoE), k experts per token (1 dense), g 3/2 for gated MLPs and 1
    // otherwise, q/a the query groups per head, no recomputation counted. Inverted for t as above.
    const char* megatron_count =
        contains(get("source"), "model_table.png") ? "Megatron-LM's num_floating_point_operations"
        : contains(get("source"), "github.com/NVIDIA/NeMo ") && contains(get("source"), "performance")
            ? "NeMo's flops_formulas.py"
            : nullptr;
    if (!row.measured_step_time_s && !row.derived_step_time_s && megatron_count) {
      const auto tflops = num("tflops_per_gpu");
      const auto l = num("num_layers"), h = num("hidden_size"), v = num("vocab_size");
      const auto heads = num("num_attention_heads");
      const double groups = num("num_kv_heads").value_or(heads.value_or(1.0));
      const auto expert_ffn = num("moe_expert_ffn");
      const double k = expert_ffn ? num("moe_topk").value_or(1.0) : 1.0;
      const double f = expert_ffn ? *expert_ffn : num("ffn_hidden_size").value_or(h ? 4.0 * *h : 0.0);
      const double g = mlp_of(row.model) == workload::MlpKind::Gelu ? 1.0 : 1.5;
      if (tflops && gbs && seq && l && h && v && heads && *heads > 0 && f > 0 && row.num_gpus > 0) {
        const double flops = 12.0 * *gbs * *seq * *l * *h * *h *
                             (1.0 + groups / *heads + g * k * f / *h + *seq / *h + *v / (2.0 * *l * *h));
        row.derived_step_time_s = flops / (*tflops * 1e12 * row.num_gpus);
        row.derived_from = fmt::format("{:g} TFLOP/s/GPU by {} 12 B s l h^2 (1 + q/a + g k f/h + s/h + V/2lh)", *tflops,
                                       megatron_count);
      }
    }
    // The Llama 3 paper (arXiv 2407.21783, Section 3.3.2, Table 4) reports "BF16 Model FLOPs
    // Utilization (MFU; Chowdhery et al. (2023))": PaLM's model FLOPs (Chowdhery et al., Appendix B),
    // 6 N + 12 L H Q T per token (N parameters, L layers, H heads, Q head size, T sequence length;
    // no recomputation, no causal halving). N is the row's parameter count (Meta's 405B; PaLM leaves
    // the embeddings in or out, 1% here). F = B T (6 N + 12 L H Q T), inverted for t.
    const bool palm_mfu = contains(get("source"), "Llama 3 Herd of Models");
    if (!row.measured_step_time_s && !row.derived_step_time_s && palm_mfu) {
      const auto tflops = num("tflops_per_gpu");
      const auto l = num("num_layers"), h = num("hidden_size");
      // The cell's first word ("405B"; "30.5B total/3.3B active" for MoE rows).
      const std::string params = get("params_total");
      const auto n = core::parse_count(params.substr(0, params.find(' ')));
      if (tflops && gbs && seq && l && h && n.value && row.num_gpus > 0) {
        const double flops = *gbs * *seq * (6.0 * *n.value + 12.0 * *l * *h * *seq);
        row.derived_step_time_s = flops / (*tflops * 1e12 * row.num_gpus);
        row.derived_from =
            fmt::format("{:g} TFLOP/s/GPU by PaLM's model FLOPs 6N + 12LHQT per token (the paper's MFU)", *tflops);
      }
    }
    if (options.require_step_time && !row.measured_step_time_s && !row.derived_step_time_s) {
      reject(
          "no step time or tokens/s/GPU measured (only TFLOPS/MFU, and the source states no FLOP formula fmsim reads)");
      continue;
    }
    const auto hw = map_hardware(row.hardware);
    if (!hw) {
      reject("hardware '" + row.hardware + "' does not map to a catalog system");
      continue;
    }
    // Memory rows often give no global batch: one micro-batch per data-parallel rank.
    const auto mbs_cell = num("micro_batch_size");
    if (!gbs && !options.require_step_time && mbs_cell && seq && row.num_gpus > 0) {
      const double model_parallel = static_cast<double>(std::max(1, integer("tp", 1))) * std::max(1, integer("pp", 1)) *
                                    std::max(1, integer("cp", 1));
      gbs = *mbs_cell * std::max(1.0, std::floor(row.num_gpus / model_parallel));
    }
    if (row.num_gpus <= 0 || !gbs || !seq) {
      reject("num_gpus, global_batch_size or seq_len missing");
      continue;
    }

    training::TrainingJob job;
    // The preset the row's published model name maps to (config::preset_for_published_name:
    // "nvidia/Nemotron-H-8B-Base-8K" -> nemotron-h-8b), if any. A row that names its model and
    // prints no dimensions (the hybrid Mamba/attention tables give a name only) is that preset;
    // a row that prints some takes the missing architecture numbers from it. Without one, a
    // missing number is derived by a stated rule or the row is refused: never a default.
    const std::string named_preset = preset_for_published_name(row.model);
    const workload::ModelSpec* by_name = preset_named(named_preset);
    const bool no_dimensions = get("num_layers").empty() && get("hidden_size").empty() &&
                               get("num_attention_heads").empty() && get("ffn_hidden_size").empty();
    if (no_dimensions && by_name) {
      job.model = *by_name;
      job.model.name = row.model;
      row.layers_derived_from = "the preset " + named_preset + " (the row gives the model's name, no dimensions)";
    }
    if (job.model.num_layers == 0) {
      try {
        ModelDimensions dims;
        dims.name = row.model;
        dims.num_layers = integer("num_layers", 0);
        if (dims.num_layers <= 0 && get("num_layers").empty()) {
          const auto derived = layers_from_size(get, row.model);
          if (derived.layers <= 0) {
            reject(derived.how);
            continue;
          }
          dims.num_layers = derived.layers;
          row.layers_derived_from = derived.how;
        }
        dims.hidden = static_cast<std::int64_t>(num("hidden_size").value_or(0));
        dims.ffn_hidden = static_cast<std::int64_t>(num("ffn_hidden_size").value_or(0));
        dims.num_heads = integer("num_attention_heads", 0);
        dims.num_kv_heads = integer("num_kv_heads", 0);
        if (const auto v = num("vocab_size")) {
          dims.vocab = static_cast<std::int64_t>(*v);
        } else if (by_name) {
          dims.vocab = by_name->vocab;
        } else {
          reject("vocab_size missing, and the model name '" + row.model +
                 "' maps to no preset to take it from (fmsim models lists them)");
          continue;
        }
        dims.mlp = mlp_of(row.model);
        dims.num_experts = integer("moe_num_experts", 0);
        dims.top_k = integer("moe_topk", 0);
        dims.expert_ffn = static_cast<std::int64_t>(num("moe_expert_ffn").value_or(0));
        dims.shared_expert_ffn = static_cast<std::int64_t>(num("moe_shared_expert_ffn").value_or(0));
        if (dims.ffn_hidden == 0 && dims.num_experts == 0) {
          if (by_name && by_name->hidden == dims.hidden) {
            dims.ffn_hidden = by_name->ffn_hidden;
          } else if (dims.mlp == workload::MlpKind::Gelu) {
            // GPT's rule (Radford et al. 2018/2019, Brown et al. 2020 Table 2.1: d_ff = 4 d_model),
            // which Megatron-LM applies when --ffn-hidden-size is not given.
            dims.ffn_hidden = 4 * dims.hidden;
          } else {
            reject("ffn_hidden_size missing on a gated-MLP model, and the model name '" + row.model +
                   "' maps to no preset of the same hidden size to take it from");
            continue;
          }
        }
        job.model = model_from_dimensions(dims, fmt::format("{}:{}", path, row.line));
        // Architectural details the CSV does not carry (head_dim, MLA, sliding windows, first dense
        // layers) come from a preset of the same family when one matches the published dimensions.
        for (const auto& p : presets) {
          if (p.num_layers == job.model.num_layers && p.hidden == job.model.hidden &&
              p.num_heads == job.model.num_heads && p.num_kv_heads == job.model.num_kv_heads &&
              p.mlp == job.model.mlp && p.moe.num_experts == job.model.moe.num_experts &&
              p.moe.top_k == job.model.moe.top_k &&
              (job.model.moe.enabled() ? p.moe.expert_ffn == job.model.moe.expert_ffn
                                       : p.ffn_hidden == job.model.ffn_hidden)) {
            const auto keep_vocab = job.model.vocab;
            job.model = p;
            job.model.vocab = keep_vocab;
            job.model.name = row.model;
            break;
          }
        }
        if (core::to_lower(row.model).find("nemotron") != std::string::npos) {
          // Nemotron-3 and -4 untie the output layer from the embeddings (Nemotron-4 15B report,
          // arXiv:2402.16819, Sec. 2; NeMo's configs: share_embeddings_and_output_weights False),
          // whichever preset of the same shape lent its details (SC21's tied 18.4B GPT for the 22B).
          job.model.tied_embeddings = false;
        }
      } catch (const core::InputError& e) {
        // The model's field as the CSV's column names it.
        static const std::map<std::string, std::string> kColumns = {{"hidden", "hidden_size"},
                                                                    {"ffn_hidden", "ffn_hidden_size"},
                                                                    {"num_heads", "num_attention_heads"},
                                                                    {"vocab", "vocab_size"},
                                                                    {"num_experts", "moe_num_experts"},
                                                                    {"top_k", "moe_topk"},
                                                                    {"expert_ffn", "moe_expert_ffn"},
                                                                    {"shared_expert_ffn", "moe_shared_expert_ffn"}};
        const auto column = kColumns.find(e.field());
        const std::string field = column != kColumns.end() ? column->second : e.field();
        reject("model: " + (field.empty() ? std::string() : field + ": ") + e.message());
        continue;
      }
    }

    const hardware::SystemSpec* sys = catalog.find_system(hw->system);
    if (!sys) {
      reject("catalog has no system '" + hw->system + "'");
      continue;
    }
    row.system = hw->system;
    const int units = (row.num_gpus + sys->gpus() - 1) / sys->gpus();
    job.cluster = parse_cluster(catalog, fmt::format("{}:{}", hw->system, units));
    if (!hw->gpu.empty()) {
      if (const auto* g = catalog.find_gpu(hw->gpu)) job.cluster.gpu = *g;
    }
    // "H100 SXM 96GB HBM2e": a memory size other than the catalog GPU's (Grand Teton's 96 GB
    // H100) sets the capacity; the driver exposes N GiB of an N GB part, as for the catalog's.
    if (const auto gb = memory_size_gb(row.hardware)) {
      const double nominal = job.cluster.gpu.hbm_capacity.value() / 1e9;
      if (nominal > 0 && std::abs(*gb - nominal) > 0.04 * nominal) {
        job.cluster.gpu.hbm_capacity = core::Bytes(*gb * 1e9);
        job.cluster.gpu.hbm_usable = core::Bytes(*gb * 1024.0 * 1024.0 * 1024.0);
      }
    }
    // "500W power limit": a capped GPU sustains a lower clock (GpuSpec::power_clock_factor).
    {
      const std::string hwl = core::to_lower(row.hardware);
      const auto w = hwl.find("w power");
      if (w != std::string::npos) {
        auto b = w;
        while (b > 0 && std::isdigit(static_cast<unsigned char>(hwl[b - 1]))) --b;
        if (const auto watts = number(hwl.substr(b, w - b))) job.cluster.gpu.power_limit = core::watts(*watts);
      }
    }
    job.gpus = row.num_gpus;
    job.seq_len = static_cast<std::int64_t>(*seq);
    job.stack = stack_of(row.framework);
    const auto task_word = training::kTaskWords.parse(row.task);
    job.task = task_word                    ? *task_word
               : contains(row.task, "lora") ? training::Task::Lora
               : contains(row.task, "sft")  ? training::Task::Sft
                                            : training::Task::Pretrain;

    parallelism::Layout& l = job.layout;
    l.tp = integer("tp", 1);
    l.pp = integer("pp", 1);
    // "interleaved" without a count: torchtitan's multi-stage schedules (Interleaved1F1B) split
    // each rank into 2 stages when no split is given (torchtitan generate_split_points:
    // num_stages_per_rank = 2 for PipelineScheduleMulti).
    l.vp = std::max(1, integer("vp", contains(get("vp"), "interleaved") ? 2 : 1));
    if (integer("pp", 1) <= 1) l.vp = 1;  // a recipe's vp with pp 1: Megatron runs no interleaving
    l.cp = integer("cp", 1);
    l.ep = integer("ep", 1);
    l.etp = integer("etp", 1);
    // Megatron-Core spreads the experts only as far as its recipe's expert_model_parallel_size
    // says; a Megatron/NeMo table printing '-' or nothing for an MoE model does not mean ep 1 (every
    // rank would then hold, or gather, all the experts), and no per-model recipe default is kept
    // here: the row is refused, naming the column. (FSDP stacks, torchtitan and LLM Foundry, run
    // ep 1 unless told: their blank stays 1.)
    const bool megatron_recipe = contains(row.framework, "megatron") ||
                                 (contains(row.framework, "nemo") && !contains(row.framework, "automodel"));
    if (job.model.is_moe() && !num("ep") && megatron_recipe) {
      reject("ep: '" + get("ep") +
             "' for an MoE model run with Megatron-Core: expert parallelism is not derived; give the recipe's "
             "expert_model_parallel_size in the ep column");
      continue;
    }
    // A row does not say whether its recipe counted the embedding and the loss as pipeline slots;
    // they are assumed only where the layout cannot run without them (more chunks than layers).
    // Turned on wherever they even an uneven split (as `fmsim train` and the planner do), the
    // in-sample p90 moves 24.6% -> 26.2% (docs/validation.md).
    if (static_cast<std::int64_t>(l.pp) * l.vp > job.model.num_layers) {
      l = parallelism::with_recipe_pipeline_split(l, job.model.num_layers);
    }
    // nanotron splits its pipeline by compute, the LM head counted (Layout::balanced_head_layers).
    if (contains(row.framework, "nanotron") && l.pp > 1 && l.vp == 1) {
      l.balanced_head_layers = parallelism::compute_balanced_head_layers(job.model);
    }
    // Megatron-DeepSpeed splits with DeepSpeed's partition_method 'type:transformer' unless told
    // otherwise (GPTModelPipe; Layout::greedy_split); recipe_settings' pp_partition_method says.
    if (contains(row.framework, "megatron-deepspeed") && l.pp > 1 && l.vp == 1 && !l.embedding_slot) {
      l.greedy_split = true;
    }
    l.micro_batch = integer("micro_batch_size", 1);
    l.global_batch = static_cast<std::int64_t>(*gbs);
    l.precision = precision_of(row.precision);
    l.fp8_recipe = fp8_recipe_of(row.precision);
    const std::string shard = get("fsdp_or_zero");
    const std::string rc = core::to_lower(get("recompute"));
    // What the stack does when the row does not say (parallelism/stack.hpp).
    const parallelism::StackConventions stack = parallelism::stack_conventions(job.stack);
    l.sequence_parallel =
        l.tp > 1 && (get("sp").empty() ? stack.sequence_parallel : get("sp") != "0" && !contains(get("sp"), "false"));
    l.sharding = stack.default_sharding();
    if (stack.tp_comm_overlap) l.overlap_tp_comm = l.tp > 1;
    l.recompute = stack.published_recompute;
    // Published cells are mostly free text ("FSDP FULL_SHARD (MP mode PURE)", "DDP (FSDP=0)"),
    // read by keyword. Megatron recipes' "DDP" cell means Megatron DDP with the distributed
    // optimizer (ZeRO-1 style), as validation/README.md says; elsewhere it is plain DDP. Any other
    // cell that is one word of the --sharding vocabulary means what the flag means.
    if (contains(shard, "fsdp=0") || contains(shard, "zero-1") || contains(shard, "zero1"))
      l.sharding = parallelism::Sharding::DistributedOptimizer;
    else if (contains(shard, "shard_grad_op"))
      l.sharding = parallelism::Sharding::Zero2;
    else if (contains(shard, "fsdp"))
      l.sharding = parallelism::Sharding::Zero3;
    else if (contains(shard, "zero2") || contains(shard, "zero-2"))
      l.sharding = parallelism::Sharding::Zero2;
    else if (contains(shard, "zero3") || contains(shard, "zero-3"))
      l.sharding = parallelism::Sharding::Zero3;
    else if (core::to_lower(shard) == "ddp") {
      l.sharding = stack.fully_sharded || !stack.distributed_optimizer ? parallelism::Sharding::None
                                                                       : parallelism::Sharding::DistributedOptimizer;
    } else if (core::to_lower(shard).rfind("ddp", 0) == 0) {
      l.sharding = parallelism::Sharding::None;  // "ddp (ZeRO-0)", "ddp (no optimizer sharding)"
    } else if (const auto word = parallelism::kShardingWords.parse(shard)) {
      l.sharding = *word;
    }
    if (contains(shard, "pure")) l.bf16_grad_reduce = true;
    if (stack.fp16_grad_reduce_in_16_bits && l.precision == core::Precision::FP16) l.bf16_grad_reduce = true;
    // The SC21 runs all recompute activations (the paper's FLOP count includes the extra forward).
    if (sc21 && rc.empty()) l.recompute = parallelism::Recompute::Full;
    if (const auto word = parallelism::kRecomputeWords.parse(rc)) {
      l.recompute = *word;
    } else if (!rc.empty()) {
      if (contains(rc, "full"))
        l.recompute = parallelism::Recompute::Full;
      else if (contains(rc, "selective"))
        l.recompute = parallelism::Recompute::Selective;
      else if (contains(rc, "none") || contains(rc, "no"))
        l.recompute = parallelism::Recompute::None;
    }
    apply_training_recipe(get("recipe_settings"), l, job.document_tokens, job.moe_dispatcher, path, row.line);
    l = parallelism::with_dp(l, row.num_gpus);
    if (l.sharding == parallelism::Sharding::Zero3) {
      // "FSDP2 (8)" / "FSDP (64)": the shard group size; hybrid sharding when smaller than dp.
      const auto open = shard.find('(');
      if (open != std::string::npos) {
        if (const auto n = number(shard.substr(open + 1, shard.find(')') - open - 1)); n && std::fabs(*n) < 2e9) {
          const int g = static_cast<int>(*n);
          if (g > 0 && g < l.dp && l.dp % g == 0) l.shard_group = g;
        }
      }
    }
    if (get("micro_batch_size").empty() && stack.microbatches_equal_stages) {
      // The stack's own split of each rank's batch: torchtitan's Llama 3.1 405B on 512 H100 (local
      // batch 32, pp 8) runs 8 micro-batches of 4 under 1F1B and 16 of 2 interleaved.
      if (const int mbs = parallelism::micro_batch_per_stage(l); mbs > 0) l.micro_batch = mbs;
    }
    // Published micro-batch/accumulation cells are sometimes relative to other conventions; keep
    // the global batch and fall back to the largest micro-batch that divides it.
    if (l.dp > 0 && l.global_batch % (static_cast<std::int64_t>(l.micro_batch) * l.dp) != 0) {
      while (l.micro_batch > 1 && l.global_batch % (static_cast<std::int64_t>(l.micro_batch) * l.dp) != 0)
        --l.micro_batch;
    }
    row.layout_summary = fmt::format("tp{} pp{}{} cp{} ep{} dp{} mbs{} gbs{} {} {} {}", l.tp, l.pp,
                                     l.vp > 1 ? fmt::format(" vp{}", l.vp) : "", l.cp, l.ep, l.dp, l.micro_batch,
                                     l.global_batch, core::precision_label(l.precision, l.fp8_recipe),
                                     parallelism::to_string(l.recompute), parallelism::to_string(l.sharding));
    if (auto why = parallelism::why_invalid(job.model, l, row.num_gpus, job.seq_len)) {
      reject("layout: " + *why);
      continue;
    }
    // A source that names no recompute ran its stack's default (StackConventions::published_recompute),
    // said with the row's predictions.
    if (rc.empty() && !sc21 && !contains(get("recipe_settings"), "recompute")) {
      row.recompute_assumed = fmt::format("{} (the {} stack's default; the source names none)",
                                          parallelism::to_string(l.recompute), job.stack);
    }
    row.job = std::move(job);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace fmsim::config
