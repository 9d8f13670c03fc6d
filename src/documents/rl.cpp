// `fmsim rl` as JSON documents and text (documents/rl.hpp).
#include "documents/rl.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/strings.hpp"
#include "documents/text_table.hpp"
#include "observability/chrome_trace.hpp"

namespace fmsim::documents {

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

void print_rl_step(std::ostream& out, const rl::RlJob& j, const rl::RlStepResult& r, double elapsed_ms) {
  auto gib = [](core::Bytes b) { return fmt::format("{:.1f}", b.value() / core::gib(1).value()); };
  out << fmt::format("RL step: {} {} on {} x {} ({} GPUs), {}, {}\n", rl::to_string(j.algorithm), j.policy.name,
                     j.cluster.count, j.cluster.system.name, j.job_gpus(), rl::to_string(j.placement),
                     rl::to_string(j.synchrony));
  out << fmt::format(
      "  batch: {} prompts x {} samples = {} responses; prompt {} tok, response mean {:.0f} tok "
      "(cap {}, {:.1f}% truncated)\n",
      j.prompts, j.samples, r.responses, j.prompt_len, r.mean_response, j.lengths.cap, 100.0 * r.truncated_fraction);
  out << fmt::format(
      "  generators: {} GPUs = {} replicas x TP{} ({} sequences each); trainers: {} GPUs "
      "tp{} pp{} cp{} ep{} dp{}, {} x {} sequences of {} tokens\n",
      r.generator_gpus, r.generator_replicas, r.generator_tp, r.rollout.concurrency, r.trainer_gpus, r.train_layout.tp,
      r.train_layout.pp, r.train_layout.cp, r.train_layout.ep, r.train_layout.dp, j.mini_batches,
      r.train_layout.global_batch,
      j.agent.is_agentic() ? static_cast<long long>(r.trained_sequence_tokens)
                           : j.prompt_len + static_cast<long long>(r.mean_response));
  if (j.agent.is_agentic()) {
    const auto& e = r.rollout.episode;
    out << fmt::format(
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
  out << "\n";
  TextTable t(
      {{"PHASE"}, {"TIME s", true}, {"EXPOSED s", true}, {"GPUS", true}, {"UTIL %", true}, {"MEM/GPU GiB", true}});
  for (const auto& p : r.phases) {
    t.add({std::string(rl::kPhaseWords.name(p.phase)), fmt::format("{:.2f}", p.time.value()),
           fmt::format("{:.2f}", p.exposed.value()), std::to_string(p.gpus),
           fmt::format("{:.0f}", 100.0 * p.utilisation), gib(p.memory_per_gpu)});
  }
  t.print(out, "  ");
  out << fmt::format("\n  step time          {:.2f} s   (trainer waits {:.2f} s for samples)\n", r.step_time.value(),
                     r.trainer_wait.value());
  const bool streamed =
      j.synchrony == rl::Synchrony::FullyAsync || (j.synchrony == rl::Synchrony::OffPolicy && j.refill);
  if (streamed) {
    out << fmt::format(
        "  GPU utilisation    {:.0f}% over the step; the rollout refills its slots as responses finish\n",
        100.0 * r.gpu_utilisation);
  } else {
    out << fmt::format(
        "  GPU utilisation    {:.0f}% over the step; rollout keeps its slots {:.0f}% busy "
        "(the rest idles on the longest responses)\n",
        100.0 * r.gpu_utilisation, 100.0 * r.rollout.busy_fraction);
  }
  out << fmt::format("  tokens/s           {:.0f} generated, {:.0f} trained\n", r.generated_tokens_per_s,
                     r.trained_tokens_per_s);
  out << fmt::format(
      "  weight sync        {:.2f} s: {} in {} tensors over {} (gather {:.2f} s, transfer {:.2f} s, "
      "per-tensor {:.2f} s)\n",
      r.sync.total.value(), core::format_bytes(r.sync.bytes), r.sync.tensors, r.sync.path, r.sync.gather.value(),
      r.sync.transfer.value(), r.sync.per_tensor.value());
  if (r.sync.requantize.value() > 0.0) {
    out << fmt::format("                     the generators quantise the received {} weights to {} on load: {:.2f} s\n",
                       "BF16", core::to_string(j.generator_precision), r.sync.requantize.value());
  }
  if (!r.train.fits_memory) {
    out << fmt::format(
        "  warning: the policy update needs {} GiB per GPU of {} GiB: raise --tp/--pp or use --sharding zero3\n",
        gib(r.train.memory.total()), gib(r.train.memory_capacity));
  }
  if (r.cost_per_step_usd > 0.0) {
    out << fmt::format("  {} steps           {}, ${:.0f} (${:.2f} per step)\n", j.steps,
                       core::format_duration(r.run_time), r.run_cost_usd, r.cost_per_step_usd);
  } else {
    out << fmt::format("  {} steps           {} (no price for {})\n", j.steps, core::format_duration(r.run_time),
                       j.cluster.system.name);
  }
  out << fmt::format("  predicted in {:.1f} ms ({} rollout events)\n", elapsed_ms, r.rollout.events);
}

std::string rl_trace_json(const rl::RlJob& job, const jobspec::RlStepRun& run) {
  observability::TraceMetadata meta;
  meta.other_data = {{"policy", job.policy.name},
                     {"system", job.cluster.system.name},
                     {"step_time_s", fmt::format("{:.6f}", run.result.step_time.value())}};
  return observability::to_chrome_trace_json(run.events, meta);
}

nlohmann::json rl_plan_json(const jobspec::RlPlanRun& run) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& p : run.candidates) arr.push_back(rl_step_json(p.job, p.result));
  return nlohmann::json{{"candidates", arr}, {"search_ms", run.search_ms}};
}

void print_rl_plan(std::ostream& out, const rl::RlJob& j, const jobspec::RlPlanRun& run) {
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
  for (const auto& p : run.candidates) {
    const double rollout = rl::phase_time(p.result, rl::Phase::Rollout).value();
    const double update = rl::phase_time(p.result, rl::Phase::PolicyUpdate).value();
    const auto& l = p.result.train_layout;
    t.add({std::to_string(rank++), rl::to_string(p.job.placement), rl::to_string(p.job.synchrony),
           std::to_string(p.result.generator_gpus), std::to_string(p.result.generator_tp),
           fmt::format("tp{} pp{} dp{}", l.tp, l.pp, l.dp), fmt::format("{:.1f}", p.result.step_time.value()),
           fmt::format("{:.1f}", rollout), fmt::format("{:.1f}", update),
           fmt::format("{:.0f}", 100.0 * p.result.gpu_utilisation)});
  }
  out << fmt::format("RL placement search: {} on {} GPUs of {} ({:.0f} ms)\n\n", j.policy.name, j.job_gpus(),
                     j.cluster.system.name, run.search_ms);
  t.print(out, "  ");
}

nlohmann::json ttc_json(const rl::RlJob& job, const rl::TtcJob& t, const rl::TtcResult& r) {
  const int tp = t.generator.tp, gpus = tp * t.generator.replicas;
  return nlohmann::json{{"method", rl::to_string(t.method)},
                        {"policy", job.policy.name},
                        {"gpus", gpus},
                        {"generator_tp", tp},
                        {"queries", t.queries},
                        {"n", t.method == rl::TtcMethod::Single ? 1 : t.n},
                        {"tokens_per_query", r.tokens_per_query},
                        {"gpu_seconds_per_query", r.gpu_seconds_per_query},
                        {"usd_per_query", r.usd_per_query},
                        {"batch_latency_s", r.latency.value()}};
}

void print_ttc(std::ostream& out, const rl::RlJob& job, const rl::TtcJob& t, const rl::TtcResult& r) {
  const int tp = t.generator.tp, gpus = tp * t.generator.replicas;
  out << fmt::format("Test-time compute: {} (n = {}) with {} on {} GPUs ({} replicas x TP{}), {} queries at once\n",
                     rl::to_string(t.method), t.method == rl::TtcMethod::Single ? 1 : t.n, job.policy.name, gpus,
                     gpus / tp, tp, t.queries);
  out << fmt::format("  tokens per query      {:.0f} (generated and verifier)\n", r.tokens_per_query);
  out << fmt::format("  GPU-seconds per query {:.2f}\n", r.gpu_seconds_per_query);
  if (t.price_per_gpu_hour > 0.0) out << fmt::format("  cost per query        ${:.4f}\n", r.usd_per_query);
  out << fmt::format("  batch latency         {:.1f} s (the slowest sample finishes the batch)\n", r.latency.value());
}

}  // namespace fmsim::documents
