// An RL post-training job from the flag values of `fmsim rl`: policy, cluster, algorithm, batch,
// response lengths, placement, synchrony, trainer layout and weight sync.
#pragma once

#include <string>

#include "hardware/catalog.hpp"
#include "rl/rl_step.hpp"

namespace fmsim::jobspec {

/// Raw flag values; the defaults are those of `fmsim rl`.
struct RlFlags {
  std::string policy = "qwen3-8b", critic, reward_model, cluster = "p5en.48xlarge:2";
  int gpus = 0;
  std::string algorithm = "grpo";
  long long prompts = 512;
  int samples = 8;
  std::string prompt_len = "512", max_response = "8k", response_lengths;
  std::string placement = "colocated";
  int generator_gpus = 0;
  std::string synchrony = "on-policy";
  int staleness = 1;
  bool refill = false;              ///< off-policy: the engine refills finished slots (in-flight weight updates)
  double staleness_fraction = 0.5;  ///< fully async: run-ahead as a fraction of a window (verl staleness_threshold)
  double oversample = 1.0;
  std::string reward = "rule";
  int gen_tp = 0;
  std::string gen_precision = "bf16";
  std::string engine = "vllm";  ///< serving engine profile of the rollouts
  int tp = 1, pp = 1, cp = 1, ep = 1;
  std::string sharding = "zero1", stack = "megatron", recompute = "full";
  long long mini_batches = 1;
  int epochs = 1;
  bool rollout_logprobs = false;
  std::string offload = "always";
  std::string trainer_offload = "none";
  double gen_memory = 0.0;  ///< vLLM gpu_memory_utilization; 0 = the placement's default
  int fsdp_shard = 0;       ///< FSDP hybrid shard group (GPUs); 0 = all data-parallel ranks
  std::string sync_method = "nccl-bucketed";
  long long steps = 1;
};

/// The job the flags describe; InputError naming the flag on a bad or out-of-range value.
rl::RlJob make_rl_job(const RlFlags& flags, const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
