// Plan flag values into a planner::PlanRequest.
#include "jobspec/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "jobspec/training.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::jobspec {
namespace {

int parse_positive(const std::string& flag, const std::string& text) {
  int v = 0;
  std::size_t used = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 1) {
    throw core::InputError::flag(flag, fmt::format("'{}' is not a whole number of at least 1", text));
  }
  return v;
}

std::vector<int> parse_int_list(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (const auto& item : split_comma_list(text)) out.push_back(parse_positive(flag, item));
  if (out.empty()) throw core::InputError::flag(flag, "expected one or more whole numbers, e.g. 8 or 4,8");
  return out;
}

/// "A:B" -> A, 2A, 4A, ... up to B, and B itself.
std::vector<int> parse_gpus_range(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw core::InputError::flag("--gpus-range", fmt::format("'{}': expected MIN:MAX, e.g. 256:1024", text));
  }
  const int lo = parse_positive("--gpus-range", text.substr(0, colon));
  const int hi = parse_positive("--gpus-range", text.substr(colon + 1));
  if (hi < lo) throw core::InputError::flag("--gpus-range", fmt::format("'{}': MAX is below MIN", text));
  std::vector<int> out;
  for (long g = lo; g <= hi; g *= 2) out.push_back(static_cast<int>(g));
  if (out.back() != hi) out.push_back(hi);
  return out;
}

/// Pinned values that can never divide the model give a clear error instead of an empty plan.
void check_pins(const planner::SearchSpace& space, const workload::ModelSpec& m, std::int64_t seq, std::int64_t gbs) {
  for (int tp : space.tp) {
    if (m.num_heads % tp != 0 || (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0)) {
      throw core::InputError::flag("--tp", fmt::format("{} does not divide {}'s {} attention heads ({} KV heads)", tp,
                                                       m.name, m.num_heads, m.num_kv_heads));
    }
  }
  for (int pp : space.pp) {
    if (pp > m.num_layers) {
      throw core::InputError::flag("--pp", fmt::format("{} is more than {}'s {} layers", pp, m.name, m.num_layers));
    }
    if (pp > space.max_pp)
      throw core::InputError::flag("--pp", fmt::format("{} is above --max-pp {}", pp, space.max_pp));
  }
  for (int vp : space.vp) {
    if (vp > m.num_layers) {
      throw core::InputError::flag("--vp", fmt::format("{} is more than {}'s {} layers", vp, m.name, m.num_layers));
    }
  }
  for (int cp : space.cp) {
    if (seq % cp != 0)
      throw core::InputError::flag("--cp", fmt::format("{} does not divide sequence length {}", cp, seq));
  }
  for (int ep : space.ep) {
    if (!m.is_moe() && ep > 1) {
      throw core::InputError::flag(
          "--ep", fmt::format("{} is a dense model; expert parallelism needs a mixture of experts", m.name));
    }
    if (m.is_moe() && m.moe.num_experts % ep != 0) {
      throw core::InputError::flag("--ep",
                                   fmt::format("{} does not divide {}'s {} experts", ep, m.name, m.moe.num_experts));
    }
  }
  for (int mbs : space.micro_batch) {
    if (gbs % mbs != 0)
      throw core::InputError::flag("--mbs", fmt::format("{} does not divide the global batch {}", mbs, gbs));
  }
}

}  // namespace

std::vector<std::string> split_comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',') {
      const auto b = cur.find_first_not_of(" \t");
      const auto e = cur.find_last_not_of(" \t");
      if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

planner::PlanRequest make_plan_request(const PlanFlags& o, const hardware::Catalog& catalog,
                                       const training::Calibration& calibration) {
  if (o.gpus < 1) throw core::InputError::flag("--gpus", fmt::format("{}: expected at least 1 GPU", o.gpus));
  if (o.seq < 1) throw core::InputError::flag("--seq", fmt::format("{}: expected at least 1 token", o.seq));
  if (o.gbs < 1) throw core::InputError::flag("--gbs", fmt::format("{}: expected at least 1 sequence", o.gbs));
  if (o.top < 1) throw core::InputError::flag("--top", fmt::format("{}: expected at least 1", o.top));
  if (o.max_pp < 1) throw core::InputError::flag("--max-pp", fmt::format("{}: expected at least 1", o.max_pp));
  if (o.threads < 0) throw core::InputError::flag("--threads", "expected 0 (all cores) or more");

  planner::PlanRequest r;
  r.model = config::load_model(o.model, "--model");
  const auto tokens = core::parse_count(o.tokens);
  if (!tokens || *tokens.value <= 0) {
    throw core::InputError::flag("--tokens",
                                 fmt::format("'{}': expected a token count such as 15T, 300B or 1.5e12{}", o.tokens,
                                             tokens.error.empty() ? "" : " (" + tokens.error + ")"));
  }
  r.tokens = *tokens.value;
  r.seq_len = o.seq;
  r.document_tokens = document_tokens_flag(o.document_tokens);
  r.global_batch = o.gbs;
  r.objective = config::word_flag(planner::kObjectiveWords, o.objective, "--objective");
  const LoraFlags lora = lora_flags(o.task, o.lora_rank, o.lora_targets, o.lora_base);
  r.task = lora.task;
  r.lora_rank = lora.rank;
  r.lora_targets = lora.targets;
  r.lora_base = lora.base;
  if (calibration.stacks.count(o.stack) == 0) {
    std::vector<std::string> names;
    for (const auto& [name, _] : calibration.stacks) names.push_back(name);
    throw core::InputError::flag("--stack", core::unknown_name_message("software stack", o.stack, names));
  }
  r.stack = o.stack;
  r.moe_dispatcher = moe_dispatcher_flag(o.moe_dispatcher);
  // The stack's conventions shape every candidate, as they shape `fmsim train`'s job where no flag
  // says (jobspec::resolve_training_job): megatron-legacy (Megatron-LM of 2021-2022) has no
  // sequence parallelism, no distributed optimizer (plain DDP unless --sharding pins others) and
  // reduces FP16 gradients in 16 bits.
  const parallelism::StackConventions conventions = parallelism::stack_conventions(o.stack);
  r.framework.overlap_tp_comm = conventions.tp_comm_overlap;
  r.framework.sequence_parallel = conventions.sequence_parallel;
  r.framework.fp16_grad_reduce_in_16_bits = conventions.fp16_grad_reduce_in_16_bits;
  r.framework.fp8_recipe = fp8_recipe_flag(o.fp8_recipe);
  r.framework.bf16_grad_reduce = o.grad_reduce_in_bf16;
  r.framework.recipe = o.recipe;
  r.top = o.top;
  r.threads = o.threads;

  r.space.tp = parse_int_list("--tp", o.tp);
  r.space.pp = parse_int_list("--pp", o.pp);
  r.space.vp = parse_int_list("--vp", o.vp);
  r.space.cp = parse_int_list("--cp", o.cp);
  r.space.ep = parse_int_list("--ep", o.ep);
  r.space.micro_batch = parse_int_list("--mbs", o.mbs);
  r.space.max_pp = o.max_pp;
  r.space.max_tp = o.max_tp;
  for (int tp : r.space.tp) r.space.max_tp = std::max(r.space.max_tp, tp);  // a pinned tp is always tried
  r.space.precision = config::word_list_flag(core::kTrainingPrecisionWords, o.precision, "--precision");
  r.space.recompute = config::word_list_flag(parallelism::kRecomputeWords, o.recompute, "--recompute");
  r.space.sharding = config::word_list_flag(parallelism::kShardingWords, o.sharding, "--sharding");
  if (r.space.sharding.empty() && conventions.default_sharding() == parallelism::Sharding::None) {
    r.space.sharding = {parallelism::Sharding::None};
  }
  check_pins(r.space, r.model, r.seq_len, r.global_batch);

  if (!o.gpus_range.empty()) {
    r.gpu_counts = parse_gpus_range(o.gpus_range);
  } else {
    r.gpu_counts = {o.gpus};
  }
  const int max_gpus = *std::max_element(r.gpu_counts.begin(), r.gpu_counts.end());
  std::set<std::string> seen;
  const auto names = split_comma_list(o.systems);
  if (names.empty()) throw core::InputError::flag("--systems", "expected one or more systems, e.g. p5.48xlarge");
  for (const auto& name : names) {
    auto cluster = config::cluster_for_gpus(catalog, name, max_gpus, "--systems");
    if (!seen.insert(cluster.system.name).second) {
      throw core::InputError::flag("--systems", fmt::format("{} is listed twice", cluster.system.name));
    }
    if (calibration.gpus.count(cluster.gpu.architecture) == 0) {
      throw core::InputError::flag("--systems", fmt::format("{}: no training calibration for its GPU ({})",
                                                            cluster.system.name, cluster.gpu.name));
    }
    r.systems.push_back(std::move(cluster));
  }
  return r;
}

}  // namespace fmsim::jobspec
