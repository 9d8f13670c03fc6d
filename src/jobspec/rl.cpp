// RL flag values into an rl::RlJob.
#include "jobspec/rl.hpp"

#include <fmt/format.h>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/rl_input.hpp"
#include "config/words.hpp"
#include "core/error.hpp"

namespace fmsim::jobspec {

rl::RlJob make_rl_job(const RlFlags& o, const hardware::Catalog& catalog) {
  rl::RlJob j;
  j.policy = config::load_model(o.policy, "--policy");
  if (!o.critic.empty()) j.critic = config::load_model(o.critic, "--critic");
  if (!o.reward_model.empty()) j.reward_model = config::load_model(o.reward_model, "--reward-model");
  j.cluster = config::parse_cluster(catalog, o.cluster);
  if (o.gpus > j.cluster.gpus()) {
    throw core::InputError::flag("--gpus",
                                 fmt::format("{} GPUs requested but the cluster has {}", o.gpus, j.cluster.gpus()));
  }
  j.gpus = o.gpus;
  j.algorithm = config::word_flag(rl::kAlgorithmWords, o.algorithm, "--algorithm");
  if (o.prompts < 1) throw core::InputError::flag("--prompts", "must be at least 1");
  if (o.samples < 1) throw core::InputError::flag("--samples", "must be at least 1");
  j.prompts = o.prompts;
  j.samples = o.samples;
  j.prompt_len = config::parse_tokens(o.prompt_len, "--prompt-len");
  const auto cap = config::parse_tokens(o.max_response, "--max-response");
  j.lengths = o.response_lengths.empty() ? config::parse_length_law(fmt::format("lognormal:mean={},sigma=0.8", cap / 4),
                                                                    cap, "--response-lengths")
                                         : config::parse_length_law(o.response_lengths, cap, "--response-lengths");
  j.placement = config::word_flag(rl::kPlacementWords, o.placement, "--placement");
  j.generator_gpus = o.generator_gpus;
  j.synchrony = config::word_flag(rl::kSynchronyWords, o.synchrony, "--sync");
  if (o.staleness < 1) throw core::InputError::flag("--staleness", "must be at least 1");
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
  if (o.mini_batches < 1) throw core::InputError::flag("--mini-batches", "must be at least 1");
  j.mini_batches = o.mini_batches;
  j.epochs = o.epochs;
  j.rollout_logprobs = o.rollout_logprobs;
  j.offload = config::word_flag(rl::kColocatedOffloadWords, o.offload, "--offload");
  j.trainer_offload = config::word_flag(rl::kTrainerOffloadWords, o.trainer_offload, "--trainer-offload");
  if (o.gen_memory != 0.0 && (o.gen_memory < 0.05 || o.gen_memory > 0.98)) {
    throw core::InputError::flag("--gen-memory", "must be in [0.05, 0.98] (vLLM gpu_memory_utilization), or 0");
  }
  j.generator_memory_utilization = o.gen_memory;
  if (o.fsdp_shard < 0) throw core::InputError::flag("--fsdp-shard", "must be a GPU count, or 0 for all DP ranks");
  l.shard_group = o.fsdp_shard;
  j.sync_method = config::word_flag(rl::kSyncMethodWords, o.sync_method, "--sync-method");
  if (o.steps < 1) throw core::InputError::flag("--steps", "must be at least 1");
  j.steps = o.steps;
  return j;
}

}  // namespace fmsim::jobspec
