// `fmsim serve` as a JSON document, text, a CSV and a trace (documents/serve.hpp).
#include "documents/serve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "documents/text_table.hpp"
#include "observability/chrome_trace.hpp"

namespace fmsim::documents {
namespace {

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

nlohmann::json topology_json(const jobspec::ServeFleet& t) {
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

nlohmann::json run_json(const jobspec::ServingSetup& s, const serving::ServeResult& r, const serving::ServeSummary& m,
                        const jobspec::ServeFleet& topo) {
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

void print_run(std::ostream& out, const jobspec::ServingSetup& s, const serving::ServeResult& r,
               const serving::ServeSummary& m, const jobspec::ServeFleet& topo) {
  const int replicas = topo.instances;
  const auto& d = s.deployment;
  out << fmt::format("fmsim serve: {} on {} ({}), replica {}, {} weights, {} KV, engine {}\n", d.model.name,
                     d.cluster.system.name, d.cluster.gpu.display_name, layout_text(d), core::to_string(d.weights),
                     core::to_string(d.kv), d.engine.name);
  out << fmt::format("workload    {}\n", serving::describe(s.workload));
  if (topo.prefill > 0) {
    out << fmt::format(
        "pools       disaggregated: {} prefill + {} decode instances; KV over {} at {:.0f} GB/s per GPU, {}\n",
        topo.prefill, topo.decode, topo.link, topo.dis.link_bandwidth.value() / 1e9,
        topo.dis.transfer == serving::KvTransfer::Layer ? "streamed layer by layer"
                                                        : "whole request after its prefill");
  } else if (replicas > 1) {
    out << fmt::format("fleet       {} replicas behind a {} router\n", replicas, serving::to_string(topo.router));
  }
  const auto& mem = r.memory;
  out << fmt::format(
      "memory/GPU  weights {:.1f} GiB | activations {:.1f} GiB | graphs {:.1f} GiB | KV cache {:.1f} GiB of {:.1f} GiB "
      "usable = {:.0f}k tokens per replica\n",
      mem.weights.value() / kGiB, mem.activations.value() / kGiB, mem.graphs.value() / kGiB,
      std::max(0.0, mem.kv_cache.value()) / kGiB, mem.usable.value() / kGiB, mem.token_capacity / 1e3);
  if (!r.fits) {
    out << fmt::format("\nDOES NOT FIT: {}\n", r.reason);
    return;
  }
  out << fmt::format("\n{:<26}{:>14}{:>14}{}\n", "throughput", topo.prefill > 0 ? "per instance" : "per replica",
                     "per GPU", replicas > 1 ? fmt::format("{:>14}", "fleet") : "");
  auto row = [&](const char* name, double v) {
    out << fmt::format("  {:<24}{:>14.1f}{:>14.1f}{}\n", name, v / replicas, v / std::max(1, r.gpus),
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
    out << fmt::format(
        "  steady state: t = {:.1f}-{:.1f} s, after the first {:.0f}% of completions, to {}; halves {:.1f}% apart{}\n",
        steady.start_s, steady.end_s, 100 * serving::kSteadyWarmupFraction,
        steady.ends_at_last_arrival ? "the last arrival" : "the last 10% (drain)", 100 * steady.halves_gap,
        steady.converged ? "" : ": NOT CONVERGED, simulate more requests (--num-requests)");
    out << fmt::format("  (run) = the whole run's average, ramp-up and drain included\n");
  } else {
    out << fmt::format(
        "  no steady state: the last request arrives before the warm-up ends (two request lifetimes) or too few "
        "completed; figures are the whole run's: simulate more requests (--num-requests)\n");
  }
  out << fmt::format("  {:<24}{:>14.1f}  (1 / mean TPOT)\n", "tokens/s per user", m.tokens_per_s_per_user.value());
  out << fmt::format("\n{:<26}{:>10}{:>10}{:>10}{:>10}\n", "latency (ms)", "mean", "p50", "p90", "p99");
  for (const auto& [name, st] :
       {std::pair{"TTFT", m.ttft}, std::pair{"TPOT", m.tpot}, std::pair{"ITL", m.itl}, std::pair{"E2E", m.e2e}}) {
    out << fmt::format("  {:<24}{:>10}{:>10}{:>10}{:>10}\n", name, ms(st.mean), ms(st.p50), ms(st.p90), ms(st.p99));
  }
  out << fmt::format(
      "  TTFT = first token - arrival (queueing included); TPOT = (last - first token) / (output - 1) per request;\n"
      "  ITL = gap between consecutive tokens over all tokens; E2E = last token - arrival.\n");
  if (s.slo.any()) {
    const bool meets = s.slo.met(core::Seconds(m.ttft.p99), core::Seconds(m.tpot.p99));
    out << fmt::format(
        "\nSLO         TTFT <= {} ms, TPOT <= {} ms: {:.1f}% of requests meet it, goodput {:.2f} req/s; p99 {}\n",
        s.slo.ttft.value() > 0 ? ms(s.slo.ttft.value()) : "-", s.slo.tpot.value() > 0 ? ms(s.slo.tpot.value()) : "-",
        100 * m.slo_attainment, m.goodput_requests_per_s.value(), meets ? "MEETS the SLO" : "MISSES the SLO");
  }
  out << fmt::format(
      "\nengine      batch mean {:.1f} | KV usage mean {:.0f}% max {:.0f}% | queue mean {:.1f} max {:.0f} | "
      "preemptions {} | {} iterations\n",
      m.batch_mean, 100 * m.kv_usage_mean, 100 * m.kv_usage_max, m.queue_mean, m.queue_max, r.preemptions,
      r.iterations.size());
  if (d.kv_offload.tier != serving::KvTier::None) {
    out << fmt::format(
        "KV offload  {}: {:.0f} GB per replica at {:.0f} GB/s per GPU; {} of the {} preemptions moved there and back\n",
        offload_tier_name(d.kv_offload), d.kv_offload.capacity.value() / 1e9, d.kv_offload.bandwidth.value() / 1e9,
        r.offloads, r.preemptions);
  }
  if (r.rejected > 0)
    out << fmt::format("            {} requests rejected: larger than the whole KV cache\n", r.rejected);
  const auto& p = r.time_by_part;
  const double tot = p.total().value() > 0 ? p.total().value() : 1.0;
  auto pct = [&](core::Seconds part) { return 100 * part.value() / tot; };
  out << fmt::format(
      "GPU time    linear {:.0f}% | experts {:.0f}% | attention {:.0f}% | other {:.0f}% | TP comm {:.0f}% | EP comm "
      "{:.0f}% | PP {:.0f}% | overhead {:.0f}%{}\n",
      pct(p.linear), pct(p.experts), pct(p.attention), pct(p.other), pct(p.tp_comm), pct(p.ep_comm), pct(p.pp_comm),
      pct(p.overhead), p.draft.value() > 0 ? fmt::format(" | drafting {:.0f}%", pct(p.draft)) : "");
  if (s.price_per_gpu_hour > 0) {
    out << fmt::format(
        "cost        ${:.3f} per million output tokens, ${:.3f} per million total tokens (at ${:.2f} per GPU-hour, "
        "{})\n",
        m.cost_per_million_output_tokens, m.cost_per_million_total_tokens, s.price_per_gpu_hour, d.cluster.system.name);
  }
  out << fmt::format("\n{:>10}{:>8}{:>10}{:>8}{:>8}   over time (10 samples)\n", "time s", "batch", "tokens", "KV %",
                     "queue");
  for (const auto& it : downsample(r.iterations, 10)) {
    out << fmt::format("{:>10.2f}{:>8}{:>10}{:>8.0f}{:>8}\n", it.time.value(), it.running, it.tokens, 100 * it.kv_usage,
                       it.waiting);
  }
}

}  // namespace

nlohmann::json serve_json(const jobspec::ServingSetup& setup, const jobspec::ServeRun& run,
                          const jobspec::ServeFleet& fleet, const std::optional<jobspec::ColdStart>& cold) {
  auto j = run_json(setup, run.result, run.summary, fleet);
  if (cold) {
    j["cold_start"] = {{"storage", cold->tier},
                       {"weights_bytes", cold->bytes},
                       {"load_s", cold->seconds},
                       {"bottleneck", cold->bottleneck},
                       {"first_token_after_s", cold->seconds + run.summary.ttft.mean}};
  }
  return j;
}

void print_serve(std::ostream& out, const jobspec::ServingSetup& setup, const jobspec::ServeRun& run,
                 const jobspec::ServeFleet& fleet, const std::optional<jobspec::ColdStart>& cold) {
  print_run(out, setup, run.result, run.summary, fleet);
  if (cold) {
    out << fmt::format(
        "cold start  weights {:.1f} GB per replica from {}: {:.1f} s (bottleneck: {}) before the first token; the "
        "first\n"
        "            request's first token at {:.1f} s\n",
        cold->bytes / 1e9, cold->tier, cold->seconds, cold->bottleneck, cold->seconds + run.summary.ttft.mean);
  }
}

std::string serve_timeseries_csv(const jobspec::ServeRun& run) {
  std::string csv = "time_s,iteration_s,batch,decode_seqs,prefill_tokens,tokens,waiting,kv_usage,preemptions\n";
  for (const auto& it : run.result.iterations) {
    csv += fmt::format("{:.6f},{:.6f},{},{},{},{},{},{:.4f},{}\n", it.time.value(), it.duration.value(), it.running,
                       it.decode_seqs, it.prefill_tokens, it.tokens, it.waiting, it.kv_usage, it.preemptions);
  }
  return csv;
}

std::string serve_trace_json(const jobspec::ServingSetup& setup, const jobspec::ServeRun& run) {
  observability::TraceMetadata meta;
  meta.other_data = {{"model", setup.deployment.model.name},
                     {"system", setup.deployment.cluster.system.name},
                     {"engine", setup.deployment.engine.name},
                     {"workload", serving::describe(setup.workload)}};
  return observability::to_chrome_trace_json(run.events, meta);
}

}  // namespace fmsim::documents
