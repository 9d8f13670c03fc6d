// fmsim serve: simulate an inference engine serving a workload on one replica (or a fleet of them).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/serving_flags.hpp"
#include "collectives/comm_cost.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "documents/text_table.hpp"
#include "observability/chrome_trace.hpp"
#include "observability/prometheus.hpp"
#include "observability/prometheus_histogram.hpp"
#include "serving/vllm_buckets.hpp"
#include "telemetry/serving_metrics.hpp"

namespace fmsim::cli {
using documents::kGiB;
using documents::TextTable;
namespace {

struct ServeOptions {
  jobspec::ServingFlags flags;
  bool json = false;
  std::string trace, metrics, timeseries;
  MetricsFlags metrics_out;
  jobspec::ServeFleetFlags fleet;  ///< --router, --disagg, --kv-transfer
  std::string cold_start;          ///< --cold-start STORAGE
};

using Topology = jobspec::ServeFleet;

std::string ms(double s) { return fmt::format("{:.1f}", s * 1e3); }

std::string layout_text(const serving::Deployment& d) {
  return fmt::format("tp{} pp{} ep{}{} ({} GPUs)", d.tp, d.pp, d.ep, d.attention_dp > 1 ? " +attention-dp (DEP)" : "",
                     d.gpus());
}

// Up to `n` evenly spaced iteration samples (always the last).
std::vector<serving::IterationSample> downsample(const std::vector<serving::IterationSample>& v, std::size_t n) {
  if (v.size() <= n) return v;
  std::vector<serving::IterationSample> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(v[i * (v.size() - 1) / (n - 1)]);
  return out;
}

// The tier's word, "" for none.
std::string offload_tier_name(const serving::Deployment::KvOffload& t) {
  return t.tier == serving::KvTier::None ? std::string() : std::string(serving::kKvTierWords.name(t.tier));
}

nlohmann::json latency_stats_json(const serving::LatencyStats& s) {
  return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"max", s.max}};
}

nlohmann::json topology_json(const Topology& t) {
  nlohmann::json j = {{"instances", t.instances}};
  if (t.prefill > 0) {
    j["mode"] = "disaggregated";
    j["prefill_instances"] = t.prefill;
    j["decode_instances"] = t.decode;
    j["kv_transfer"] = std::string(serving::kKvTransferWords.name(t.dis.transfer));
    j["kv_link"] = t.link;
    j["kv_link_bytes_per_s_per_gpu"] = t.dis.link_bandwidth.value();
  } else {
    j["mode"] = t.instances > 1 ? "fleet" : "single";
    j["router"] = std::string(serving::to_string(t.router));
  }
  return j;
}

// The steady-state window and its throughput (serving::steady_state); "throughput" beside it is
// the whole run's average.
nlohmann::json steady_json(const serving::SteadyState& st, double units, int gpus) {
  if (!st.valid) return nullptr;
  return {{"window_start_s", st.start_s},
          {"window_end_s", st.end_s},
          {"window_ends_at", st.ends_at_last_arrival ? "last arrival" : "drain"},
          {"converged", st.converged},
          {"halves_gap", st.halves_gap},
          {"output_tokens_per_s_per_replica", st.output_tokens_per_s / units},
          {"output_tokens_per_s_per_gpu", st.output_tokens_per_s / std::max(1, gpus)},
          {"output_tokens_per_s_fleet", st.output_tokens_per_s},
          {"requests_per_s_per_replica", st.requests_per_s / units}};
}

nlohmann::json serve_json(const jobspec::ServingSetup& s, const serving::ServeResult& r, const serving::ServeSummary& m,
                          const Topology& topo) {
  const double units = topo.instances;
  const auto& d = s.deployment;
  nlohmann::json series = nlohmann::json::array();
  for (const auto& it : downsample(r.iterations, 200)) {
    series.push_back({{"time_s", it.time.value()},
                      {"batch", it.running},
                      {"tokens", it.tokens},
                      {"kv_usage", it.kv_usage},
                      {"waiting", it.waiting},
                      {"iteration_s", it.duration.value()}});
  }
  const auto& p = r.time_by_part;
  return {{"model", d.model.name},
          {"system", d.cluster.system.name},
          {"gpu", d.cluster.gpu.name},
          {"engine", d.engine.name},
          {"layout", {{"tp", d.tp}, {"pp", d.pp}, {"ep", d.ep}, {"attention_dp", d.attention_dp}, {"gpus", d.gpus()}}},
          {"precision", {{"weights", core::to_string(d.weights)}, {"kv_cache", core::to_string(d.kv)}}},
          {"workload", serving::describe(s.workload)},
          {"fits_memory", r.fits},
          {"fits", r.fits},  // the older key, kept for one release (docs/cli.md)
          {"reason", r.reason},
          {"memory_per_gpu_bytes",
           {{"weights", r.memory.weights.value()},
            {"activations", r.memory.activations.value()},
            {"graphs", r.memory.graphs.value()},
            {"kv_cache", r.memory.kv_cache.value()},
            {"usable", r.memory.usable.value()}}},
          {"kv_capacity_tokens", r.memory.token_capacity},
          {"completed_requests", m.completed},
          {"rejected_requests", r.rejected},
          {"duration_s", r.duration.value()},
          {"replicas", topo.instances},
          {"topology", topology_json(topo)},
          {"steady_state", steady_json(serving::steady_state(r), units, r.gpus)},
          {"throughput",
           {{"output_tokens_per_s_per_replica", m.output_tokens_per_s.value() / units},
            {"total_tokens_per_s_per_replica", m.total_tokens_per_s.value() / units},
            {"output_tokens_per_s_per_gpu", m.output_tokens_per_s_per_gpu.value()},
            {"total_tokens_per_s_per_gpu", m.total_tokens_per_s_per_gpu.value()},
            {"output_tokens_per_s_fleet", m.output_tokens_per_s.value()},
            {"requests_per_s_per_replica", m.requests_per_s.value() / units},
            {"tokens_per_s_per_user", m.tokens_per_s_per_user.value()}}},
          {"latency_s",
           {{"ttft", latency_stats_json(m.ttft)},
            {"tpot", latency_stats_json(m.tpot)},
            {"itl", latency_stats_json(m.itl)},
            {"e2e", latency_stats_json(m.e2e)}}},
          {"latency_definitions",
           {{"ttft", "first output token time - arrival (queueing included)"},
            {"tpot", "per request (last token - first token) / (output tokens - 1); first token excluded"},
            {"itl", "gap between consecutive output tokens of a request, over all tokens"},
            {"e2e", "last output token - arrival"}}},
          {"slo",
           {{"ttft_s", s.slo.ttft.value()},
            {"tpot_s", s.slo.tpot.value()},
            {"attainment", m.slo_attainment},
            {"goodput_requests_per_s", m.goodput_requests_per_s.value()},
            {"meets_p99", s.slo.met(core::Seconds(m.ttft.p99), core::Seconds(m.tpot.p99))}}},
          {"kv_usage", {{"mean", m.kv_usage_mean}, {"max", m.kv_usage_max}}},
          {"batch_mean", m.batch_mean},
          {"queue", {{"mean", m.queue_mean}, {"max", m.queue_max}}},
          {"preemptions", r.preemptions},
          {"kv_offload",
           {{"tier", offload_tier_name(s.deployment.kv_offload)},
            {"capacity_bytes", s.deployment.kv_offload.capacity.value()},
            {"bytes_per_s_per_gpu", s.deployment.kv_offload.bandwidth.value()},
            {"offloads", r.offloads}}},
          {"iterations", r.iterations.size()},
          {"time_by_part_s",
           {{"linear", p.linear.value()},
            {"experts", p.experts.value()},
            {"attention", p.attention.value()},
            {"other", p.other.value()},
            {"tp_comm", p.tp_comm.value()},
            {"ep_comm", p.ep_comm.value()},
            {"pp_comm", p.pp_comm.value()},
            {"overhead", p.overhead.value()},
            {"draft", p.draft.value()}}},
          {"cost_usd",
           {{"per_gpu_hour", s.price_per_gpu_hour},
            {"per_million_output_tokens", m.cost_per_million_output_tokens},
            {"per_million_total_tokens", m.cost_per_million_total_tokens}}},
          {"timeseries", series}};
}

void print(const jobspec::ServingSetup& s, const serving::ServeResult& r, const serving::ServeSummary& m,
           const Topology& topo) {
  const int replicas = topo.instances;
  const auto& d = s.deployment;
  fmt::print("fmsim serve: {} on {} ({}), replica {}, {} weights, {} KV, engine {}\n", d.model.name,
             d.cluster.system.name, d.cluster.gpu.display_name, layout_text(d), core::to_string(d.weights),
             core::to_string(d.kv), d.engine.name);
  fmt::print("workload    {}\n", serving::describe(s.workload));
  if (topo.prefill > 0) {
    fmt::print("pools       disaggregated: {} prefill + {} decode instances; KV over {} at {:.0f} GB/s per GPU, {}\n",
               topo.prefill, topo.decode, topo.link, topo.dis.link_bandwidth.value() / 1e9,
               topo.dis.transfer == serving::KvTransfer::Layer ? "streamed layer by layer"
                                                               : "whole request after its prefill");
  } else if (replicas > 1) {
    fmt::print("fleet       {} replicas behind a {} router\n", replicas, serving::to_string(topo.router));
  }
  const auto& mem = r.memory;
  fmt::print(
      "memory/GPU  weights {:.1f} GiB | activations {:.1f} GiB | graphs {:.1f} GiB | KV cache {:.1f} GiB of {:.1f} GiB "
      "usable = {:.0f}k tokens per replica\n",
      mem.weights.value() / kGiB, mem.activations.value() / kGiB, mem.graphs.value() / kGiB,
      std::max(0.0, mem.kv_cache.value()) / kGiB, mem.usable.value() / kGiB, mem.token_capacity / 1e3);
  if (!r.fits) {
    fmt::print("\nDOES NOT FIT: {}\n", r.reason);
    return;
  }
  fmt::print("\n{:<26}{:>14}{:>14}{}\n", "throughput", topo.prefill > 0 ? "per instance" : "per replica", "per GPU",
             replicas > 1 ? fmt::format("{:>14}", "fleet") : "");
  auto row = [&](const char* name, double v) {
    fmt::print("  {:<24}{:>14.1f}{:>14.1f}{}\n", name, v / replicas, v / std::max(1, r.gpus),
               replicas > 1 ? fmt::format("{:>14.1f}", v) : "");
  };
  // The headline is the steady state (serving::steady_state): it does not depend on how many
  // requests were simulated. The whole run's average, ramp-up and drain included, follows it.
  const auto steady = serving::steady_state(r);
  if (steady.valid) {
    row("output tokens/s", steady.output_tokens_per_s);
    row("requests/s", steady.requests_per_s);
  }
  row(steady.valid ? "output tokens/s (run)" : "output tokens/s", m.output_tokens_per_s.value());
  row("total tokens/s (run)", m.total_tokens_per_s.value());
  if (!steady.valid) row("requests/s (run)", m.requests_per_s.value());
  if (steady.valid) {
    fmt::print(
        "  steady state: t = {:.1f}-{:.1f} s, after the first {:.0f}% of completions, to {}; halves {:.1f}% apart{}\n",
        steady.start_s, steady.end_s, 100 * serving::kSteadyWarmupFraction,
        steady.ends_at_last_arrival ? "the last arrival" : "the last 10% (drain)", 100 * steady.halves_gap,
        steady.converged ? "" : ": NOT CONVERGED, simulate more requests (--num-requests)");
    fmt::print("  (run) = the whole run's average, ramp-up and drain included\n");
  } else {
    fmt::print(
        "  no steady state: the last request arrives before the warm-up ends (two request lifetimes) or too few "
        "completed; figures are the whole run's: simulate more requests (--num-requests)\n");
  }
  fmt::print("  {:<24}{:>14.1f}  (1 / mean TPOT)\n", "tokens/s per user", m.tokens_per_s_per_user.value());
  fmt::print("\n{:<26}{:>10}{:>10}{:>10}{:>10}\n", "latency (ms)", "mean", "p50", "p90", "p99");
  for (const auto& [name, st] :
       {std::pair{"TTFT", m.ttft}, std::pair{"TPOT", m.tpot}, std::pair{"ITL", m.itl}, std::pair{"E2E", m.e2e}}) {
    fmt::print("  {:<24}{:>10}{:>10}{:>10}{:>10}\n", name, ms(st.mean), ms(st.p50), ms(st.p90), ms(st.p99));
  }
  fmt::print(
      "  TTFT = first token - arrival (queueing included); TPOT = (last - first token) / (output - 1) per request;\n"
      "  ITL = gap between consecutive tokens over all tokens; E2E = last token - arrival.\n");
  if (s.slo.any()) {
    const bool meets = s.slo.met(core::Seconds(m.ttft.p99), core::Seconds(m.tpot.p99));
    fmt::print(
        "\nSLO         TTFT <= {} ms, TPOT <= {} ms: {:.1f}% of requests meet it, goodput {:.2f} req/s; p99 {}\n",
        s.slo.ttft.value() > 0 ? ms(s.slo.ttft.value()) : "-", s.slo.tpot.value() > 0 ? ms(s.slo.tpot.value()) : "-",
        100 * m.slo_attainment, m.goodput_requests_per_s.value(), meets ? "MEETS the SLO" : "MISSES the SLO");
  }
  fmt::print(
      "\nengine      batch mean {:.1f} | KV usage mean {:.0f}% max {:.0f}% | queue mean {:.1f} max {:.0f} | "
      "preemptions {} | {} iterations\n",
      m.batch_mean, 100 * m.kv_usage_mean, 100 * m.kv_usage_max, m.queue_mean, m.queue_max, r.preemptions,
      r.iterations.size());
  if (d.kv_offload.tier != serving::KvTier::None) {
    fmt::print(
        "KV offload  {}: {:.0f} GB per replica at {:.0f} GB/s per GPU; {} of the {} preemptions moved there and back\n",
        offload_tier_name(d.kv_offload), d.kv_offload.capacity.value() / 1e9, d.kv_offload.bandwidth.value() / 1e9,
        r.offloads, r.preemptions);
  }
  if (r.rejected > 0) fmt::print("            {} requests rejected: larger than the whole KV cache\n", r.rejected);
  const auto& p = r.time_by_part;
  const double tot = p.total().value() > 0 ? p.total().value() : 1.0;
  auto pct = [&](core::Seconds part) { return 100 * part.value() / tot; };
  fmt::print(
      "GPU time    linear {:.0f}% | experts {:.0f}% | attention {:.0f}% | other {:.0f}% | TP comm {:.0f}% | EP comm "
      "{:.0f}% | PP {:.0f}% | overhead {:.0f}%{}\n",
      pct(p.linear), pct(p.experts), pct(p.attention), pct(p.other), pct(p.tp_comm), pct(p.ep_comm), pct(p.pp_comm),
      pct(p.overhead), p.draft.value() > 0 ? fmt::format(" | drafting {:.0f}%", pct(p.draft)) : "");
  if (s.price_per_gpu_hour > 0) {
    fmt::print(
        "cost        ${:.3f} per million output tokens, ${:.3f} per million total tokens (at ${:.2f} per GPU-hour, "
        "{})\n",
        m.cost_per_million_output_tokens, m.cost_per_million_total_tokens, s.price_per_gpu_hour, d.cluster.system.name);
  }
  fmt::print("\n{:>10}{:>8}{:>10}{:>8}{:>8}   over time (10 samples)\n", "time s", "batch", "tokens", "KV %", "queue");
  for (const auto& it : downsample(r.iterations, 10)) {
    fmt::print("{:>10.2f}{:>8}{:>10}{:>8.0f}{:>8}\n", it.time.value(), it.running, it.tokens, 100 * it.kv_usage,
               it.waiting);
  }
}

std::string metrics_text(const jobspec::ServingSetup& s, const serving::ServeResult& r,
                         const serving::ServeSummary& m) {
  using observability::counter;
  using observability::gauge;
  const std::vector<std::pair<std::string, std::string>> labels{{"model_name", s.deployment.model.name}};
  double prompt = 0, gen = 0;
  std::vector<double> ttft, e2e;
  for (const auto& q : r.requests) {
    if (!q.completed()) continue;
    if (q.sample == 0) prompt += static_cast<double>(q.input_tokens);
    gen += static_cast<double>(q.output_tokens);
    ttft.push_back(q.ttft().value());
    e2e.push_back(q.e2e().value());
  }
  std::vector<observability::Metric> g{
      gauge("vllm:num_requests_running", "Requests in the running batch (time-weighted mean)", m.batch_mean, labels),
      gauge("vllm:num_requests_waiting", "Requests waiting to be admitted (time-weighted mean)", m.queue_mean, labels),
      // KV-cache usage under vLLM's name since 0.10 (V1) and its older one, as --metrics-out writes them.
      gauge("vllm:kv_cache_usage_perc", "KV-cache usage, 1 = full (time-weighted mean)", m.kv_usage_mean, labels),
      gauge("vllm:gpu_cache_usage_perc", "KV-cache usage, 1 = full (time-weighted mean; the name before vLLM 0.10)",
            m.kv_usage_mean, labels),
      counter("vllm:num_preemptions_total", "Cumulative preemptions", r.preemptions, labels),
      counter("vllm:prompt_tokens_total", "Prefill tokens processed", prompt, labels),
      counter("vllm:generation_tokens_total", "Generation tokens processed", gen, labels),
      counter("vllm:request_success_total", "Requests finished", m.completed, labels)};
  const auto& ttft_b = serving::kVllmTtftBuckets;
  const auto& tpot_b = serving::kVllmTpotBuckets;
  const auto& e2e_b = serving::kVllmE2eBuckets;
  auto hist = [&](std::string name, std::string help, const std::vector<double>& v, const std::vector<double>& b) {
    double sum = 0;
    for (double x : v) sum += x;
    return observability::Histogram{std::move(name),
                                    std::move(help),
                                    labels,
                                    b,
                                    observability::cumulative_counts(v, b),
                                    sum,
                                    static_cast<double>(v.size())};
  };
  // Inter-token latency under vLLM's name since 0.10 and, identical, under its older name (as
  // --metrics-out writes them; the serving dashboard's TPOT panels query either).
  observability::Histogram itl{"vllm:inter_token_latency_seconds",
                               "Inter-token latency, one observation per decoded token",
                               labels,
                               tpot_b,
                               {},
                               r.itl.sum(),
                               r.itl.count()};
  for (double b : tpot_b) itl.cumulative.push_back(r.itl.count_below(b));
  observability::Histogram tpot = itl;
  tpot.name = "vllm:time_per_output_token_seconds";
  tpot.help = "Time per output token (the name of vllm:inter_token_latency_seconds before vLLM 0.10)";
  return observability::to_prometheus_text(g) +
         observability::to_prometheus_histograms(
             {hist("vllm:time_to_first_token_seconds", "Time to first token (queueing included)", ttft, ttft_b), itl,
              tpot, hist("vllm:e2e_request_latency_seconds", "End-to-end request latency", e2e, e2e_b)});
}

/// The replicas serve simulates. --cluster SYSTEM:COUNT (or a cluster file) names the fleet: without
/// --replicas or --disagg, as many replicas as its GPUs hold; with --replicas, they must fit in it.
/// A bare SYSTEM keeps one replica (or --replicas of them) on as many units as that needs.
int fleet_replicas(const ServeOptions& o, const serving::Deployment& d, const CLI::App& cmd) {
  const bool counted = o.flags.cluster.find(':') != std::string::npos || o.flags.cluster.ends_with(".yaml") ||
                       o.flags.cluster.ends_with(".yml");
  if (!counted) return o.flags.replicas;
  const int per = d.gpus();
  const int held = d.cluster.gpus();
  if (per > held)
    throw core::InputError::flag("--cluster", fmt::format("{} holds {} GPUs; one replica (tp{} pp{}) needs {}",
                                                          o.flags.cluster, held, d.tp, d.pp, per));
  if (cmd.count("--replicas") > 0 || !o.fleet.disagg.empty()) {
    if (static_cast<long long>(o.flags.replicas) * per > held)
      throw core::InputError::flag(
          "--replicas", fmt::format("{} replicas of {} GPUs need {}; --cluster {} holds {}", o.flags.replicas, per,
                                    static_cast<long long>(o.flags.replicas) * per, o.flags.cluster, held));
    return o.flags.replicas;
  }
  const int replicas = held / per;
  if (replicas > jobspec::kMaxReplicas)
    throw core::InputError::flag(
        "--cluster", fmt::format("{} holds {} replicas of {} GPUs; at most {} are simulated (give --replicas)",
                                 o.flags.cluster, replicas, per, jobspec::kMaxReplicas));
  return replicas;
}

}  // namespace

void add_serve_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand(
      "serve", "Simulate an inference engine serving a workload: throughput, TTFT/TPOT/ITL, SLO, cost");
  cmd->footer(
      "One replica (tp x pp GPUs) runs the engine's scheduler iteration by iteration: continuous batching,\n"
      "chunked prefill with a token budget, a paged KV cache sized from the memory left after weights,\n"
      "admission, preemption and prefix caching. Each iteration's time comes from FLOPs, bytes and the\n"
      "collectives model (docs/models/serving.md). Without --rate/--concurrency/--requests all requests\n"
      "arrive at once (offline, max throughput).\n\n"
      "Examples:\n"
      "  fmsim serve --model llama3.3-70b --precision fp8 --cluster p5en.48xlarge --tp 2 --engine trtllm \\\n"
      "              --isl 1024 --osl 1024 --rate 20 --slo-ttft 2s --slo-tpot 50ms\n"
      "  fmsim serve --model llama3.3-70b --precision fp8 --cluster p5.48xlarge --tp 2 --engine trtllm \\\n"
      "              --isl 5000 --osl 500 --concurrency 100 --num-requests 400\n"
      "  fmsim serve --model deepseek-v3 --precision fp4 --cluster p6-b200.48xlarge --tp 8 --ep 8 --dep \\\n"
      "              --engine trtllm --osl 4000 --osl-dist lognormal --osl-spread 1 --samples 4 --json\n"
      "  fmsim serve --job examples/serve_job.yaml --trace-out serve.json --metrics serve.prom");
  add_serving_flags(*cmd, opts->flags);
  cmd->add_flag("--json", opts->json, "Machine-readable output (with a time series of batch, tokens, KV usage, queue)");
  cmd->add_option("--trace-out,--trace", opts->trace,
                  "Write a Chrome/Perfetto trace of iterations and requests (JSON; --trace is the older name)")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_option("--metrics", opts->metrics, "Write Prometheus text with vLLM metric names")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_option("--timeseries", opts->timeseries, "Write the per-iteration time series as CSV")
      ->check(output_file())
      ->type_name("FILE");
  opts->metrics_out.resolution = "1s";  // a serving run lasts minutes
  add_metrics_flags(*cmd, opts->metrics_out);
  cmd->add_option("--cold-start", opts->cold_start,
                  "Cold start: time to load the replica's weights from this storage tier (instance-nvme, s3, "
                  "fsx-persistent2-1000, ... from the catalog) before the first token")
      ->type_name("STORAGE");
  cmd->add_option(
         "--kv-offload", opts->flags.kv_offload,
         "KV tier below HBM: host (DRAM over PCIe), grace (LPDDR5X over NVLink-C2C on GB200), nvme (local SSDs); "
         "when KV runs out, sequences move there and back instead of being recomputed")
      ->type_name("TIER");
  cmd->add_option(
         "--router", opts->fleet.router,
         "Fleet router with --replicas: round-robin, least-outstanding (join the shortest queue), prefix-aware "
         "(a prefix group's replica unless overloaded)")
      ->capture_default_str();
  cmd->add_option(
         "--disagg", opts->fleet.disagg,
         "Disaggregated prefill/decode: P:D instances of the replica layout (e.g. 1:3), simulated as two pools")
      ->type_name("P:D");
  cmd->add_option("--kv-transfer", opts->fleet.kv_transfer,
                  "Disaggregated KV transfer: layer (streamed behind the prefill) or request (whole, after it)")
      ->capture_default_str();
  cmd->callback([opts, &ctx, cmd]() {
    // The job file's values go into the flags' own variables (opts), so read them after it.
    apply_serving_job_file(opts->flags, *cmd);
    ServeOptions o = *opts;
    jobspec::ServingSetup s = jobspec::make_serving_setup(o.flags, ctx.catalog());
    const serving::IterationModel model(s.deployment, collectives::make_comm_cost(s.deployment.cluster));
    const auto requests = serving::make_requests(s.workload);
    jobspec::check_output_tokens(requests, !o.flags.requests_file.empty());
    jobspec::check_requests_fit(requests, model, !o.flags.requests_file.empty());
    engine::TraceBuffer buffer;
    const Topology topo = jobspec::resolve_serve_fleet(o.fleet, fleet_replicas(o, s.deployment, *cmd), s.deployment);
    std::optional<jobspec::ColdStart> cold;
    if (!o.cold_start.empty()) cold = jobspec::estimate_cold_start(o.cold_start, s.deployment, ctx.catalog());
    engine::TraceSink* sink = o.trace.empty() ? nullptr : &buffer;
    const auto r =
        topo.prefill > 0     ? serving::simulate_disaggregated(model, model, topo.dis, s.workload, requests, sink)
        : topo.instances > 1 ? serving::simulate_fleet(model, s.workload, requests, topo.instances, topo.router, sink)
                             : serving::simulate(model, s.workload, requests, sink);
    const auto m = serving::summarize(r, s.slo, s.price_per_gpu_hour);
    if (!o.trace.empty()) {
      observability::TraceMetadata meta;
      meta.other_data = {{"model", s.deployment.model.name},
                         {"system", s.deployment.cluster.system.name},
                         {"engine", s.deployment.engine.name},
                         {"workload", serving::describe(s.workload)}};
      write_file_atomically(o.trace, observability::to_chrome_trace_json(buffer.events(), meta), "--trace-out");
    }
    if (!o.metrics.empty()) write_file_atomically(o.metrics, metrics_text(s, r, m), "--metrics");
    std::optional<nlohmann::json> series;
    if (!o.metrics_out.out.empty()) {
      const auto options =
          resolve_metrics_options(o.metrics_out, s.deployment.model.name + "-" + s.deployment.engine.name);
      series = write_metrics_file(o.metrics_out, "serve.om", [&](observability::MetricsOutput& w) {
        return telemetry::write_serving_metrics(r, s.deployment.model.name, options, w);
      });
      (*series)["job"] = options.job;
    }
    if (!o.timeseries.empty()) {
      std::string csv = "time_s,iteration_s,batch,decode_seqs,prefill_tokens,tokens,waiting,kv_usage,preemptions\n";
      for (const auto& it : r.iterations) {
        csv += fmt::format("{:.6f},{:.6f},{},{},{},{},{},{:.4f},{}\n", it.time.value(), it.duration.value(), it.running,
                           it.decode_seqs, it.prefill_tokens, it.tokens, it.waiting, it.kv_usage, it.preemptions);
      }
      write_file_atomically(o.timeseries, csv, "--timeseries");
    }
    if (o.json) {
      auto j = serve_json(s, r, m, topo);
      if (cold) {
        j["cold_start"] = {{"storage", cold->tier},
                           {"weights_bytes", cold->bytes},
                           {"load_s", cold->seconds},
                           {"bottleneck", cold->bottleneck},
                           {"first_token_after_s", cold->seconds + m.ttft.mean}};
      }
      if (series) j["metrics"] = *series;
      std::cout << j.dump(2) << "\n";
    } else {
      print(s, r, m, topo);
      if (cold) {
        fmt::print(
            "cold start  weights {:.1f} GB per replica from {}: {:.1f} s (bottleneck: {}) before the first token; the "
            "first\n"
            "            request's first token at {:.1f} s\n",
            cold->bytes / 1e9, cold->tier, cold->seconds, cold->bottleneck, cold->seconds + m.ttft.mean);
      }
      if (series) std::cout << metrics_line(*series);
    }
  });
}

}  // namespace fmsim::cli
