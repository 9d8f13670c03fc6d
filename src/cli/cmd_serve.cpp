// fmsim serve: simulate an inference engine serving a workload on one replica (or a fleet of them).
// The run is jobspec/serve_run.hpp's, the report documents/serve.hpp's.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/serving_flags.hpp"
#include "core/error.hpp"
#include "documents/serve.hpp"
#include "jobspec/serve_run.hpp"
#include "telemetry/serving_metrics.hpp"

namespace fmsim::cli {
namespace {

struct ServeOptions {
  jobspec::ServingFlags flags;
  bool json = false;
  std::string trace, metrics, timeseries;
  MetricsFlags metrics_out;
  jobspec::ServeFleetFlags fleet;  ///< --router, --disagg, --kv-transfer
  std::string cold_start;          ///< --cold-start STORAGE
};

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
    const auto job = jobspec::prepare_serve(s, !o.flags.requests_file.empty());
    const auto fleet = jobspec::resolve_serve_fleet(o.fleet, fleet_replicas(o, s.deployment, *cmd), s.deployment);
    std::optional<jobspec::ColdStart> cold;
    if (!o.cold_start.empty()) cold = jobspec::estimate_cold_start(o.cold_start, s.deployment, ctx.catalog());
    const auto run = jobspec::run_serve(s, job, fleet, !o.trace.empty());
    if (!o.trace.empty()) write_file_atomically(o.trace, documents::serve_trace_json(s, run), "--trace-out");
    if (!o.metrics.empty()) write_file_atomically(o.metrics, documents::serve_prometheus_text(s, run), "--metrics");
    std::optional<nlohmann::json> series;
    if (!o.metrics_out.out.empty()) {
      const auto options =
          resolve_metrics_options(o.metrics_out, s.deployment.model.name + "-" + s.deployment.engine.name);
      series = write_metrics_file(o.metrics_out, "serve.om", [&](observability::MetricsOutput& w) {
        return telemetry::write_serving_metrics(run.result, s.deployment.model.name, options, w);
      });
      (*series)["job"] = options.job;
    }
    if (!o.timeseries.empty())
      write_file_atomically(o.timeseries, documents::serve_timeseries_csv(run), "--timeseries");
    if (o.json) {
      auto j = documents::serve_json(s, run, fleet, cold);
      if (series) j["metrics"] = *series;
      std::cout << j.dump(2) << "\n";
    } else {
      documents::print_serve(std::cout, s, run, fleet, cold);
      if (series) std::cout << metrics_line(*series);
    }
  });
}

}  // namespace fmsim::cli
