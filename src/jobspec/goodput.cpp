// Goodput-scenario flag values into a resolved scenario.
#include "jobspec/goodput.hpp"

#include <fmt/format.h>

#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "reliability/checkpoint_interval.hpp"

namespace fmsim::jobspec {
namespace {

core::Seconds duration_or(const std::string& text, const char* flag, core::Seconds fallback) {
  return text.empty() ? fallback : config::parse_duration_flag(text, flag);
}

// The analytic model compounds e^(lambda t) over a checkpoint period and a recovery: a time of
// many mean times between interruptions means no checkpoint ever completes between failures
// (ETTR below e^-50), and past about 700 MTBFs the arithmetic overflows into nan. Such a time is
// refused, naming its flag and the limit.
constexpr double kMaxMtbfMultiple = 50.0;

void check_against_mtbf(core::Seconds t, const char* flag, core::Seconds mtbf) {
  if (t.value() <= kMaxMtbfMultiple * mtbf.value()) return;
  throw core::InputError::flag(
      flag,
      fmt::format("{} is {:.3g} times the job's mean time between interruptions ({}); allowed: at most {:g} x MTBF "
                  "= {} (longer, no checkpoint would complete between failures)",
                  core::format_duration(t), t.value() / mtbf.value(), core::format_duration(mtbf), kMaxMtbfMultiple,
                  core::format_duration(core::Seconds(kMaxMtbfMultiple * mtbf.value()))));
}

}  // namespace

GoodputSetup resolve_goodput_setup(const GoodputFlags& f, const CheckpointJob& job, core::Seconds step_time) {
  GoodputSetup setup;
  const config::FailureData data = config::load_failure_data(f.failure_file, "--failure-file");
  reliability::FailureModel model = config::find_failure_model(data, f.failures, "--failures");
  if (!f.node_failure_rate.empty()) {
    model =
        model.with_unexpected_rate(config::parse_node_failure_rate(data, f.node_failure_rate, "--node-failure-rate"));
  }
  setup.failure_model = model.name;
  reliability::GoodputScenario& s = setup.scenario;
  s.failures = reliability::job_failure_process(model, job.layout.nodes, f.include_planned);
  if (!f.mtbf.empty()) {
    const auto mtbf = config::parse_duration_flag(f.mtbf, "--mtbf");
    if (mtbf.value() <= 0.0) throw core::InputError::flag("--mtbf", "must be greater than zero");
    s.failures.rate_per_second = 1.0 / mtbf.value();
  }
  s.gpus = job.layout.ranks;
  s.horizon = config::parse_duration_flag(f.duration, "--duration");
  if (s.horizon.value() <= 0.0) throw core::InputError::flag("--duration", "must be greater than zero");
  s.step_time = step_time;
  s.weibull_shape = f.weibull_shape;
  if (s.weibull_shape <= 0.0) throw core::InputError::flag("--weibull-shape", "must be greater than zero");
  // 10^6 runs take about 25 s on 2 cores in 56 MB (10^8 grew past 4 GB in 30 s); more is refused.
  if (f.replications < 0 || f.replications > 1000000) {
    throw core::InputError::flag("--replications",
                                 fmt::format("{} is out of range; allowed: 0 to 1000000", f.replications));
  }
  if (f.threads < 1) throw core::InputError::flag("--threads", "must be 1 or more");
  setup.monte_carlo = {.replications = f.replications, .seed = f.seed, .threads = f.threads};

  // Recovery path.
  s.recovery = data.recovery;
  s.recovery.detect = duration_or(f.detect, "--detect", s.recovery.detect);
  s.recovery.replace = duration_or(f.replace, "--replace", s.recovery.replace);
  s.recovery.restart = duration_or(f.restart, "--restart", s.recovery.restart);
  s.recovery.repair = duration_or(f.repair, "--repair", s.recovery.repair);
  if (f.spares < -1) throw core::InputError::flag("--spares", "must be -1 (unlimited) or more");
  s.recovery.spares = f.spares;

  // Checkpoint timing: from the storage model when the job's checkpoint is described, else flags.
  using reliability::CheckpointStrategy;
  const auto strategy =
      config::word_flag(reliability::kCheckpointStrategyWords,
                        f.strategy.empty() ? (job.engine.asynchronous ? "async" : "sync") : f.strategy, "--strategy");
  setup.strategy = strategy;
  reliability::CheckpointTiming& t = s.checkpoint;
  if (f.replicas < 1) throw core::InputError::flag("--replicas", "must be 1 or more");
  if (job.has_contents && job.has_tier) {
    // Every strategy but sync stages the shard in pinned host memory and writes in the background.
    storage::CheckpointEngine engine = job.engine;
    engine.asynchronous = strategy != CheckpointStrategy::SyncDisk;
    const auto e = storage::estimate_checkpoint(job.contents, job.layout, job.tier, engine, job.node_network, job.keep);
    // A peer restore lands in the peer's pinned host memory and is copied back to the GPUs.
    const auto from_peer = storage::peer_transfer_time(e.plan.max_node_load, 1, job.node_network) + e.pinned_restore;
    switch (strategy) {
      case CheckpointStrategy::SyncDisk:
        t = {.interval = {}, .blocking = e.save.total, .persist = e.save.total, .load = e.load.total};
        break;
      case CheckpointStrategy::AsyncDisk:
      case CheckpointStrategy::PeerReplica:
        t = {.interval = {}, .blocking = e.staging_copy, .persist = e.save.total, .load = e.load.total};
        s.peer_load = from_peer;
        break;
      case CheckpointStrategy::InMemory:
        t = {.interval = {},
             .blocking = e.staging_copy,
             .persist =
                 e.staging_copy + storage::peer_transfer_time(e.plan.max_node_bytes, f.replicas - 1, job.node_network),
             .load = from_peer};
        break;
    }
    setup.estimate = e;
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

  // Interval: Young's and Daly's closed forms for reference; the optimum of the analytic model is used.
  const core::Seconds mtbf = s.failures.mtbf();
  const char* save_flag = f.save_time.empty() ? "--storage" : "--save-time";  // the storage model's save
  check_against_mtbf(t.persist, save_flag, mtbf);
  check_against_mtbf(t.blocking, f.copy_time.empty() ? save_flag : "--copy-time", mtbf);
  check_against_mtbf(t.load, f.load_time.empty() ? save_flag : "--load-time", mtbf);
  check_against_mtbf(s.recovery.detect + s.recovery.replace + s.recovery.restart, "--detect/--replace/--restart", mtbf);
  check_against_mtbf(s.peer_load, "--peer-load-time", mtbf);
  setup.young = reliability::young_interval(t.blocking, mtbf);
  setup.daly = reliability::daly_interval(t.blocking, mtbf);
  t.interval = core::Seconds(1.0);
  setup.optimum = reliability::optimal_interval(s);
  t.interval = f.interval.empty() ? setup.optimum : config::parse_duration_flag(f.interval, "--interval");
  if (t.interval.value() <= 0.0) throw core::InputError::flag("--interval", "must be greater than zero");
  check_against_mtbf(t.interval, "--interval", mtbf);
  return setup;
}

}  // namespace fmsim::jobspec
