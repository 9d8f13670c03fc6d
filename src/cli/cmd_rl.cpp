// fmsim rl: one step of RL post-training (rollout, reward, log-prob forwards, update, weight sync),
// its phases, utilisation, memory, throughput and cost; --plan searches placement and layouts. The
// runs are jobspec/rl_run.hpp's, the reports documents/rl.hpp's.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/serving_flags.hpp"
#include "core/error.hpp"
#include "documents/rl.hpp"
#include "jobspec/rl.hpp"
#include "jobspec/rl_run.hpp"

namespace fmsim::cli {
namespace {

// The job (jobspec::RlFlags, resolved by jobspec::make_rl_job) and what the command does with it.
struct RlOptions : jobspec::RlFlags {
  bool json = false, plan = false;
  bool rl = false;  ///< `fmsim plan --rl`
  std::string trace, test_time, job;
  int search_steps = 8;
};

}  // namespace

/// `fmsim rl`, or (`as_plan`) `fmsim plan --rl`: the same options and the same run, with --plan
/// implied (the RL placement search, planner::plan_rl).
void add_rl_subcommand(CLI::App& app, Context& ctx, bool as_plan) {
  auto o = std::make_shared<RlOptions>();
  auto* cmd = as_plan ? app.add_subcommand("plan",
                                           "Plan an RL post-training job (fmsim plan --rl, the search of fmsim rl "
                                           "--plan): placement, generator/trainer split, generation TP and "
                                           "training layout for the shortest step")
                      : app.add_subcommand("rl",
                                           "Predict one step of RL post-training (GRPO, DAPO, PPO): rollout, reward, "
                                           "log-prob forwards, policy update, weight sync");
  if (as_plan) {
    o->plan = true;
    cmd->add_flag("--rl", o->rl, "Plan an RL post-training job (this form of fmsim plan)")->required();
  }
  cmd->add_option("--model,--policy", o->policy,
                  "Policy model: preset (fmsim models) or config.json (--policy is the older name)")
      ->capture_default_str();
  cmd->add_option("--critic", o->critic, "PPO critic model (default: the policy's architecture)");
  cmd->add_option("--reward-model", o->reward_model,
                  "Reward model for --reward model (default: the policy's architecture)");
  cmd->add_option("--cluster", o->cluster, "Cluster: SYSTEM:COUNT or a cluster YAML")->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPUs used (default: the whole cluster)");
  cmd->add_option("--algorithm", o->algorithm, "grpo, dapo (no KL reference), ppo (critic), reinforce")
      ->capture_default_str();
  cmd->add_option("--prompts", o->prompts, "Prompts per step")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Responses per prompt (group size)")->capture_default_str();
  cmd->add_option("--prompt-len", o->prompt_len, "Prompt tokens (k = 1024)")->capture_default_str();
  cmd->add_option("--max-response", o->max_response, "Maximum response tokens, where generation stops (16k = 16384)")
      ->capture_default_str();
  cmd->add_option("--response-lengths", o->response_lengths,
                  "Response-length law, mean after the cap: lognormal:mean=6k,sigma=0.8 | fixed:4k | uniform:mean=2k "
                  "(default lognormal, mean = max/4, sigma 0.8)");
  cmd->add_option("--placement", o->placement,
                  "colocated (time-share all GPUs) or disaggregated (generator and trainer pools)")
      ->capture_default_str();
  cmd->add_option("--generator-gpus", o->generator_gpus, "Disaggregated: GPUs of the generator pool (default half)");
  cmd->add_option("--sync", o->synchrony, "on-policy, off-policy (k-step, --staleness), fully-async (partial rollouts)")
      ->capture_default_str();
  cmd->add_option("--staleness", o->staleness, "k of k-step off-policy")->capture_default_str();
  cmd->add_flag("--refill", o->refill,
                "Off-policy: the engine refills finished slots with the next batch and takes new weights in flight "
                "(NeMo-RL in_flight_weight_updates): generation is bound by the pool's token rate, not the longest "
                "response");
  cmd->add_option("--staleness-fraction", o->staleness_fraction,
                  "Fully async: how far generation may run ahead of training, as a fraction of one window's samples "
                  "(verl staleness_threshold; 0 drains every window to its longest response)")
      ->capture_default_str();
  cmd->add_option("--oversample", o->oversample,
                  "Dynamic sampling: responses generated per response kept (DAPO ~1.5-3)")
      ->capture_default_str();
  cmd->add_option("--reward", o->reward, "rule (verifier on CPU) or model (reward-model forward)")
      ->capture_default_str();
  cmd->add_option("--gen-tp", o->gen_tp, "Generation tensor parallelism (default: smallest that fits)");
  cmd->add_option("--gen-ep", o->gen_ep,
                  "Generation expert parallelism within a replica (vLLM --enable-expert-parallel: experts spread "
                  "over the replica's GPUs); divides --gen-tp")
      ->capture_default_str();
  cmd->add_option("--reference", o->reference,
                  "KL reference forward: yes or no (default: the algorithm's; GRPO/PPO yes, DAPO no; "
                  "verl use_kl_loss=False with kl_coef 0 runs none)");
  cmd->add_option("--engine", o->engine,
                  "Rollout inference engine profile: vllm, sglang (data/calibration/serving.yaml)")
      ->capture_default_str();
  cmd->add_option("--gen-precision", o->gen_precision, "Generation weights and KV cache: bf16 or fp8")
      ->capture_default_str();
  cmd->add_option("--tp", o->tp, "Training tensor parallelism")->capture_default_str();
  cmd->add_option("--pp", o->pp, "Training pipeline parallelism")->capture_default_str();
  cmd->add_option("--cp", o->cp, "Training context parallelism")->capture_default_str();
  cmd->add_option("--ep", o->ep, "Training expert parallelism")->capture_default_str();
  cmd->add_option("--sharding", o->sharding, parallelism::kShardingWords.allowed())->capture_default_str();
  cmd->add_option("--stack", o->stack, "Training stack: megatron, torchtitan (FSDP2), llm-foundry")
      ->capture_default_str();
  cmd->add_option("--recompute", o->recompute, parallelism::kRecomputeWords.allowed())->capture_default_str();
  cmd->add_option("--mini-batches", o->mini_batches, "Optimizer steps per RL step (batch / ppo_mini_batch)")
      ->capture_default_str();
  cmd->add_option("--epochs", o->epochs, "Passes over the batch (PPO epochs)")->capture_default_str();
  cmd->add_flag("--rollout-logprobs", o->rollout_logprobs, "Use the engine's log-probs (no old-log-prob forward)");
  cmd->add_option(
         "--offload", o->offload,
         "Colocated: what moves to host between phases. always: gradients, optimizer states and engine weights "
         "(NeMo-RL, verl); when-needed: only when training and the engine's memory share do not fit together "
         "(TRL colocate without vLLM sleep)")
      ->capture_default_str();
  cmd->add_option("--trainer-offload", o->trainer_offload,
                  "What the trainer keeps in host memory between its phases (loaded before and offloaded after "
                  "each): none, params+optimizer (verl FSDP param_offload + optimizer_offload), "
                  "params+grads+optimizer (Megatron, with grad_offload)")
      ->capture_default_str();
  cmd->add_option("--gen-memory", o->gen_memory,
                  "Share of HBM the rollout engine takes (vLLM gpu_memory_utilization; default 0.6 colocated, 0.9 "
                  "on a generator pool)");
  cmd->add_option("--fsdp-shard", o->fsdp_shard,
                  "FSDP hybrid sharding: shard states within groups of this many GPUs (verl fsdp_size; default all)");
  cmd->add_option("--sync-method", o->sync_method, "Weight sync: nccl-bucketed, nccl-per-tensor, p2p-rdma, storage")
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Steps of the run (time and cost)")->capture_default_str();
  cmd->add_option("--turns", o->turns,
                  "Agentic RL: mean assistant turns per episode (the response tokens split over them; a tool call "
                  "after every turn but the last; verl's num_turns counts both roles, so turns = num_turns / 2)")
      ->capture_default_str();
  cmd->add_option("--turn-cap", o->turn_cap, "Agentic RL: most assistant turns an episode takes (0: no cap)")
      ->capture_default_str();
  cmd->add_option("--tool-time", o->tool_time,
                  "Agentic RL: latency of one tool/sandbox call: 2s | fixed:500ms | lognormal:mean=2s,sigma=1");
  cmd->add_option("--observation-tokens", o->observation_tokens,
                  "Agentic RL: tokens a tool call appends to the context (prefilled, trained as masked context)")
      ->capture_default_str();
  cmd->add_option("--max-agents", o->max_agents, "Agentic RL: episodes in flight on the generator pool (0: no cap)")
      ->capture_default_str();
  cmd->add_option("--tool-concurrency", o->tool_concurrency,
                  "Agentic RL: tool calls running at once on the pool, e.g. a sandbox's rate limit (0: no cap)")
      ->capture_default_str();
  cmd->add_option("--trained-tokens", o->trained_tokens,
                  "Agentic RL: trajectory (one sequence per episode, observations as masked context) or per-turn "
                  "(one sequence per turn with its context)")
      ->capture_default_str();
  cmd->add_flag("--plan", o->plan,
                "Search placement, pool split, generation TP and training layout for the shortest step "
                "(at the --sync given: on-policy compares colocated with sequential separate pools, "
                "off-policy searches overlapped pool splits); `fmsim plan --rl` is the same search");
  cmd->add_option("--test-time", o->test_time,
                  "Instead of an RL step, the cost per query of test-time compute: single (long thinking: set "
                  "--response-lengths), best-of-n, self-consistency, verifier-search; --samples is n, --prompts the "
                  "queries served at once");
  cmd->add_option("--search-steps", o->search_steps, "verifier-search: reasoning steps per beam")
      ->capture_default_str();
  cmd->add_option("--job", o->job, "YAML job file: any of these flags as keys (without --); flags win")
      ->type_name("FILE");
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->add_option("--trace-out,--trace", o->trace,
                  "Write a Perfetto/Chrome trace of the phases and generator batches (--trace is the older name)")
      ->check(output_file())
      ->type_name("FILE");
  cmd->footer(
      "Examples:\n"
      "  fmsim rl --model qwen3-32b --cluster p5en.48xlarge:16 --algorithm grpo --prompts 512 --samples 8 \\\n"
      "      --max-response 16k --response-lengths lognormal:mean=6k,sigma=0.8 --placement colocated --tp 8\n"
      "  fmsim rl --model qwen3-8b --cluster p5.48xlarge:4 --placement disaggregated --generator-gpus 16 --sync "
      "off-policy\n"
      "  fmsim rl --model qwen3-8b --cluster p5.48xlarge:4 --plan\n"
      "  fmsim rl --model qwen3-8b --cluster p5.48xlarge:4 --plan --sync off-policy\n"
      "  fmsim rl --model qwen3-32b --cluster p5en.48xlarge:1 --test-time self-consistency --samples 16 --prompts 64\n"
      "  fmsim rl --job examples/grpo_qwen3_32b_rl.yaml --placement disaggregated --sync off-policy\n"
      "Model: docs/models/rl.md. Validation: fmsim validate rl.");
  cmd->callback([o, cmd, as_plan, &ctx] {
    apply_flags_job_file(o->job, *cmd);
    if (as_plan) o->plan = true;
    const auto job = jobspec::make_rl_job(*o, ctx.catalog());
    const auto models = jobspec::load_rl_models(job, o->engine);
    if (!o->test_time.empty()) {
      const auto ttc = jobspec::make_ttc_job(job, o->test_time, o->search_steps, models.rl);
      const auto result = jobspec::estimate_ttc(ttc, models);
      if (o->json) {
        std::cout << documents::ttc_json(job, ttc, result).dump(2) << "\n";
      } else {
        documents::print_ttc(std::cout, job, ttc, result);
      }
      return;
    }
    if (o->plan) {
      const auto run = jobspec::plan_rl_job(job, models);
      if (o->json) {
        std::cout << documents::rl_plan_json(run).dump(2) << "\n";
      } else if (run.candidates.empty()) {
        std::cout << "no feasible placement: every candidate runs out of memory or is invalid\n";
        ctx.exit_code = 1;
      } else {
        documents::print_rl_plan(std::cout, job, run);
      }
      return;
    }
    const auto run = jobspec::run_rl_step(job, models, !o->trace.empty());
    if (!o->trace.empty()) write_file_atomically(o->trace, documents::rl_trace_json(job, run), "--trace-out");
    if (o->json) {
      std::cout << documents::rl_step_json(job, run.result).dump(2) << "\n";
    } else {
      documents::print_rl_step(std::cout, job, run.result, run.elapsed_ms);
    }
  });
}

void add_rl_command(CLI::App& app, Context& ctx) { add_rl_subcommand(app, ctx, false); }

void add_plan_rl_command(CLI::App& app, Context& ctx) { add_rl_subcommand(app, ctx, true); }

}  // namespace fmsim::cli
