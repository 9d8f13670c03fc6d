// fmsim goodput: effective training time ratio, goodput and lost GPU-hours of a run under
// failures, by the analytic model and by Monte Carlo simulation of the whole run.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/reliability_report.hpp"
#include "cli/training_job_flags.hpp"
#include "collectives/comm_cost.hpp"
#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {

/// The failure, strategy, recovery, duration and Monte Carlo flags; shared with `fmsim run`.
void add_goodput_flags(CLI::App& cmd, jobspec::GoodputFlags& f) {
  cmd.add_option("--failures", f.failures, "Failure mix (default llama3-405b: Llama 3 Table 5)")->type_name("NAME");
  cmd.add_option("--failure-file", f.failure_file, "YAML adding or overriding failure models")->type_name("FILE");
  cmd.add_option("--mtbf", f.mtbf, "Job-level mean time between interruptions (overrides the rate)")
      ->type_name("DURATION");
  cmd.add_option("--node-failure-rate", f.node_failure_rate,
                 "Unexpected failures per 1000 node-days (keeps the mix), or a published rate: meta-rsc1")
      ->type_name("RATE");
  cmd.add_flag("--include-planned", f.include_planned, "Count planned maintenance interruptions too");
  cmd.add_option("--strategy", f.strategy, "sync | async | in-memory | peer (default sync, async with --async)");
  cmd.add_option("--save-time", f.save_time, "Time to save one checkpoint (instead of the storage model)")
      ->type_name("DURATION");
  cmd.add_option("--copy-time", f.copy_time, "Stall of an async/in-memory save (default 0 with --save-time)")
      ->type_name("DURATION");
  cmd.add_option("--load-time", f.load_time, "Time to load a checkpoint (default = save time)")->type_name("DURATION");
  cmd.add_option("--peer-load-time", f.peer_load_time, "Time for a new node to pull state from a peer")
      ->type_name("DURATION");
  cmd.add_option("--replicas", f.replicas, "Copies of an in-memory checkpoint (default 2)");
  cmd.add_option("--interval", f.interval, "Compute time between checkpoints (default: the optimum)")
      ->type_name("DURATION");
  cmd.add_option("--detect", f.detect, "Time to detect a failure (default 1 min)")->type_name("DURATION");
  cmd.add_option("--replace", f.replace, "Time to swap in a spare node (default 1 min)")->type_name("DURATION");
  cmd.add_option("--restart", f.restart, "Relaunch and re-initialise (default 3 min)")->type_name("DURATION");
  cmd.add_option("--spares", f.spares, "Hot spare nodes (default -1: never short)");
  cmd.add_option("--repair", f.repair, "Mean time to repair a failed node (default 48 h)")->type_name("DURATION");
  cmd.add_option("--duration", f.duration, "Wall-clock length of the run, e.g. 30d, 72h (default 30d)")
      ->type_name("DURATION");
  cmd.add_option("--replications", f.replications, "Monte Carlo runs (default 1000)");
  cmd.add_option("--seed", f.seed, "Monte Carlo seed (default 20240723)");
  cmd.add_option("--threads", f.threads, "Monte Carlo threads (default 2)")->check(whole_number(1, 1024));
  cmd.add_option("--weibull-shape", f.weibull_shape, "Shape of job-level inter-arrival times (1 = exponential)");
}

namespace {

struct GoodputCommandFlags {
  jobspec::CheckpointJobFlags job;
  jobspec::GoodputFlags goodput;
  std::string step_time;
  long long gbs = 0;  ///< with --model and --cluster: predict the step time
  long long seq = 8192;
  std::string precision = "bf16";
  bool json = false;
};

// Without --step-time, the training model predicts it from the job (model, cluster, tp/pp, gbs).
core::Seconds step_time_of(const GoodputCommandFlags& f, Context& ctx, std::string& note) {
  if (!f.step_time.empty()) return config::parse_duration_flag(f.step_time, "--step-time");
  if (f.gbs <= 0) return core::Seconds(0.0);
  if (f.job.model.empty() || f.job.cluster.empty()) {
    throw core::InputError::flag("--gbs", "predicting the step time needs --model and --cluster too");
  }
  jobspec::TrainingJobFlags tf;
  tf.model = f.job.model;
  tf.cluster = f.job.cluster;
  tf.tp = f.job.tp;
  tf.pp = f.job.pp;
  tf.gbs = f.gbs;
  tf.seq = f.seq;
  tf.precision = f.precision;
  const training::TrainingJob tj = jobspec::make_training_job(tf, ctx.catalog());
  const auto r = training::estimate_step(tj, jobspec::load_stack_calibration("", tj.stack),
                                         collectives::make_comm_cost(tj.cluster));
  const auto& l = tj.layout;
  note = fmt::format(
      "Step: {} predicted by the training model (tp{} pp{} dp{}, gbs {}, seq {}, {}; {:.0f} tokens/s/GPU)\n",
      core::format_duration(r.step_time), l.tp, l.pp, l.dp, l.global_batch, tj.seq_len, core::to_string(l.precision),
      r.tokens_per_s_per_gpu);
  return r.step_time;
}

void run_goodput(const GoodputCommandFlags& f, Context& ctx) {
  const jobspec::CheckpointJob job = jobspec::resolve_checkpoint_job(f.job, ctx.catalog());
  if (f.goodput.replications < 1) throw core::InputError::flag("--replications", "must be 1 or more");
  std::string step_note;
  const core::Seconds step_time = step_time_of(f, ctx, step_note);
  const jobspec::GoodputSetup setup = jobspec::resolve_goodput_setup(f.goodput, job, step_time);
  const auto& s = setup.scenario;
  const int nodes = job.layout.nodes;
  const int gpus = s.gpus;

  const auto analytic = reliability::analytic_goodput(s);
  const auto start = std::chrono::steady_clock::now();
  const auto mc = reliability::simulate_goodput(s, setup.monte_carlo);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (f.json) {
    nlohmann::json out = goodput_setup_json(setup, nodes);
    out["analytic"] = goodput_result_json(analytic, gpus);
    out["monte_carlo"] = goodput_result_json(mc, gpus);
    out["monte_carlo"]["seed"] = setup.monte_carlo.seed;
    if (s.step_time.value() > 0.0) out["monte_carlo"]["useful_steps"] = mc.time.useful / s.step_time.value();
    std::cout << out.dump(2) << "\n";
    return;
  }
  print_goodput_setup(setup, nodes, f.goodput.include_planned);
  std::cout << step_note;
  std::cout << fmt::format("Run: {} on {} GPUs = {:.4g} GPU-hours\n\n", core::format_duration(s.horizon), gpus,
                           s.horizon.value() * gpus / 3600.0);
  print_goodput_table(analytic, mc, gpus);
  std::cout << fmt::format("\nMonte Carlo: seed {}, {} threads, {:.2f} s\n", setup.monte_carlo.seed,
                           setup.monte_carlo.threads, wall);
}

}  // namespace

void add_goodput_command(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<GoodputCommandFlags>();
  auto* cmd = app.add_subcommand("goodput", "ETTR, goodput and lost GPU-hours of a run under failures");
  add_checkpoint_job_flags(*cmd, flags->job);
  add_goodput_flags(*cmd, flags->goodput);
  cmd->add_option("--gbs", flags->gbs, "Global batch (sequences): predict the step time with the training model")
      ->check(positive(flags->gbs));
  cmd->add_option("--seq", flags->seq, "Sequence length for the predicted step time")
      ->check(positive(flags->seq))
      ->capture_default_str();
  cmd->add_option("--precision", flags->precision, "Precision for the predicted step time (bf16, fp8, fp4)")
      ->capture_default_str();
  cmd->add_option("--step-time", flags->step_time,
                  "Training step time (peer recovery, step counts); default: predicted with --gbs")
      ->type_name("DURATION");
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
