// An RL post-training job from the flag values of `fmsim rl`: policy, cluster, algorithm, batch,
// response lengths, placement, synchrony, trainer layout and weight sync.
#pragma once

#include <string>

#include "hardware/catalog.hpp"
#include "rl/rl_step.hpp"
#include "rl/rollout.hpp"
#include "rl/test_time.hpp"
#include "serving/calibration.hpp"
#include "training/calibration.hpp"

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
  int gen_ep = 1;         ///< generation expert parallelism within a replica (divides the generation TP)
  std::string reference;  ///< KL reference forward: yes, no; empty = the algorithm's default
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
  // Agentic episodes (rl/agentic.hpp)
  double turns = 1.0;                    ///< mean assistant turns per episode
  int turn_cap = 0;                      ///< most turns an episode takes (0: no cap)
  std::string tool_time;                 ///< per tool call: 2s | fixed:2s | lognormal:mean=2s,sigma=1
  std::string observation_tokens = "0";  ///< tokens a tool call appends to the context
  long long max_agents = 0;              ///< episodes in flight on the generator pool (0: no cap)
  long long tool_concurrency = 0;        ///< tool calls running at once on the pool (0: no cap)
  std::string trained_tokens = "trajectory";
};

/// The agentic part of the job (--turns, --turn-cap, --tool-time, --observation-tokens,
/// --max-agents, --tool-concurrency, --trained-tokens); InputError naming the flag.
rl::AgentSpec make_agent_spec(const RlFlags& flags);
/// "2s", "fixed:500ms", "lognormal:mean=2s,sigma=1": one tool call's latency. InputError naming `flag`.
rl::ToolLatency parse_tool_latency(const std::string& text, const std::string& flag);

/// The job the flags describe; InputError naming the flag on a bad or out-of-range value.
rl::RlJob make_rl_job(const RlFlags& flags, const hardware::Catalog& catalog);

/// The RL calibration: the experts' load CV is the serving calibration's (one measurement for
/// serving and RL training).
rl::RlCalibration rl_calibration(const serving::ServingCalibration& serving);

/// What an RL job is predicted with (data/calibration/): the training stacks, the RL calibration
/// and the rollout engine.
struct RlModels {
  training::Calibration training;
  rl::RlCalibration rl;
  rl::ServingRolloutEngine engine;
};
/// Loads them for `job`; InputError naming --stack when the job's stack is not a calibrated one and
/// --engine when the rollout engine has no profile.
RlModels load_rl_models(const rl::RlJob& job, const std::string& engine);

/// `fmsim rl --test-time METHOD`: a test-time-compute method on the job's GPUs (n = --samples,
/// queries at once = --prompts, generator TP = --gen-tp or the smallest that holds the policy);
/// InputError naming the flag on a bad method, --search-steps or a TP that does not divide the GPUs.
rl::TtcJob make_ttc_job(const rl::RlJob& job, const std::string& method, int search_steps,
                        const rl::RlCalibration& cal);
/// Its cost per query; a serving pool holds nothing but the generator (the disaggregated memory
/// fraction). InputError naming --gen-tp when it does not fit.
rl::TtcResult estimate_ttc(const rl::TtcJob& ttc, const RlModels& models);

/// The flag of `fmsim rl` that changes what made a step infeasible, from the step's reason.
std::string infeasible_flag(const std::string& reason);

}  // namespace fmsim::jobspec
