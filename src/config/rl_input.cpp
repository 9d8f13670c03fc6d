#include "config/rl_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "config/cluster_loader.hpp"
#include "config/csv.hpp"
#include "config/model_loader.hpp"
#include "config/training_csv.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::config {
namespace {

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == 0) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

// A count or parallel degree the notes and layout texts spell in digits ("TP8", "trainer
// ranks=16"). More than 9 digits is no real degree and past int (std::stoi threw out_of_range, an
// internal error): 0, which the layout and placement checks refuse with the row's reason.
int small_count(const std::string& digits) { return digits.size() > 9 ? 0 : std::stoi(digits); }

std::optional<double> tokens_value(std::string s) {
  s = core::to_lower(s);
  double scale = 1.0;
  if (!s.empty() && s.back() == 'k') {
    scale = 1024.0;
    s.pop_back();
  }
  std::size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v) || v <= 0) return std::nullopt;
    return v * scale;
  } catch (...) {
    return std::nullopt;
  }
}

bool contains(const std::string& hay, const std::string& needle) {
  return core::to_lower(hay).find(core::to_lower(needle)) != std::string::npos;
}

/// Preset for a model named in the CSV, or "" when the catalog of presets has none.
std::string model_preset(const std::string& text) {
  const std::string t = core::to_lower(text);
  static const std::vector<std::pair<std::string, std::string>> kMap{{"qwen2.5-math-7b", "qwen2.5-math-7b"},
                                                                     {"qwen2.5-7b", "qwen2.5-math-7b"},
                                                                     {"qwen2-7b", "qwen2.5-math-7b"},
                                                                     {"qwen3-30b-a3b", "qwen3-30b-a3b"},
                                                                     {"qwen3-235b", "qwen3-235b-a22b"},
                                                                     {"qwen3-32b", "qwen3-32b"},
                                                                     {"qwen3-8b", "qwen3-8b"},
                                                                     {"qwen3-4b", "qwen3-4b"},
                                                                     {"qwen3-0.6b", "qwen3-0.6b"},
                                                                     {"llama-3.1-8b", "llama3.1-8b"},
                                                                     {"llama 3.1 405b", "llama3.1-405b"},
                                                                     {"deepseek-v3", "deepseek-v3"},
                                                                     {"kimi-k2", "kimi-k2"}};
  for (const auto& [needle, preset] : kMap) {
    if (t.find(needle) != std::string::npos) return preset;
  }
  // Otherwise the model as its publisher names it (a Hugging Face repo id, a table's spelling):
  // docs/models/workload.md, "Published names".
  return preset_for_published_name(text);
}

/// Reference system for a GPU named in the CSV, or "" when the row names none we hold.
std::string system_for(const std::string& hw) {
  // NeMo-RL's refit benchmarks run on "8-GPU nodes, UCX over 8 RDMA rails" without naming the
  // GPU; verl's checkpoint-engine benchmark names "4x8 H100". Both are read as DGX H100 nodes
  // (the JSON of validate rl marks the assumption).
  if (contains(hw, "gpu model not stated") && contains(hw, "8-gpu nodes")) return "dgx-h100";
  if (contains(hw, "h20") && !contains(hw, "h200")) return "hgx-h20";
  if (contains(hw, "h800")) return "hgx-h800";
  if (contains(hw, "a800")) return "hgx-a800";
  // The rest as the training table reads them (GB300, GB200, B300, B200, H200, H100, A100);
  // a GPU that is not its system's own (A100 40GB) the RL job cannot carry: none.
  const auto match = map_hardware(hw);
  return match && match->gpu.empty() ? match->system : std::string();
}

/// "[TP,CP,EP,PP,VPP]=[2,2,16,4,n/a]" or "TP2 CP2 EP8 PP1" or "FSDP2" into a layout.
parallelism::Layout parse_train_layout(const std::string& text, std::string& stack) {
  parallelism::Layout l;
  l.recompute = parallelism::Recompute::Full;
  stack = to_string(contains(text, "fsdp") ? parallelism::Stack::TorchTitan : parallelism::Stack::Megatron);
  if (parallelism::stack_conventions(stack).fully_sharded) l.sharding = parallelism::Sharding::Zero3;
  static const std::regex bracket(R"(\[([A-Z,]+)\]\s*=\s*\[([^\]]+)\])");
  std::smatch m;
  if (std::regex_search(text, m, bracket)) {
    std::vector<std::string> keys, vals;
    std::stringstream ks(m[1].str()), vs(m[2].str());
    for (std::string k; std::getline(ks, k, ',');) keys.push_back(k);
    for (std::string v; std::getline(vs, v, ',');) vals.push_back(v);
    for (std::size_t i = 0; i < keys.size() && i < vals.size(); ++i) {
      const auto v = number(vals[i]);
      if (!v || !(*v >= 1.0 && *v <= 1e9)) continue;  // a degree; the range keeps the cast defined
      const int n = static_cast<int>(*v);
      if (keys[i] == "TP") l.tp = n;
      if (keys[i] == "CP") l.cp = n;
      if (keys[i] == "EP") l.ep = n;
      if (keys[i] == "PP") l.pp = n;
    }
    return l;
  }
  static const std::regex token(R"((TP|CP|EP|PP)(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), token); it != std::sregex_iterator(); ++it) {
    const int n = small_count((*it)[2].str());
    const std::string k = (*it)[1].str();
    if (k == "TP") l.tp = n;
    if (k == "CP") l.cp = n;
    if (k == "EP") l.ep = n;
    if (k == "PP") l.pp = n;
  }
  return l;
}

/// Product of the "XYn" factors in "EP8xPP2" (keys in `which`).
int factor(const std::string& text, const std::string& key) {
  const std::regex re(key + R"((\d+))");
  std::smatch m;
  return std::regex_search(text, m, re) ? small_count(m[1].str()) : 1;
}

std::optional<double> metric(const std::string& metrics, const std::string& key) {
  const std::regex re(key + R"(=([0-9.]+))");
  std::smatch m;
  if (std::regex_search(metrics, m, re)) return number(m[1].str());
  return std::nullopt;
}

/// The settings a row's `recipe_settings` cell takes from the run's published recipe files
/// ("key=value; key=value"; validation/README.md lists the keys and their sources), applied to
/// its job. An unknown key or value is an InputError naming the file, line and column.
void apply_recipe_settings(const std::string& text, rl::RlJob& job, const std::string& file, int line) {
  static const std::regex item(R"(\s*([^=;]*?)\s*(=\s*([^;]*?))?\s*(;|$))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), item); it != std::sregex_iterator(); ++it) {
    const std::string key = (*it)[1].str(), value = (*it)[3].str();
    const std::string part = key + "=" + value;
    if (key.empty() && value.empty()) continue;
    auto bad = [&](const std::string& allowed) {
      return core::InputError(
          file, line, "recipe_settings",
          fmt::format("'{}': {} (allowed: {})", part, value.empty() ? "no value" : "bad value", allowed));
    };
    if (key == "gen_memory_utilization") {
      const auto v = number(value);
      if (!v || *v <= 0.0 || *v > 1.0) throw bad("a fraction in (0, 1]");
      job.generator_memory_utilization = *v;
    } else if (key == "recompute") {
      const auto r = parallelism::kRecomputeWords.parse(value);
      if (!r) throw bad(parallelism::kRecomputeWords.allowed());
      job.train_layout.recompute = *r;
    } else if (key == "trainer_offload") {
      const auto o = rl::kTrainerOffloadWords.parse(value);
      if (!o) throw bad(rl::kTrainerOffloadWords.allowed());
      job.trainer_offload = *o;
    } else if (key == "fsdp_shard") {
      const auto v = number(value);
      if (!v || !(*v >= 1.0 && *v <= 1e9)) throw bad("a positive GPU count (at most 10^9)");
      job.train_layout.shard_group = static_cast<int>(*v);
    } else if (key == "oversample") {
      const auto v = number(value);
      if (!v || *v < 1.0 || *v > 16.0) throw bad("responses generated per response kept, in [1, 16]");
      job.oversample = *v;
    } else if (key == "mini_batch_prompts") {
      const auto v = number(value);
      if (!v || *v < 1.0) throw bad("a positive prompt count");
      job.mini_batches = std::max<std::int64_t>(1, job.prompts / static_cast<std::int64_t>(*v));
    } else if (key == "turns") {
      const auto v = number(value);
      if (!v || *v < 1.0 || *v > 1000.0) throw bad("mean assistant turns per episode, in [1, 1000]");
      job.agent.turns = *v;
    } else if (key == "turn_cap") {
      const auto v = number(value);
      if (!v || *v < 1.0 || *v > 1000.0) throw bad("most assistant turns per episode, in [1, 1000]");
      job.agent.turn_cap = static_cast<int>(*v);
    } else if (key == "tool_time_s") {
      const auto v = number(value);
      if (!v || *v > 86400.0) throw bad("mean seconds per tool call, in (0, 86400]");
      job.agent.tool.mean = core::Seconds(*v);
    } else if (key == "observation_tokens") {
      const auto v = number(value);
      if (!v || *v > 1e6) throw bad("tokens per tool call, in (0, 10^6]");
      job.agent.observation_tokens = static_cast<std::int64_t>(std::llround(*v));
    } else if (key == "max_agents" || key == "tool_concurrency") {
      const auto v = number(value);
      if (!v || *v < 1.0 || *v > 1e8) throw bad("a positive count (at most 10^8)");
      (key == "max_agents" ? job.agent.max_agents : job.agent.tool_concurrency) = static_cast<std::int64_t>(*v);
    } else {
      throw core::InputError(
          file, line, "recipe_settings",
          fmt::format("unknown key '{}' (allowed: gen_memory_utilization, recompute, trainer_offload, fsdp_shard, "
                      "oversample, mini_batch_prompts, turns, turn_cap, tool_time_s, observation_tokens, max_agents, "
                      "tool_concurrency)",
                      key));
    }
  }
}

}  // namespace

std::int64_t parse_tokens(const std::string& text, const std::string& flag) {
  const auto v = tokens_value(text);
  if (!v) throw core::InputError::flag(flag, "'" + text + "' is not a token count; write 16384 or 16k (k = 1024)");
  // A sequence's tokens: far past any context window, and within the integer types downstream.
  constexpr double kMaxTokens = 10'000'000;
  if (*v < 1 || *v > kMaxTokens)
    throw core::InputError::flag(flag, fmt::format("'{}' is {:g} tokens; allowed: 1 to 10,000,000", text, *v));
  return static_cast<std::int64_t>(std::llround(*v));
}

rl::LengthDistribution parse_length_law(const std::string& text, std::int64_t cap, const std::string& flag) {
  rl::LengthDistribution d;
  d.cap = cap;
  const auto colon = text.find(':');
  const std::string law = core::to_lower(text.substr(0, colon));
  d.law = word_flag(rl::kLengthLawWords, law, flag);
  if (colon == std::string::npos) throw core::InputError::flag(flag, "give the mean, e.g. " + law + ":mean=4k");
  std::stringstream ss(text.substr(colon + 1));
  bool have_mean = false;
  for (std::string part; std::getline(ss, part, ',');) {
    const auto eq = part.find('=');
    const std::string key = eq == std::string::npos ? "mean" : part.substr(0, eq);
    const std::string value = eq == std::string::npos ? part : part.substr(eq + 1);
    if (key == "mean") {
      const auto v = tokens_value(value);
      if (!v) throw core::InputError::flag(flag, "mean '" + value + "' is not a token count (e.g. 6k or 6144)");
      d.mean = *v;
      have_mean = true;
    } else if (key == "sigma") {
      const auto v = number(value);
      if (!v || *v <= 0.0 || *v > 5.0) throw core::InputError::flag(flag, "sigma '" + value + "' must be in (0, 5]");
      d.sigma = *v;
    } else {
      throw core::InputError::flag(flag, "unknown key '" + key + "'; allowed: mean, sigma");
    }
  }
  if (!have_mean) throw core::InputError::flag(flag, "give the mean, e.g. " + law + ":mean=4k");
  if (d.mean >= static_cast<double>(cap)) {
    throw core::InputError::flag(flag, fmt::format("mean {} must be below the maximum response {}", d.mean, cap));
  }
  return d;
}

std::vector<RlRow> load_rl_rows(const std::string& csv_path, const hardware::Catalog& catalog,
                                const RlRowDefaults& defaults) {
  std::string path;  // what messages call the file: csv_path, or the built-in copy's name
  const std::string text = read_measurements(csv_path, "rl.csv", "--csv", path);
  const CsvTable table(parse_csv(text, path), path, "empty file; expected the header of validation/rl.csv");
  table.require({"row_id", "row_type", "hardware", "num_gpus", "policy_model", "step_time_s", "weight_sync_time_s",
                 "placement", "sync_mode", "prompts_per_step", "samples_per_prompt"},
                "missing column");
  std::vector<RlRow> rows;
  for (std::size_t ri = 0; ri < table.rows(); ++ri) {
    auto cell = [&](const char* name) { return table.cell(ri, name); };
    RlRow row;
    row.line = table.line(ri);
    row.id = cell("row_id");
    row.source = cell("source");
    const std::string type_text = cell("row_type");
    const auto type = kRlRowTypeWords.parse(type_text);
    if (!type) throw core::InputError(path, row.line, "row_type", kRlRowTypeWords.error(type_text));
    row.row_type = *type;
    row.framework = cell("framework");
    row.hardware = cell("hardware");
    row.model_text = cell("policy_model");
    row.placement_text = cell("placement");
    row.sync_text = cell("sync_mode");
    row.notes = cell("notes");
    // A measurement is empty (none) or a finite positive number: "nan", "inf", "0" or "12 s" was
    // read as a time (nan and inf printed as the error, 0 as an infinite one).
    auto measured = [&](const char* column) -> std::optional<double> {
      const std::string text = cell(column);
      if (text.empty()) return std::nullopt;
      double v = 0;
      std::size_t used = 0;
      try {
        v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || !std::isfinite(v) || v <= 0) {
        throw core::InputError(path, row.line, column,
                               fmt::format("'{}' is not a measurement; a positive number, or empty for none", text));
      }
      return v;
    };
    row.measured_step_s = measured("step_time_s");
    row.measured_gen_s = measured("generation_time_s");
    row.measured_train_s = measured("training_time_s");
    row.measured_sync_s = measured("weight_sync_time_s");
    row.measured_tokens_per_s_per_gpu = measured("throughput_tokens_per_s_per_gpu");
    const std::string system = system_for(row.hardware);
    const std::string preset = model_preset(row.model_text);
    const std::string metrics = cell("other_metrics");
    auto skip = [&](std::string why) {
      row.skip_reason = std::move(why);
      rows.push_back(row);
    };
    if (row.row_type != RlRowType::RlStep && row.row_type != RlRowType::WeightSync) {
      skip("row type " + std::string(kRlRowTypeWords.name(row.row_type)) +
           " is not predicted (no time of a step or a sync)");
      continue;
    }
    if (system.empty()) {
      skip("GPU not named or not in the catalog: '" + row.hardware + "'");
      continue;
    }
    if (preset.empty()) {
      skip("no preset for model '" + row.model_text + "'");
      continue;
    }
    const auto model = load_model(preset);
    const std::string layout_text = cell("train_layout");
    const auto rollout_tp = number(cell("rollout_tp"));
    const std::string precision = core::to_lower(cell("precision"));

    if (row.row_type == RlRowType::WeightSync) {
      rl::WeightSyncJob ws;
      ws.model = model;
      ws.generator_precision = contains(precision, "fp8") ? core::Precision::FP8 : core::Precision::BF16;
      // A natively FP8 checkpoint ("DeepSeek-V3.1 (FP8)", held by checkpoint-engine's parameter
      // server) is sent as FP8; a BF16 trainer's weights are quantised on receive.
      ws.trainer_precision =
          contains(core::to_lower(row.model_text), "(fp8)") ? core::Precision::FP8 : core::Precision::BF16;
      std::string stack;
      int trainer = 0, gens = 0;
      static const std::regex ranks(R"(trainer ranks=(\d+), rollout ranks=(\d+))");
      static const std::regex mapping(R"(mapping ([A-Za-z0-9x]+) -> ([A-Za-z0-9x]+))");
      static const std::regex pools(R"(\((\d+) GPUs, TP[^)]*\) \+ \d+ rollout nodes \((\d+) GPUs)");
      static const std::regex receivers(R"(fsdp world_size=(\d+), (\d+) rollout receivers)");
      std::smatch m;
      if (std::regex_search(row.notes, m, ranks)) {
        trainer = small_count(m[1].str());
        gens = small_count(m[2].str());
        ws.method = contains(row.notes, "checkpoint-engine=True") ? rl::SyncMethod::NcclBucketed
                                                                  : rl::SyncMethod::NcclPerTensor;
      } else if (std::regex_search(layout_text, m, mapping)) {
        const std::string left = m[1].str(), right = m[2].str();
        ws.train_layout.tp = factor(left, "TP");
        ws.train_layout.pp = factor(left, "PP");
        ws.train_layout.ep = factor(left, "EP");
        trainer = std::max(ws.train_layout.tp * ws.train_layout.pp * factor(left, "DP"),
                           ws.train_layout.ep * ws.train_layout.pp);
        ws.generator_tp = factor(right, "TP");
        gens = ws.generator_tp * factor(right, "DP");
        // NeMo-RL refit: each vLLM rank receives its own shard (XferDTensor bulk path).
        ws.method = rl::SyncMethod::P2pRdma;
      } else if (std::regex_search(row.placement_text, m, pools)) {
        // "separate: 32 policy nodes (256 GPUs, TP1/PP16/EP16) + 4 rollout nodes (32 GPUs, vLLM TP32)"
        trainer = small_count(m[1].str());
        gens = small_count(m[2].str());
        ws.train_layout.tp = factor(layout_text, "TP");
        ws.train_layout.pp = factor(layout_text, "PP");
        ws.train_layout.ep = factor(layout_text, "EP");
        ws.generator_tp = rollout_tp ? static_cast<int>(*rollout_tp) : 1;
        if (contains(row.notes, "NCCL full-weight")) {
          ws.method = rl::SyncMethod::NcclBucketed;
        } else {
          ws.method = rl::SyncMethod::P2pRdma;
          // Without expert sharding every rank receives the full tensors.
          if (contains(row.notes, "shard_expert_weights=false")) ws.generator_tp = 1;
        }
      } else if (std::regex_search(row.placement_text, m, receivers)) {
        // verl checkpoint_engine microbenchmark: FSDP trainer ranks broadcast to receivers, which
        // do not load into an engine.
        trainer = small_count(m[1].str());
        gens = small_count(m[2].str());
        ws.method = rl::SyncMethod::NcclBucketed;
        ws.engine_load = false;
      } else if (contains(row.placement_text, "ParameterServer")) {
        // checkpoint-engine: every inference GPU loads from its host and broadcasts within the group.
        const auto n = number(cell("num_gpus"));
        if (!n) {
          skip("GPU count not given");
          continue;
        }
        gens = static_cast<int>(*n);
        trainer = gens;
        ws.generator_tp = rollout_tp ? static_cast<int>(*rollout_tp) : 8;
        ws.method = rl::SyncMethod::NcclBucketed;
        ws.from_host = true;
      } else {
        skip("trainer and generator GPU counts not given");
        continue;
      }
      if (ws.generator_tp <= 1 && !rollout_tp) ws.generator_tp = 1;
      ws.trainer_gpus = trainer;
      ws.generator_gpus = gens;
      ws.cluster = cluster_for_gpus(catalog, system, trainer + gens);
      row.sync_job = ws;
      rows.push_back(row);
      continue;
    }

    // rl_step
    auto prompts = number(cell("prompts_per_step"));
    auto samples = number(cell("samples_per_prompt"));
    const auto gpus = number(cell("num_gpus"));
    // NeMo-RL rows that give only G-GBS (samples generated per step): the group size then only
    // decides which responses share a prompt's KV cache, so one prompt per response is assumed.
    if (!prompts && !samples) {
      if (const auto g = metric(metrics, "G_GBS")) {
        prompts = *g;
        samples = 1.0;
      }
    }
    if (!prompts || !samples || !gpus) {
      skip("prompts, samples per prompt or GPU count not given");
      continue;
    }
    rl::RlJob job;
    job.policy = model;
    job.cluster = cluster_for_gpus(catalog, system, static_cast<int>(*gpus));
    job.gpus = static_cast<int>(*gpus);
    job.prompts = static_cast<std::int64_t>(*prompts);
    job.samples = static_cast<int>(*samples);
    const std::string alg = core::to_lower(cell("algorithm"));
    // Free text ("ppo (rlhf)", "pass@1"): a cell that is not one word of the vocabulary is GRPO.
    job.algorithm = rl::kAlgorithmWords.parse(alg).value_or(rl::Algorithm::Grpo);
    const auto max_prompt = number(cell("max_prompt_len"));
    job.prompt_len = max_prompt ? std::min<std::int64_t>(defaults.prompt_len, static_cast<std::int64_t>(*max_prompt))
                                : defaults.prompt_len;
    auto cap = number(cell("max_response_len"));
    if (!cap) {
      if (const auto t = metric(metrics, "T_max_seq_len")) cap = *t - static_cast<double>(job.prompt_len);
    }
    const auto mean = number(cell("mean_response_len"));
    if (!cap && !mean) {
      skip("neither the maximum nor the mean response length is given");
      continue;
    }
    job.lengths.law = rl::LengthLaw::Lognormal;
    job.lengths.sigma = defaults.length_sigma;
    job.lengths.cap = static_cast<std::int64_t>(cap ? *cap : 4.0 * *mean);
    job.lengths.mean = mean ? std::min(*mean, 0.95 * static_cast<double>(job.lengths.cap))
                            : std::min(defaults.mean_response_tokens, 0.5 * static_cast<double>(job.lengths.cap));
    static const std::regex split(R"(separate:\s*(\d+)\s*(rollout|generation))");
    std::smatch m;
    if (std::regex_search(row.placement_text, m, split)) {
      job.placement = rl::Placement::Disaggregated;
      job.generator_gpus = small_count(m[1].str());
      if (job.generator_gpus < 1 || job.generator_gpus >= job.gpus) {
        skip("placement '" + row.placement_text + "' names no rollout GPU count between 1 and the row's " +
             std::to_string(job.gpus - 1));
        continue;
      }
    } else {
      job.placement = rl::Placement::Colocated;
    }
    const std::string sync = core::to_lower(row.sync_text);
    if (job.placement == rl::Placement::Colocated || sync.rfind("sync", 0) == 0) {
      job.synchrony = rl::Synchrony::OnPolicy;
    } else if (sync.find("1-step") != std::string::npos || sync.find("one-step") != std::string::npos) {
      job.synchrony = rl::Synchrony::OffPolicy;
    } else {
      job.synchrony = rl::Synchrony::FullyAsync;
    }
    if (job.placement == rl::Placement::Disaggregated && job.synchrony == rl::Synchrony::OnPolicy) {
      job.synchrony = rl::Synchrony::OffPolicy;
    }
    // What the sync cell states of the schedule: verl's staleness_threshold ("staleness 0.5",
    // "staleness_threshold=0.1"), NeMo-RL's in-flight weight updates (its async engine refills
    // finished slots with the next batch's prompts).
    static const std::regex staleness_re(R"(staleness(?:_threshold)?\s*[=:]?\s*([0-9.]+))");
    if (std::smatch sm; std::regex_search(sync, sm, staleness_re)) {
      if (const auto v = number(sm[1].str())) job.staleness_fraction = *v;
    }
    job.refill = sync.find("in_flight_weight_updates=true") != std::string::npos;
    job.train_layout = parse_train_layout(layout_text, job.stack);
    // "fp8 train / fp8 generation", "bf16 train / fp8 rollout": each side's precision as stated
    // (NeMo-RL's FP8 recipes: blockwise FP8 GEMMs in training, FP8 weights in vLLM).
    if (contains(precision, "fp8 gen") || contains(precision, "fp8 rollout"))
      job.generator_precision = core::Precision::FP8;
    if (contains(precision, "fp8 train")) {
      job.train_layout.precision = core::Precision::FP8;
      job.train_layout.fp8_recipe = core::Fp8Recipe::Block;
    }
    if (rollout_tp) job.generator_tp = static_cast<int>(*rollout_tp);
    // Optimizer steps per RL step: NeMo-RL trains G-GBS samples in T-GBS batches; verl's recipes
    // use ppo_mini_batch_size = 32 prompts.
    if (const auto g = metric(metrics, "G_GBS"); g && metric(metrics, "T_GBS")) {
      job.mini_batches = std::max<std::int64_t>(1, static_cast<std::int64_t>(*g / *metric(metrics, "T_GBS")));
    } else if (contains(row.framework, "verl")) {
      job.mini_batches = std::max<std::int64_t>(1, job.prompts / 32);
    }
    job.rollout_logprobs = job.synchrony == rl::Synchrony::FullyAsync && contains(row.framework, "verl");
    if (contains(row.framework, "verl") && job.algorithm == rl::Algorithm::Grpo) job.reference = true;
    apply_recipe_settings(cell("recipe_settings"), job, path, row.line);
    row.job = job;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace fmsim::config
