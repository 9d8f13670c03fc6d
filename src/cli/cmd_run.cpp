// fmsim run: one run-level prediction for a training job on a cluster with storage over a
// duration: the step, the checkpoint, the checkpoint interval, failures, ETTR (analytic and Monte
// Carlo), tokens trained, lost GPU-hours and their cost.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/reliability_report.hpp"
#include "cli/train_report.hpp"
#include "cli/training_job_flags.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "planner/planner.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
#include "storage/checkpoint_io.hpp"
#include "storage/data_loading.hpp"
#include "storage/data_repository.hpp"
#include "telemetry/training_metrics.hpp"
#include "training/step_model.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct RunFlags {
  jobspec::TrainingJobFlags train;
  jobspec::CheckpointJobFlags checkpoint;
  jobspec::GoodputFlags goodput;
  std::string s3;  ///< S3 storage linked to an FSx tier (export check)
  bool analytical = false;
  bool json = false;
  MetricsFlags metrics;
};

// The checkpoint of the training job: each GPU it uses is a rank, on whole nodes of the system;
// the model is split over tp x pp ranks and replicated over the rest (data and context parallel).
// The tier is --storage, else the cluster's attached storage, else S3.
jobspec::CheckpointJob checkpoint_job_of(const training::TrainingJob& tj, const jobspec::CheckpointJobFlags& flags,
                                         Context& ctx) {
  jobspec::CheckpointJob job;
  job.model = tj.model.name;
  job.cluster = tj.cluster;
  const auto& l = tj.layout;
  const int ranks = tj.job_gpus();
  const int per_node = std::max(1, tj.cluster.gpus_per_node());
  job.layout = storage::CheckpointLayout{.ranks = ranks,
                                         .nodes = (ranks + per_node - 1) / per_node,
                                         .data_parallel = ranks / (l.tp * l.pp),
                                         .tensor_parallel = l.tp,
                                         .sharding = l.sharding};
  jobspec::CheckpointJobFlags f = flags;
  if (f.storage.empty() && f.tier_bandwidth.empty() && job.cluster.storage.empty()) f.storage = "s3";
  jobspec::resolve_checkpoint_storage(job, static_cast<double>(workload::count_parameters(tj.model).total), f,
                                      ctx.catalog());
  return job;
}

// The nodes' instance store as the metrics show it: it holds the checkpoints when it is the tier.
telemetry::LocalDisk local_disk_of(const hardware::ClusterSpec& cluster, const jobspec::CheckpointJob& cj) {
  const auto& sys = cluster.system;
  const bool on_disk = cj.tier.kind == hardware::StorageKind::InstanceNvme;
  return {.capacity_bytes = sys.local_nvme_devices * sys.local_nvme_device_size.value(),
          .write_bytes_per_s = on_disk && cj.tier.per_node_write.value() > 0.0 ? cj.tier.per_node_write.value()
                                                                               : sys.local_nvme_write.value(),
          .read_bytes_per_s = on_disk && cj.tier.per_node_read.value() > 0.0 ? cj.tier.per_node_read.value()
                                                                             : sys.local_nvme_read.value(),
          .holds_checkpoints = on_disk,
          .keep = cj.keep};
}

// What one goodput result means for this run.
struct RunOutcome {
  double tokens = 0.0;        ///< trained in the run: useful seconds x tokens/s of the job
  double tokens_per_s = 0.0;  ///< tokens / duration
  double steps = 0.0;
  double lost_gpu_hours = 0.0;  ///< checkpoint + restart + lost work + waiting
  double lost_usd = 0.0;        ///< NaN when the system has no price
};

RunOutcome outcome_of(const reliability::GoodputResult& r, const training::StepResult& step,
                      const reliability::GoodputScenario& s, double price_per_gpu_hour) {
  RunOutcome o;
  o.tokens = r.time.useful * step.tokens_per_s_per_gpu * s.gpus;
  o.tokens_per_s = o.tokens / s.horizon.value();
  o.steps = step.step_time.value() > 0.0 ? r.time.useful / step.step_time.value() : 0.0;
  const double lost_seconds = r.time.total() - r.time.useful;
  o.lost_gpu_hours = lost_seconds * s.gpus / 3600.0;
  o.lost_usd = price_per_gpu_hour > 0.0 ? planner::cost_usd(lost_seconds, s.gpus, price_per_gpu_hour) : kNaN;
  return o;
}

nlohmann::json outcome_json(const RunOutcome& o) {
  return {{"tokens", o.tokens},
          {"tokens_per_s", o.tokens_per_s},
          {"steps", o.steps},
          {"lost_gpu_hours", o.lost_gpu_hours},
          {"lost_usd", std::isfinite(o.lost_usd) ? nlohmann::json(o.lost_usd) : nlohmann::json()}};
}

void run_job(const RunFlags& f, const CLI::App& cmd, Context& ctx) {
  const PredictedJob predicted = predict_training_job(f.train, cmd, ctx, f.analytical);
  const training::TrainingJob& job = predicted.setup.job;
  const training::StepResult& step = predicted.step;

  const jobspec::CheckpointJob cj = checkpoint_job_of(job, f.checkpoint, ctx);
  const jobspec::GoodputSetup setup = jobspec::resolve_goodput_setup(f.goodput, cj, step.step_time);
  FMSIM_CHECK(setup.estimate.has_value(), "run: the checkpoint of a training job is always modelled");
  const auto& e = *setup.estimate;
  const auto& s = setup.scenario;
  const int gpus = s.gpus;
  const int nodes = cj.layout.nodes;

  const auto analytic = reliability::analytic_goodput(s);
  std::optional<reliability::GoodputResult> mc;
  if (setup.monte_carlo.replications > 0) mc = reliability::simulate_goodput(s, setup.monte_carlo);

  const auto& system = job.cluster.system;
  const double price_per_gpu_hour =
      system.price_per_hour_usd > 0.0 && system.gpus() > 0 ? system.price_per_hour_usd / system.gpus() : 0.0;
  const RunOutcome a = outcome_of(analytic, step, s, price_per_gpu_hour);
  const std::optional<RunOutcome> m =
      mc ? std::optional<RunOutcome>(outcome_of(*mc, step, s, price_per_gpu_hour)) : std::nullopt;
  const double run_usd = system.price_per_hour_usd > 0.0
                             ? planner::cost_usd(s.horizon.value(), job.cluster.count, system.price_per_hour_usd)
                             : kNaN;

  // Input pipeline from the same tier (not from host memory), and the DRA export when asked.
  std::optional<ReportPart> loading;
  if (cj.tier.kind != hardware::StorageKind::HostMemory) {
    const storage::DataLoadingDemand demand{.tokens_per_s = step.tokens_per_s_per_gpu * gpus,
                                            .bytes_per_token = storage::token_id_bytes(job.model.vocab),
                                            .nodes = nodes};
    loading = data_loading_report(storage::check_data_loading(demand, cj.tier));
  }
  std::optional<ReportPart> dra_export;
  if (!f.s3.empty()) {
    const auto s3 = resolve_dra_s3(cj, f.checkpoint, f.s3, "--s3", ctx);
    dra_export = export_report(storage::estimate_export(e.plan.total, e.save.total, s.checkpoint.interval, cj.tier, s3),
                               s3.name);
  }

  std::optional<nlohmann::json> metrics;
  if (!f.metrics.out.empty()) {
    telemetry::TrainingRun run{.job = job,
                               .step = step,
                               .checkpoint_bytes = e.plan.total.value(),
                               .checkpoint_load_bytes = e.plan.load_total.value(),
                               .bytes_per_token = storage::token_id_bytes(job.model.vocab),
                               .scenario = s,
                               .timeline = reliability::simulate_timeline(s, setup.monte_carlo.seed),
                               .local_disk = local_disk_of(job.cluster, cj)};
    const auto options = resolve_metrics_options(f.metrics, job.model.name + "-" + system.name);
    metrics = write_metrics_file(f.metrics, "run.om", [&](observability::MetricsOutput& w) {
      return telemetry::write_training_metrics(run, options, w);
    });
    (*metrics)["job"] = options.job;
    (*metrics)["seed"] = setup.monte_carlo.seed;
  }

  if (f.json) {
    nlohmann::json out = goodput_setup_json(setup, nodes);
    if (metrics) out["metrics"] = *metrics;
    out["model"] = job.model.name;
    out["system"] = system.name;
    out["layout"] = layout_json(job, step);
    out["step"] = {{"step_time_s", step.step_time.value()},
                   {"tokens_per_s_per_gpu", step.tokens_per_s_per_gpu},
                   {"model_tflops_per_gpu", step.model_tflops_per_gpu},
                   {"mfu", step.mfu},
                   {"memory_bytes", step.memory.total().value()},
                   {"memory_capacity_bytes", step.memory_capacity.value()},
                   {"fits_memory", step.fits_memory}};
    auto& c = out["checkpoint"];
    c["tier"] = cj.tier.name;
    c["tier_kind"] = storage::to_string(cj.tier.kind);
    c["keep"] = cj.keep;
    c["retained_bytes"] = e.retained.value();
    c["capacity_bytes"] = cj.tier.capacity.value();
    c["fits"] = e.fits;
    out["analytic"] = goodput_result_json(analytic, gpus);
    out["analytic"].update(outcome_json(a));
    if (mc) {
      out["monte_carlo"] = goodput_result_json(*mc, gpus);
      out["monte_carlo"].update(outcome_json(*m));
      out["monte_carlo"]["seed"] = setup.monte_carlo.seed;
    }
    out["cost"] = std::isfinite(run_usd) ? nlohmann::json{{"price_per_unit_hour_usd", system.price_per_hour_usd},
                                                          {"price_kind", system.price_kind_name()},
                                                          {"price_date", system.price_date},
                                                          {"units", job.cluster.count},
                                                          {"run_usd", run_usd}}
                                         : nlohmann::json();
    if (loading) out["data_loading"] = loading->json;
    if (dra_export) out["export"] = dra_export->json;
    std::cout << out.dump(2) << "\n";
    return;
  }

  std::cout << fmt::format("fmsim run: {} for {}\n{}\n\n", job_line(job), core::format_duration(s.horizon),
                           layout_line(job, step));
  std::cout << fmt::format("Step: {}, {:.0f} tokens/s/GPU, MFU {:.1f}% ({}); memory {} of {} per GPU: {}\n",
                           core::format_duration(step.step_time), step.tokens_per_s_per_gpu, 100.0 * step.mfu,
                           core::to_string(job.layout.precision), core::format_bytes(step.memory.total()),
                           core::format_bytes(step.memory_capacity), step.fits_memory ? "fits" : "DOES NOT FIT");
  std::cout << fmt::format(
      "Storage: {} ({}), {} checkpoints = {}{}; save {} (bottleneck: {}), load {}\n", cj.tier.name,
      storage::to_string(cj.tier.kind), cj.keep, core::format_bytes(e.retained),
      cj.tier.capacity.value() > 0.0
          ? fmt::format(" of {}: {}", core::format_bytes(cj.tier.capacity), e.fits ? "fits" : "DOES NOT FIT")
          : "",
      core::format_duration(e.save.total), storage::to_string(e.save.bottleneck), core::format_duration(e.load.total));
  print_goodput_setup(setup, nodes, f.goodput.include_planned);
  if (loading) std::cout << loading->text;
  if (dra_export) std::cout << dra_export->text;
  std::cout << fmt::format("Run: {} on {} GPUs = {:.4g} GPU-hours; {} tokens without failures\n\n",
                           core::format_duration(s.horizon), gpus, s.horizon.value() * gpus / 3600.0,
                           core::format_count(step.tokens_per_s_per_gpu * gpus * s.horizon.value()));
  std::vector<GoodputRow> rows;
  auto add = [&](const char* name, auto format) { rows.push_back({name, format(a), m ? format(*m) : ""}); };
  add("tokens trained", [](const RunOutcome& o) { return core::format_count(o.tokens); });
  add("effective tokens/s", [](const RunOutcome& o) { return core::format_thousands(o.tokens_per_s); });
  add("steps", [](const RunOutcome& o) { return core::format_thousands(o.steps); });
  add("lost GPU-hours", [](const RunOutcome& o) { return fmt::format("{:.4g}", o.lost_gpu_hours); });
  if (std::isfinite(run_usd)) {
    add("cost of lost GPU-hours", [](const RunOutcome& o) { return core::format_usd(o.lost_usd); });
  }
  print_goodput_table(analytic, mc, gpus, rows);
  if (metrics) std::cout << metrics_line(*metrics);
  if (std::isfinite(run_usd)) {
    std::cout << fmt::format("Cost: {} x {} at ${:.2f}/h ({}{}) = {} for the run\n", job.cluster.count, system.name,
                             system.price_per_hour_usd, system.price_kind_name(),
                             system.price_date.empty() ? "" : ", " + system.price_date, core::format_usd(run_usd));
  }
}

}  // namespace

void add_run_command(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand(
      "run", "Predict a whole training run: step, checkpoint, interval, failures, ETTR, tokens, lost GPU-hours, cost");
  add_training_job_flags(*cmd, flags->train);
  add_checkpoint_storage_flags(*cmd, flags->checkpoint);
  add_goodput_flags(*cmd, flags->goodput);
  cmd->add_option("--s3", flags->s3,
                  "S3 storage linked to the FSx tier by a data repository association (export check)")
      ->type_name("NAME");
  cmd->add_flag("--analytical", flags->analytical, "Closed-form step schedule instead of the event simulation");
  cmd->add_flag("--json", flags->json, "Print JSON");
  add_metrics_flags(*cmd, flags->metrics);
  cmd->footer(
      "The step comes from the training model (as `fmsim train`), the checkpoint from the storage model\n"
      "(as `fmsim checkpoint`) with its ranks, nodes, tp, dp and sharding taken from the training layout\n"
      "(zero1/zero2 shard the optimizer state, zero3/fsdp everything) and the node network from the\n"
      "system; without --storage it goes to the cluster's attached storage, else S3. Failures, interval\n"
      "and ETTR are as `fmsim goodput`; --replications 0 skips the Monte Carlo simulation.\n"
      "tokens trained = duration x ETTR x tokens/s/GPU x GPUs; lost GPU-hours = checkpoint stalls +\n"
      "restart + lost work + waiting, priced at the system's price per GPU-hour; the run costs\n"
      "units x price per unit-hour x duration (as `fmsim plan`).\n"
      "--metrics-out DIR writes DIR/run.om: one Monte Carlo replication (seeded by --seed) as the\n"
      "time series dcgm-exporter, the EFA node exporter, node_exporter and the training job would\n"
      "have produced (docs/models/observability.md); `fmsim metrics load DIR` makes a Prometheus block.\n"
      "--metrics-format tsdb writes that block directly (DIR becomes a Prometheus data directory): the\n"
      "compact choice for long runs on many nodes (30 days of 2,048 nodes: 110 MiB, 2 s).\n\n"
      "Examples:\n"
      "  fmsim run --job examples/llama70b_job.yaml --storage fsx-persistent2-1000 --capacity 120TiB \\\n"
      "      --strategy async --s3 s3 --duration 30d\n"
      "  fmsim run --model llama3.1-8b --cluster p5.48xlarge:16 --tp 2 --gbs 256 --seq 8192 --duration 72h --json\n"
      "  fmsim run --model llama3.1-8b --cluster p5.48xlarge:16 --tp 2 --gbs 256 --duration 3d --metrics-out m\n"
      "  fmsim run --model llama3.1-70b --cluster p5.48xlarge:2048 --tp 8 --pp 4 --gbs 2048 --duration 30d \\\n"
      "      --metrics-out prom-data --metrics-format tsdb");
  cmd->callback([flags, &ctx, cmd] { run_job(*flags, *cmd, ctx); });
}

}  // namespace fmsim::cli
