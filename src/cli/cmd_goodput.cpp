// fmsim goodput: effective training time ratio, goodput and lost GPU-hours of a run under
// failures, by the analytic model and by Monte Carlo simulation of the whole run.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "parallelism/layout.hpp"
#include "training/comm_adapter.hpp"
#include "training/step_model.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "reliability/checkpoint_interval.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
#include "storage/checkpoint_io.hpp"

namespace fmsim::cli {

namespace {

struct GoodputFlags {
  config::CheckpointJobFlags job;
  std::string failures = "llama3-405b";
  std::string failure_file;
  std::string mtbf;
  std::string node_failure_rate;
  bool include_planned = false;
  std::string strategy = "sync";
  std::string save_time, copy_time, load_time, peer_load_time;
  int replicas = 2;
  std::string interval;
  std::string detect, replace, restart, repair;
  int spares = -1;
  std::string duration = "30d";
  std::string step_time;
  long long gbs = 0;             ///< with --model and --cluster: predict the step time
  long long seq = 8192;
  std::string precision = "bf16";
  int replications = 1000;
  std::uint64_t seed = 20240723;
  int threads = 2;
  double weibull_shape = 1.0;
  bool json = false;
};

core::Seconds duration_or(const std::string& text, const char* flag, core::Seconds fallback) {
  return text.empty() ? fallback : config::parse_duration_flag(text, flag);
}

nlohmann::json split_json(const reliability::TimeSplit& t, int gpus) {
  const double k = gpus / 3600.0;
  return {{"useful_gpu_hours", t.useful * k},       {"checkpoint_gpu_hours", t.checkpoint * k},
          {"restart_gpu_hours", t.restart * k},     {"lost_work_gpu_hours", t.lost_work * k},
          {"waiting_gpu_hours", t.waiting * k}};
}

void run_goodput(const GoodputFlags& f, Context& ctx) {
  const config::CheckpointJob job = config::resolve_checkpoint_job(f.job, ctx.catalog());
  const config::FailureData data = config::load_failure_data(f.failure_file, "--failure-file");
  reliability::FailureModel model = config::find_failure_model(data, f.failures, "--failures");
  if (!f.node_failure_rate.empty()) {
    model = model.with_unexpected_rate(config::parse_node_failure_rate(data, f.node_failure_rate, "--node-failure-rate"));
  }
  const int nodes = job.layout.nodes;
  const int gpus = job.layout.ranks;
  reliability::GoodputScenario s;
  s.failures = reliability::job_failure_process(model, nodes, f.include_planned);
  if (!f.mtbf.empty()) {
    const auto mtbf = config::parse_duration_flag(f.mtbf, "--mtbf");
    if (mtbf.value() <= 0.0) throw core::InputError::flag("--mtbf", "must be greater than zero");
    s.failures.rate_per_second = 1.0 / mtbf.value();
  }
  s.gpus = gpus;
  s.horizon = config::parse_duration_flag(f.duration, "--duration");
  if (s.horizon.value() <= 0.0) throw core::InputError::flag("--duration", "must be greater than zero");
  s.step_time = duration_or(f.step_time, "--step-time", core::Seconds(0.0));
  // Without --step-time, the training simulator predicts it from the job (model, cluster, tp/pp, gbs).
  std::string step_note;
  if (s.step_time.value() <= 0.0 && f.gbs > 0) {
    if (f.job.model.empty() || f.job.cluster.empty()) {
      throw core::InputError::flag("--gbs", "predicting the step time needs --model and --cluster too");
    }
    training::TrainingJob tj;
    tj.model = config::load_model(f.job.model);
    tj.cluster = job.cluster;
    tj.seq_len = f.seq;
    auto& l = tj.layout;
    l.tp = f.job.tp;
    l.pp = f.job.pp;
    l.global_batch = f.gbs;
    const auto prec = core::parse_precision(f.precision);
    if (!prec) throw core::InputError::flag("--precision", "'" + f.precision + "' is not one of bf16, fp16, fp8, fp4");
    l.precision = *prec;
    l.sequence_parallel = l.tp > 1;
    l = parallelism::with_dp(l, tj.job_gpus());
    if (auto why = parallelism::why_invalid(tj.model, l, tj.job_gpus(), tj.seq_len)) throw core::InputError::flag("--gbs", *why);
    const auto r = training::estimate_step(tj, config::load_training_calibration(), training::make_comm_cost(tj.cluster));
    s.step_time = r.step_time;
    step_note = fmt::format("Step: {} predicted by the training model (tp{} pp{} dp{}, gbs {}, seq {}, {}; {:.0f} tokens/s/GPU)\n",
                            core::format_duration(r.step_time), l.tp, l.pp, l.dp, l.global_batch, tj.seq_len,
                            core::to_string(l.precision), r.tokens_per_s_per_gpu);
  }
  s.weibull_shape = f.weibull_shape;
  if (s.weibull_shape <= 0.0) throw core::InputError::flag("--weibull-shape", "must be greater than zero");

  // Recovery path.
  s.recovery = data.recovery;
  s.recovery.detect = duration_or(f.detect, "--detect", s.recovery.detect);
  s.recovery.replace = duration_or(f.replace, "--replace", s.recovery.replace);
  s.recovery.restart = duration_or(f.restart, "--restart", s.recovery.restart);
  s.recovery.repair = duration_or(f.repair, "--repair", s.recovery.repair);
  if (f.spares < -1) throw core::InputError::flag("--spares", "must be -1 (unlimited) or more");
  s.recovery.spares = f.spares;

  // Checkpoint timing: from the storage model when the job's checkpoint is described, else flags.
  const auto strategy = config::parse_strategy(f.strategy, "--strategy");
  using reliability::CheckpointStrategy;
  reliability::CheckpointTiming& t = s.checkpoint;
  if (f.replicas < 1) throw core::InputError::flag("--replicas", "must be 1 or more");
  nlohmann::json io;
  if (job.has_contents && job.has_tier) {
    const auto e = storage::estimate_checkpoint(job.contents, job.layout, job.tier, job.engine, job.node_network, job.keep);
    const auto from_peer = storage::peer_transfer_time(e.plan.max_node_load, 1, job.node_network) + e.load.device_copy;
    io = {{"size_bytes", e.plan.total.value()}, {"save_s", e.save.total.value()},
          {"save_bottleneck", storage::to_string(e.save.bottleneck)}, {"load_s", e.load.total.value()},
          {"copy_s", e.save.device_copy.value()}};
    switch (strategy) {
      case CheckpointStrategy::SyncDisk:
        t = {.interval = {}, .blocking = e.save.total, .persist = e.save.total, .load = e.load.total};
        break;
      case CheckpointStrategy::AsyncDisk:
      case CheckpointStrategy::PeerReplica:
        t = {.interval = {}, .blocking = e.save.device_copy, .persist = e.save.total, .load = e.load.total};
        s.peer_recovery = strategy == CheckpointStrategy::PeerReplica;
        s.peer_load = from_peer;
        break;
      case CheckpointStrategy::InMemory:
        t = {.interval = {},
             .blocking = e.save.device_copy,
             .persist = e.save.device_copy + storage::peer_transfer_time(e.plan.max_node_bytes, f.replicas - 1, job.node_network),
             .load = from_peer};
        break;
    }
  } else if (f.save_time.empty()) {
    throw core::InputError::flag("--save-time",
                                 "give --save-time (and --load-time), or --model/--params with --storage to model it");
  }
  if (!f.save_time.empty()) {
    const auto save = config::parse_duration_flag(f.save_time, "--save-time");
    const bool background = strategy != CheckpointStrategy::SyncDisk;
    t.persist = save;
    t.blocking = background ? duration_or(f.copy_time, "--copy-time", core::Seconds(0.0)) : save;
    t.load = duration_or(f.load_time, "--load-time", save);
  } else {
    t.load = duration_or(f.load_time, "--load-time", t.load);
    t.blocking = duration_or(f.copy_time, "--copy-time", t.blocking);
  }
  if (t.persist < t.blocking) t.persist = t.blocking;
  s.peer_recovery = strategy == CheckpointStrategy::PeerReplica;
  s.peer_load = duration_or(f.peer_load_time, "--peer-load-time", s.peer_load);

  const core::Seconds mtbf = s.failures.mtbf();
  const auto young = reliability::young_interval(t.blocking, mtbf);
  const auto daly = reliability::daly_interval(t.blocking, mtbf);
  t.interval = core::Seconds(1.0);
  const auto best = reliability::optimal_interval(s);
  t.interval = f.interval.empty() ? best : config::parse_duration_flag(f.interval, "--interval");
  if (t.interval.value() <= 0.0) throw core::InputError::flag("--interval", "must be greater than zero");

  const auto analytic = reliability::analytic_goodput(s);
  const auto start = std::chrono::steady_clock::now();
  const auto mc = reliability::simulate_goodput(
      s, {.replications = f.replications, .seed = f.seed, .threads = f.threads});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const double gpu_hours = s.horizon.value() * gpus / 3600.0;
  if (f.json) {
    nlohmann::json out;
    out["failure_model"] = model.name;
    out["nodes"] = nodes;
    out["gpus"] = gpus;
    out["rate_per_node_hour"] = s.failures.rate_per_second * 3600.0 / nodes;
    out["mtbf_s"] = mtbf.value();
    out["strategy"] = reliability::to_string(strategy);
    out["checkpoint"] = {{"interval_s", t.interval.value()}, {"blocking_s", t.blocking.value()},
                         {"persist_s", t.persist.value()},   {"load_s", t.load.value()},
                         {"young_interval_s", young.value()}, {"daly_interval_s", daly.value()},
                         {"optimal_interval_s", best.value()}};
    if (!io.is_null()) out["checkpoint"]["io"] = io;
    out["recovery"] = {{"detect_s", s.recovery.detect.value()}, {"replace_s", s.recovery.replace.value()},
                       {"restart_s", s.recovery.restart.value()}, {"spares", s.recovery.spares},
                       {"repair_s", s.recovery.repair.value()}, {"replacement_share", s.failures.replacement_share()}};
    out["duration_s"] = s.horizon.value();
    out["gpu_hours"] = gpu_hours;
    out["analytic"] = {{"ettr", analytic.ettr}, {"interruptions", analytic.interruptions},
                       {"split", split_json(analytic.time, gpus)}};
    out["monte_carlo"] = {{"ettr", mc.ettr},
                          {"ettr_stddev", mc.ettr_stddev},
                          {"ettr_ci95", mc.ettr_ci95},
                          {"replications", mc.replications},
                          {"seed", f.seed},
                          {"interruptions", mc.interruptions},
                          {"split", split_json(mc.time, gpus)}};
    if (s.step_time.value() > 0.0) out["monte_carlo"]["useful_steps"] = mc.time.useful / s.step_time.value();
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("Failures: {} mix{}, {:.3g} per 1000 node-days -> job MTBF {} on {} nodes ({} GPUs)\n",
                           model.name, f.include_planned ? " incl. planned" : "",
                           s.failures.rate_per_second * 3600.0 * 24.0 * 1000.0 / nodes, core::format_duration(mtbf),
                           nodes, gpus);
  std::cout << fmt::format("Checkpoint ({}): stall {}, restorable after {}, load {}{}\n", reliability::to_string(strategy),
                           core::format_duration(t.blocking), core::format_duration(t.persist),
                           core::format_duration(t.load),
                           io.is_null() ? "" : fmt::format(" ({} checkpoint)", core::format_bytes(core::Bytes(io["size_bytes"].get<double>()))));
  std::cout << fmt::format("Recovery: detect {}, replace {} ({:.0f}% of failures), restart {}, spares {}\n",
                           core::format_duration(s.recovery.detect), core::format_duration(s.recovery.replace),
                           100.0 * s.failures.replacement_share(), core::format_duration(s.recovery.restart),
                           s.recovery.spares < 0 ? std::string("unlimited") : std::to_string(s.recovery.spares));
  std::cout << fmt::format("Interval: Young {}, Daly {}, optimum {}; using {}\n", core::format_duration(young),
                           core::format_duration(daly), core::format_duration(best), core::format_duration(t.interval));
  std::cout << step_note;
  std::cout << fmt::format("Run: {} on {} GPUs = {:.4g} GPU-hours\n\n", core::format_duration(s.horizon), gpus, gpu_hours);
  std::cout << fmt::format("{:<22}{:>14}{:>26}\n", "", "analytic", fmt::format("monte carlo ({} runs)", mc.replications));
  std::cout << fmt::format("{:<22}{:>13.2f}%{:>17.2f}% +- {:.2f}%\n", "ETTR", 100.0 * analytic.ettr, 100.0 * mc.ettr,
                           100.0 * mc.ettr_ci95);
  std::cout << fmt::format("{:<22}{:>14.1f}{:>26.1f}\n", "interruptions", analytic.interruptions, mc.interruptions);
  const double k = gpus / 3600.0;
  auto row = [&](const char* name, double a, double m) {
    std::cout << fmt::format("{:<22}{:>14.4g}{:>26.4g}\n", name, a * k, m * k);
  };
  std::cout << "GPU-hours:\n";
  row("  goodput (useful)", analytic.time.useful, mc.time.useful);
  row("  checkpoint stalls", analytic.time.checkpoint, mc.time.checkpoint);
  row("  restart", analytic.time.restart, mc.time.restart);
  row("  lost work", analytic.time.lost_work, mc.time.lost_work);
  row("  waiting for nodes", analytic.time.waiting, mc.time.waiting);
  std::cout << fmt::format("\nMonte Carlo: seed {}, {} threads, {:.2f} s\n", f.seed, f.threads, wall);
}

}  // namespace

void add_goodput_command(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<GoodputFlags>();
  auto* cmd = app.add_subcommand("goodput", "ETTR, goodput and lost GPU-hours of a run under failures");
  add_checkpoint_job_flags(*cmd, flags->job);
  cmd->add_option("--failures", flags->failures, "Failure mix (default llama3-405b: Llama 3 Table 5)")
      ->type_name("NAME");
  cmd->add_option("--failure-file", flags->failure_file, "YAML adding or overriding failure models")
      ->type_name("FILE");
  cmd->add_option("--mtbf", flags->mtbf, "Job-level mean time between interruptions (overrides the rate)")
      ->type_name("DURATION");
  cmd->add_option("--node-failure-rate", flags->node_failure_rate,
                  "Unexpected failures per 1000 node-days (keeps the mix), or a published rate: meta-rsc1")
      ->type_name("RATE");
  cmd->add_flag("--include-planned", flags->include_planned, "Count planned maintenance interruptions too");
  cmd->add_option("--strategy", flags->strategy, "sync | async | in-memory | peer (default sync)");
  cmd->add_option("--save-time", flags->save_time, "Time to save one checkpoint (instead of the storage model)")
      ->type_name("DURATION");
  cmd->add_option("--copy-time", flags->copy_time, "Stall of an async/in-memory save (default 0 with --save-time)")
      ->type_name("DURATION");
  cmd->add_option("--load-time", flags->load_time, "Time to load a checkpoint (default = save time)")
      ->type_name("DURATION");
  cmd->add_option("--peer-load-time", flags->peer_load_time, "Time for a new node to pull state from a peer")
      ->type_name("DURATION");
  cmd->add_option("--replicas", flags->replicas, "Copies of an in-memory checkpoint (default 2)");
  cmd->add_option("--interval", flags->interval, "Compute time between checkpoints (default: the optimum)")
      ->type_name("DURATION");
  cmd->add_option("--detect", flags->detect, "Time to detect a failure (default 1 min)")->type_name("DURATION");
  cmd->add_option("--replace", flags->replace, "Time to swap in a spare node (default 1 min)")->type_name("DURATION");
  cmd->add_option("--restart", flags->restart, "Relaunch and re-initialise (default 3 min)")->type_name("DURATION");
  cmd->add_option("--spares", flags->spares, "Hot spare nodes (default -1: never short)");
  cmd->add_option("--repair", flags->repair, "Mean time to repair a failed node (default 48 h)")->type_name("DURATION");
  cmd->add_option("--duration", flags->duration, "Wall-clock length of the run (default 30d)")->type_name("DURATION");
  cmd->add_option("--gbs", flags->gbs, "Global batch (sequences): predict the step time with the training model")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seq", flags->seq, "Sequence length for the predicted step time")->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--precision", flags->precision, "Precision for the predicted step time (bf16, fp8, fp4)")
      ->capture_default_str();
  cmd->add_option("--step-time", flags->step_time, "Training step time (peer recovery, step counts); default: predicted with --gbs")
      ->type_name("DURATION");
  cmd->add_option("--replications", flags->replications, "Monte Carlo runs (default 1000)");
  cmd->add_option("--seed", flags->seed, "Monte Carlo seed (default 20240723)");
  cmd->add_option("--threads", flags->threads, "Monte Carlo threads (default 2)");
  cmd->add_option("--weibull-shape", flags->weibull_shape, "Shape of job-level inter-arrival times (1 = exponential)");
  cmd->add_flag("--json", flags->json, "Print JSON");
  cmd->footer(
      "Examples:\n"
      "  fmsim goodput --gpus 16384 --save-time 10s --load-time 1min --duration 54d\n"
      "  fmsim goodput --model llama3.1-405b --cluster p5.48xlarge:2048 --tp 8 --pp 16 \\\n"
      "      --storage fsx-persistent2-1000 --capacity 1PiB --strategy async --duration 90d\n"
      "  fmsim goodput --gpus 100000 --node-failure-rate meta-rsc1 --save-time 30s --duration 90d --json");
  cmd->callback([flags, &ctx] { run_goodput(*flags, ctx); });
}

}  // namespace fmsim::cli
