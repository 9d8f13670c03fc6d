// RL flag values into an rl::RlJob.
#include "jobspec/rl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "config/cluster_loader.hpp"
#include "config/flag_values.hpp"
#include "config/model_loader.hpp"
#include "config/rl_input.hpp"
#include "config/serving_calibration.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "jobspec/serving.hpp"
#include "jobspec/training.hpp"

namespace fmsim::jobspec {

rl::ToolLatency parse_tool_latency(const std::string& text, const std::string& flag) {
  rl::ToolLatency t;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    t.mean = config::parse_duration_flag(text, flag);
  } else {
    const std::string law = core::to_lower(text.substr(0, colon));
    if (law != "fixed" && law != "lognormal")
      throw core::InputError::flag(flag, "'" + law + "' is not a latency law; allowed: fixed, lognormal");
    bool have_mean = false;
    std::stringstream ss(text.substr(colon + 1));
    for (std::string part; std::getline(ss, part, ',');) {
      const auto eq = part.find('=');
      const std::string key = eq == std::string::npos ? "mean" : part.substr(0, eq);
      const std::string value = eq == std::string::npos ? part : part.substr(eq + 1);
      if (key == "mean") {
        t.mean = config::parse_duration_flag(value, flag);
        have_mean = true;
      } else if (key == "sigma" && law == "lognormal") {
        double v = 0.0;
        try {
          v = std::stod(value);
        } catch (const std::exception&) {
          v = -1.0;
        }
        if (!(v > 0.0 && v <= 5.0)) throw core::InputError::flag(flag, "sigma '" + value + "' must be in (0, 5]");
        t.sigma = v;
      } else {
        throw core::InputError::flag(
            flag, "unknown key '" + key + "'; allowed: mean" + std::string(law == "lognormal" ? ", sigma" : ""));
      }
    }
    if (!have_mean) throw core::InputError::flag(flag, "give the mean, e.g. " + law + ":mean=2s");
  }
  if (!(t.mean.value() >= 0.0 && t.mean.value() <= 86400.0))
    throw core::InputError::flag(flag, "the mean must be between 0 and 1 day");
  return t;
}

rl::AgentSpec make_agent_spec(const RlFlags& o) {
  rl::AgentSpec a;
  config::checked_real(o.turns, 1.0, 1000.0, "--turns", "assistant turns per episode");
  a.turns = o.turns;
  config::checked_whole(o.turn_cap, 0, 1000, "--turn-cap", "turns (0: no cap)");
  a.turn_cap = o.turn_cap;
  if (a.turn_cap > 0 && a.turns > a.turn_cap)
    throw core::InputError::flag("--turns", fmt::format("mean {} exceeds --turn-cap {}", a.turns, a.turn_cap));
  if (!o.tool_time.empty()) a.tool = parse_tool_latency(o.tool_time, "--tool-time");
  a.observation_tokens =
      o.observation_tokens == "0" ? 0 : config::parse_tokens(o.observation_tokens, "--observation-tokens");
  config::checked_whole(o.max_agents, 0, 100'000'000, "--max-agents", "episodes (0: no cap)");
  a.max_agents = o.max_agents;
  config::checked_whole(o.tool_concurrency, 0, 100'000'000, "--tool-concurrency", "tool calls (0: no cap)");
  a.tool_concurrency = o.tool_concurrency;
  a.trained = config::word_flag(rl::kTrainedTokensWords, o.trained_tokens, "--trained-tokens");
  return a;
}

rl::RlJob make_rl_job(const RlFlags& o, const hardware::Catalog& catalog) {
  rl::RlJob j;
  j.policy = config::load_model(o.policy, "--model");
  if (!o.critic.empty()) j.critic = config::load_model(o.critic, "--critic");
  if (!o.reward_model.empty()) j.reward_model = config::load_model(o.reward_model, "--reward-model");
  j.cluster = config::parse_cluster(catalog, o.cluster);
  if (o.gpus > j.cluster.gpus()) {
    throw core::InputError::flag("--gpus",
                                 fmt::format("{} GPUs requested but the cluster has {}", o.gpus, j.cluster.gpus()));
  }
  j.gpus = o.gpus;
  j.algorithm = config::word_flag(rl::kAlgorithmWords, o.algorithm, "--algorithm");
  // Every response of a step is drawn and simulated (about 7 s a million): bounded before anything
  // is allocated.
  constexpr long long kMaxSequences = 1'000'000;
  config::checked_whole(o.prompts, 1, kMaxSequences, "--prompts", "prompts per step");
  config::checked_whole(o.samples, 1, 4096, "--samples", "responses per prompt");
  if (o.prompts * o.samples > kMaxSequences)
    throw core::InputError::flag(
        "--samples", fmt::format("{} prompts x {} samples is {} responses; at most {} are "
                                 "simulated",
                                 o.prompts, o.samples, o.prompts * o.samples, core::format_thousands(kMaxSequences)));
  for (auto [flag, v] : {std::pair{"--gpus", o.gpus}, std::pair{"--generator-gpus", o.generator_gpus},
                         std::pair{"--gen-tp", o.gen_tp}, std::pair{"--fsdp-shard", o.fsdp_shard}})
    config::checked_whole(v, 0, 1 << 24, flag, "GPUs (0: the default)");
  for (auto [flag, v] :
       {std::pair{"--tp", o.tp}, std::pair{"--pp", o.pp}, std::pair{"--cp", o.cp}, std::pair{"--ep", o.ep}})
    config::checked_whole(v, 1, 4096, flag);
  config::checked_whole(o.epochs, 1, 1000, "--epochs");
  config::checked_whole(o.steps, 1, 1'000'000'000, "--steps");
  j.prompts = o.prompts;
  j.samples = o.samples;
  j.prompt_len = config::parse_tokens(o.prompt_len, "--prompt-len");
  const auto cap = config::parse_tokens(o.max_response, "--max-response");
  // The rollout is simulated token by token (8.4 million engine events, 7 s and 0.9 GB at the bound;
  // `--plan` simulates it for every candidate placement).
  constexpr double kMaxStepTokens = 4294967296.0;  // 2^32
  if (const double tokens = static_cast<double>(o.prompts) * o.samples * static_cast<double>(cap);
      tokens > kMaxStepTokens)
    throw core::InputError::flag("--max-response",
                                 fmt::format("{} prompts x {} samples x {} tokens is {:.3g} response tokens a step; at "
                                             "most 2^32 (4.29e9) are simulated",
                                             o.prompts, o.samples, cap, tokens));
  j.lengths = o.response_lengths.empty() ? config::parse_length_law(fmt::format("lognormal:mean={},sigma=0.8", cap / 4),
                                                                    cap, "--response-lengths")
                                         : config::parse_length_law(o.response_lengths, cap, "--response-lengths");
  j.placement = config::word_flag(rl::kPlacementWords, o.placement, "--placement");
  j.generator_gpus = o.generator_gpus;
  j.synchrony = config::word_flag(rl::kSynchronyWords, o.synchrony, "--sync");
  config::checked_whole(o.staleness, 1, 1000, "--staleness", "steps");
  j.staleness = o.staleness;
  if (o.refill && j.synchrony != rl::Synchrony::OffPolicy) {
    throw core::InputError::flag("--refill", "applies to --sync off-policy (fully-async streams already)");
  }
  j.refill = o.refill;
  if (!(o.staleness_fraction >= 0.0 && o.staleness_fraction <= 16.0))
    throw core::InputError::flag("--staleness-fraction", "must be in [0, 16] (a fraction of one window's samples)");
  j.staleness_fraction = o.staleness_fraction;
  if (o.oversample < 1.0 || o.oversample > 16.0) throw core::InputError::flag("--oversample", "must be in [1, 16]");
  j.oversample = o.oversample;
  j.reward = config::word_flag(rl::kRewardKindWords, o.reward, "--reward");
  j.generator_tp = o.gen_tp;
  config::checked_whole(o.gen_ep, 1, 4096, "--gen-ep");
  j.generator_ep = o.gen_ep;
  if (o.gen_ep > 1 && !j.policy.is_moe())
    throw core::InputError::flag(
        "--gen-ep", "expert parallelism needs a mixture-of-experts policy; " + j.policy.name + " is dense");
  if (o.gen_ep > 1 && j.policy.moe.num_experts % o.gen_ep != 0)
    throw core::InputError::flag(
        "--gen-ep", fmt::format("{} must divide the policy's {} experts", o.gen_ep, j.policy.moe.num_experts));
  if (o.gen_ep > 1 && o.gen_tp > 0 && o.gen_tp % o.gen_ep != 0)
    throw core::InputError::flag(
        "--gen-ep",
        fmt::format("{} must divide --gen-tp {} (the experts spread over one replica's GPUs)", o.gen_ep, o.gen_tp));
  if (!o.reference.empty()) j.reference = config::word_flag(core::kYesNoWords, o.reference, "--reference");
  j.generator_precision = config::word_flag(core::kTrainingPrecisionWords, o.gen_precision, "--gen-precision");
  if (j.generator_precision != core::Precision::BF16 && j.generator_precision != core::Precision::FP8) {
    throw core::InputError::flag(
        "--gen-precision",
        fmt::format("{} rollout weights are not modelled; allowed: bf16, fp8", core::to_string(j.generator_precision)));
  }
  auto& l = j.train_layout;
  l.tp = o.tp;
  l.pp = o.pp;
  l.cp = o.cp;
  l.ep = o.ep;
  l.sequence_parallel = o.tp > 1;
  l.sharding = config::word_flag(parallelism::kShardingWords, o.sharding, "--sharding");
  l.recompute = config::word_flag(parallelism::kRecomputeWords, o.recompute, "--recompute");
  j.stack = o.stack;
  config::checked_whole(o.mini_batches, 1, o.prompts * o.samples, "--mini-batches", "(at most one per response)");
  j.mini_batches = o.mini_batches;
  j.epochs = o.epochs;
  j.rollout_logprobs = o.rollout_logprobs;
  j.offload = config::word_flag(rl::kColocatedOffloadWords, o.offload, "--offload");
  j.trainer_offload = config::word_flag(rl::kTrainerOffloadWords, o.trainer_offload, "--trainer-offload");
  if (o.gen_memory != 0.0 && (o.gen_memory < 0.05 || o.gen_memory > 0.98)) {
    throw core::InputError::flag("--gen-memory", "must be in [0.05, 0.98] (vLLM gpu_memory_utilization), or 0");
  }
  j.generator_memory_utilization = o.gen_memory;
  j.agent = make_agent_spec(o);
  if (o.fsdp_shard < 0) throw core::InputError::flag("--fsdp-shard", "must be a GPU count, or 0 for all DP ranks");
  l.shard_group = o.fsdp_shard;
  j.sync_method = config::word_flag(rl::kSyncMethodWords, o.sync_method, "--sync-method");
  if (o.steps < 1) throw core::InputError::flag("--steps", "must be at least 1");
  j.steps = o.steps;
  return j;
}

rl::RlCalibration rl_calibration(const serving::ServingCalibration& serving) {
  rl::RlCalibration cal;
  cal.expert_load_cv = serving.moe.expert_load_cv;
  return cal;
}

RlModels load_rl_models(const rl::RlJob& job, const std::string& engine) {
  auto training = load_stack_calibration("", job.stack);
  const auto serving = config::load_serving_calibration();
  return {std::move(training), rl_calibration(serving),
          rl::ServingRolloutEngine(serving, engine_flag(serving, engine).name)};
}

rl::TtcJob make_ttc_job(const rl::RlJob& job, const std::string& method, int search_steps,
                        const rl::RlCalibration& cal) {
  rl::TtcJob t;
  t.method = config::word_flag(rl::kTtcMethodWords, method, "--test-time");
  if (search_steps < 1) throw core::InputError::flag("--search-steps", "must be at least 1");
  const int gpus = job.job_gpus();
  const int tp = job.generator_tp > 0
                     ? job.generator_tp
                     : std::min(gpus, rl::auto_generator_tp(job.policy, job.cluster, job.generator_precision, cal));
  if (gpus % tp != 0) throw core::InputError::flag("--gen-tp", fmt::format("{} does not divide the {} GPUs", tp, gpus));
  t.generator = rl::GeneratorConfig{job.policy, job.cluster, tp, job.generator_ep, gpus / tp, job.generator_precision};
  t.n = job.samples;
  t.search_steps = search_steps;
  t.prompt_len = job.prompt_len;
  t.lengths = job.lengths;
  t.queries = job.prompts;
  t.price_per_gpu_hour = job.cluster.price_per_hour_usd() / std::max(1, job.cluster.gpus());
  return t;
}

rl::TtcResult estimate_ttc(const rl::TtcJob& ttc, const RlModels& models) {
  rl::RlCalibration serve_cal = models.rl;
  serve_cal.gpu_memory_utilization = models.rl.gpu_memory_utilization_disaggregated;
  auto r = rl::estimate_test_time(ttc, serve_cal, models.engine);
  if (!r.feasible) throw core::InputError::flag("--gen-tp", r.reason);
  return r;
}

std::string infeasible_flag(const std::string& reason) {
  if (reason.find("ep ") != std::string::npos && reason.find("must divide tp") != std::string::npos) return "--gen-ep";
  if (reason.rfind("rollout", 0) == 0 || reason.rfind("generation TP", 0) == 0) return "--gen-tp";
  if (reason.rfind("the generator pool", 0) == 0) return "--generator-gpus";
  if (reason.rfind("off-policy", 0) == 0) return "--placement";
  return "--tp";
}

}  // namespace fmsim::jobspec
