// fmsim rl: one step of RL post-training (rollout, reward, log-prob forwards, update, weight sync),
// its phases, utilisation, memory, throughput and cost; --plan searches placement and layouts.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/serving_flags.hpp"
#include "core/error.hpp"
#include "documents/text_table.hpp"
#include "jobspec/rl.hpp"
#include "observability/chrome_trace.hpp"
#include "planner/rl_plan.hpp"
#include "rl/rl_step.hpp"
#include "rl/test_time.hpp"

namespace fmsim::cli {
using documents::TextTable;
namespace {

// The job (jobspec::RlFlags, resolved by jobspec::make_rl_job) and what the command does with it.
struct RlOptions : jobspec::RlFlags {
  bool json = false, plan = false;
  bool rl = false;  ///< `fmsim plan --rl`
  std::string trace, test_time, job;
  int search_steps = 8;
};

nlohmann::json rl_step_json(const rl::RlJob& j, const rl::RlStepResult& r) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"name", std::string(rl::kPhaseWords.name(p.phase))},
                      {"time_s", p.time.value()},
                      {"exposed_s", p.exposed.value()},
                      {"gpus", p.gpus},
                      {"utilisation", p.utilisation},
                      {"memory_per_gpu_gib", p.memory_per_gpu.value() / core::gib(1).value()}});
  }
  nlohmann::json out = {
      {"policy", j.policy.name},
      {"cluster", j.cluster.name},
      {"gpus", j.job_gpus()},
      {"algorithm", rl::to_string(j.algorithm)},
      {"placement", rl::to_string(j.placement)},
      {"synchrony", rl::to_string(j.synchrony)},
      {"staleness", j.staleness},
      {"refill", j.refill},
      {"staleness_fraction", j.staleness_fraction},
      {"generator_gpus", r.generator_gpus},
      {"trainer_gpus", r.trainer_gpus},
      {"generator_tp", r.generator_tp},
      {"generator_replicas", r.generator_replicas},
      {"train_layout",
       {{"tp", r.train_layout.tp},
        {"pp", r.train_layout.pp},
        {"cp", r.train_layout.cp},
        {"ep", r.train_layout.ep},
        {"dp", r.train_layout.dp},
        {"global_batch", r.train_layout.global_batch}}},
      {"responses", r.responses},
      {"mean_response_tokens", r.mean_response},
      {"truncated_fraction", r.truncated_fraction},
      {"step_time_s", r.step_time.value()},
      {"trainer_wait_s", r.trainer_wait.value()},
      {"phases", phases},
      {"gpu_utilisation", r.gpu_utilisation},
      {"rollout_busy_fraction", r.rollout.busy_fraction},
      {"rollout_concurrency", r.rollout.concurrency},
      {"generated_tokens", r.generated_tokens},
      {"trained_tokens", r.trained_tokens},
      {"generated_tokens_per_s", r.generated_tokens_per_s},
      {"trained_tokens_per_s", r.trained_tokens_per_s},
      {"weight_sync",
       {{"total_s", r.sync.total.value()},
        {"gather_s", r.sync.gather.value()},
        {"transfer_s", r.sync.transfer.value()},
        {"per_tensor_s", r.sync.per_tensor.value()},
        {"requantize_s", r.sync.requantize.value()},
        {"bytes", r.sync.bytes.value()},
        {"tensors", r.sync.tensors},
        {"path", r.sync.path}}},
      {"fits_memory", r.train.fits_memory},
      {"training_fits_memory", r.train.fits_memory},  // the older key, kept for one release (docs/cli.md)
      {"steps", j.steps},
      {"run_time_s", r.run_time.value()},
      {"cost_per_step_usd", r.cost_per_step_usd},
      {"run_cost_usd", r.run_cost_usd}};
  if (j.agent.is_agentic()) {
    const auto& e = r.rollout.episode;
    out["agent"] = {{"turns", e.turns},
                    {"turn_cap", j.agent.turn_cap},
                    {"tool_calls", e.tool_calls},
                    {"tool_time_mean_s", j.agent.tool.mean.value()},
                    {"tool_time_sigma", j.agent.tool.sigma},
                    {"observation_tokens", e.observation_tokens},
                    {"max_agents", j.agent.max_agents},
                    {"tool_concurrency", j.agent.tool_concurrency},
                    {"trained_tokens", std::string(rl::kTrainedTokensWords.name(j.agent.trained))},
                    {"trained_sequences", r.trained_sequences},
                    {"trained_sequence_tokens", r.trained_sequence_tokens},
                    {"tool_seconds_replica", r.rollout.tool_seconds},
                    {"engine_idle_s", r.rollout.engine_idle_seconds}};
  }
  return out;
}

void print_text(const rl::RlJob& j, const rl::RlStepResult& r, double elapsed_ms) {
  auto gib = [](core::Bytes b) { return fmt::format("{:.1f}", b.value() / core::gib(1).value()); };
  std::cout << fmt::format("RL step: {} {} on {} x {} ({} GPUs), {}, {}\n", rl::to_string(j.algorithm), j.policy.name,
                           j.cluster.count, j.cluster.system.name, j.job_gpus(), rl::to_string(j.placement),
                           rl::to_string(j.synchrony));
  std::cout << fmt::format(
      "  batch: {} prompts x {} samples = {} responses; prompt {} tok, response mean {:.0f} tok "
      "(cap {}, {:.1f}% truncated)\n",
      j.prompts, j.samples, r.responses, j.prompt_len, r.mean_response, j.lengths.cap, 100.0 * r.truncated_fraction);
  std::cout << fmt::format(
      "  generators: {} GPUs = {} replicas x TP{} ({} sequences each); trainers: {} GPUs "
      "tp{} pp{} cp{} ep{} dp{}, {} x {} sequences of {} tokens\n",
      r.generator_gpus, r.generator_replicas, r.generator_tp, r.rollout.concurrency, r.trainer_gpus, r.train_layout.tp,
      r.train_layout.pp, r.train_layout.cp, r.train_layout.ep, r.train_layout.dp, j.mini_batches,
      r.train_layout.global_batch,
      j.agent.is_agentic() ? static_cast<long long>(r.trained_sequence_tokens)
                           : j.prompt_len + static_cast<long long>(r.mean_response));
  if (j.agent.is_agentic()) {
    const auto& e = r.rollout.episode;
    std::cout << fmt::format(
        "  agents: {:.1f} turns per episode (cap {}), {:.1f} tool calls of {:.2f} s mean, {:.0f} observation tokens; "
        "{} in flight, {} tool calls at once; the engine idled {:.1f} s waiting on tools\n"
        "  trained: {} ({:.0f} sequences of {:.0f} tokens: {:.0f} generated per episode)\n",
        e.turns, j.agent.turn_cap > 0 ? std::to_string(j.agent.turn_cap) : std::string("none"), e.tool_calls,
        j.agent.tool.mean.value(), e.observation_tokens,
        j.agent.max_agents > 0 ? std::to_string(j.agent.max_agents) : std::string("every episode"),
        j.agent.tool_concurrency > 0 ? std::to_string(j.agent.tool_concurrency) : std::string("any number"),
        r.rollout.engine_idle_seconds, rl::kTrainedTokensWords.name(j.agent.trained), r.trained_sequences,
        r.trained_sequence_tokens, r.mean_response);
  }
  std::cout << "\n";
  TextTable t(
      {{"PHASE"}, {"TIME s", true}, {"EXPOSED s", true}, {"GPUS", true}, {"UTIL %", true}, {"MEM/GPU GiB", true}});
  for (const auto& p : r.phases) {
    t.add({std::string(rl::kPhaseWords.name(p.phase)), fmt::format("{:.2f}", p.time.value()),
           fmt::format("{:.2f}", p.exposed.value()), std::to_string(p.gpus),
           fmt::format("{:.0f}", 100.0 * p.utilisation), gib(p.memory_per_gpu)});
  }
  t.print(std::cout, "  ");
  std::cout << fmt::format("\n  step time          {:.2f} s   (trainer waits {:.2f} s for samples)\n",
                           r.step_time.value(), r.trainer_wait.value());
  const bool streamed =
      j.synchrony == rl::Synchrony::FullyAsync || (j.synchrony == rl::Synchrony::OffPolicy && j.refill);
  if (streamed) {
    std::cout << fmt::format(
        "  GPU utilisation    {:.0f}% over the step; the rollout refills its slots as responses finish\n",
        100.0 * r.gpu_utilisation);
  } else {
    std::cout << fmt::format(
        "  GPU utilisation    {:.0f}% over the step; rollout keeps its slots {:.0f}% busy "
        "(the rest idles on the longest responses)\n",
        100.0 * r.gpu_utilisation, 100.0 * r.rollout.busy_fraction);
  }
  std::cout << fmt::format("  tokens/s           {:.0f} generated, {:.0f} trained\n", r.generated_tokens_per_s,
                           r.trained_tokens_per_s);
  std::cout << fmt::format(
      "  weight sync        {:.2f} s: {} in {} tensors over {} (gather {:.2f} s, transfer {:.2f} s, "
      "per-tensor {:.2f} s)\n",
      r.sync.total.value(), core::format_bytes(r.sync.bytes), r.sync.tensors, r.sync.path, r.sync.gather.value(),
      r.sync.transfer.value(), r.sync.per_tensor.value());
  if (r.sync.requantize.value() > 0.0) {
    std::cout << fmt::format(
        "                     the generators quantise the received {} weights to {} on load: {:.2f} s\n", "BF16",
        core::to_string(j.generator_precision), r.sync.requantize.value());
  }
  if (!r.train.fits_memory) {
    std::cout << fmt::format(
        "  warning: the policy update needs {} GiB per GPU of {} GiB: raise --tp/--pp or use --sharding zero3\n",
        gib(r.train.memory.total()), gib(r.train.memory_capacity));
  }
  if (r.cost_per_step_usd > 0.0) {
    std::cout << fmt::format("  {} steps           {}, ${:.0f} (${:.2f} per step)\n", j.steps,
                             core::format_duration(r.run_time), r.run_cost_usd, r.cost_per_step_usd);
  } else {
    std::cout << fmt::format("  {} steps           {} (no price for {})\n", j.steps, core::format_duration(r.run_time),
                             j.cluster.system.name);
  }
  std::cout << fmt::format("  predicted in {:.1f} ms ({} rollout events)\n", elapsed_ms, r.rollout.events);
}

/// --test-time: the cost per query of a test-time-compute method on the job's GPUs.
void run_test_time(const RlOptions& o, const rl::RlJob& job, const jobspec::RlModels& models) {
  const auto t = jobspec::make_ttc_job(job, o.test_time, o.search_steps, models.rl);
  const auto r = jobspec::estimate_ttc(t, models);
  const int tp = t.generator.tp, gpus = tp * t.generator.replicas;
  if (o.json) {
    std::cout << nlohmann::json{{"method", rl::to_string(t.method)},
                                {"policy", job.policy.name},
                                {"gpus", gpus},
                                {"generator_tp", tp},
                                {"queries", t.queries},
                                {"n", t.method == rl::TtcMethod::Single ? 1 : t.n},
                                {"tokens_per_query", r.tokens_per_query},
                                {"gpu_seconds_per_query", r.gpu_seconds_per_query},
                                {"usd_per_query", r.usd_per_query},
                                {"batch_latency_s", r.latency.value()}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format(
      "Test-time compute: {} (n = {}) with {} on {} GPUs ({} replicas x TP{}), {} queries at once\n",
      rl::to_string(t.method), t.method == rl::TtcMethod::Single ? 1 : t.n, job.policy.name, gpus, gpus / tp, tp,
      t.queries);
  std::cout << fmt::format("  tokens per query      {:.0f} (generated and verifier)\n", r.tokens_per_query);
  std::cout << fmt::format("  GPU-seconds per query {:.2f}\n", r.gpu_seconds_per_query);
  if (t.price_per_gpu_hour > 0.0) std::cout << fmt::format("  cost per query        ${:.4f}\n", r.usd_per_query);
  std::cout << fmt::format("  batch latency         {:.1f} s (the slowest sample finishes the batch)\n",
                           r.latency.value());
}

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
    const auto& calibration = models.training;
    const auto& cal = models.rl;
    const auto& engine = models.engine;
    if (!o->test_time.empty()) {
      run_test_time(*o, job, models);
      return;
    }
    if (o->plan) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto plans = planner::plan_rl(job, calibration, cal, engine, 10);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (o->json) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& p : plans) arr.push_back(rl_step_json(p.job, p.result));
        std::cout << nlohmann::json{{"candidates", arr}, {"search_ms", ms}}.dump(2) << "\n";
        return;
      }
      if (plans.empty()) {
        std::cout << "no feasible placement: every candidate runs out of memory or is invalid\n";
        ctx.exit_code = 1;
        return;
      }
      TextTable t({{"RANK", true},
                   {"PLACEMENT"},
                   {"SYNC"},
                   {"GEN GPUS", true},
                   {"GEN TP", true},
                   {"TRAIN", false},
                   {"STEP s", true},
                   {"ROLLOUT s", true},
                   {"UPDATE s", true},
                   {"UTIL %", true}});
      int rank = 1;
      for (const auto& p : plans) {
        const double rollout = rl::phase_time(p.result, rl::Phase::Rollout).value();
        const double update = rl::phase_time(p.result, rl::Phase::PolicyUpdate).value();
        const auto& l = p.result.train_layout;
        t.add({std::to_string(rank++), rl::to_string(p.job.placement), rl::to_string(p.job.synchrony),
               std::to_string(p.result.generator_gpus), std::to_string(p.result.generator_tp),
               fmt::format("tp{} pp{} dp{}", l.tp, l.pp, l.dp), fmt::format("{:.1f}", p.result.step_time.value()),
               fmt::format("{:.1f}", rollout), fmt::format("{:.1f}", update),
               fmt::format("{:.0f}", 100.0 * p.result.gpu_utilisation)});
      }
      std::cout << fmt::format("RL placement search: {} on {} GPUs of {} ({:.0f} ms)\n\n", job.policy.name,
                               job.job_gpus(), job.cluster.system.name, ms);
      t.print(std::cout, "  ");
      return;
    }
    engine::TraceBuffer buffer;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = rl::estimate_rl_step(job, calibration, cal, engine, o->trace.empty() ? nullptr : &buffer);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.feasible) {
      throw core::InputError::flag(jobspec::infeasible_flag(r.reason), r.reason);
    }
    if (!o->trace.empty()) {
      observability::TraceMetadata meta;
      meta.other_data = {{"policy", job.policy.name},
                         {"system", job.cluster.system.name},
                         {"step_time_s", fmt::format("{:.6f}", r.step_time.value())}};
      write_file_atomically(o->trace, observability::to_chrome_trace_json(buffer.events(), meta), "--trace-out");
    }
    if (o->json) {
      std::cout << rl_step_json(job, r).dump(2) << "\n";
    } else {
      print_text(job, r, ms);
    }
  });
}

void add_rl_command(CLI::App& app, Context& ctx) { add_rl_subcommand(app, ctx, false); }

void add_plan_rl_command(CLI::App& app, Context& ctx) { add_rl_subcommand(app, ctx, true); }

}  // namespace fmsim::cli
