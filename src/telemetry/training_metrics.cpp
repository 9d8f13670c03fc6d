// Training run -> exporter time series (see training_metrics.hpp).
#include "telemetry/training_metrics.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "telemetry/series.hpp"

namespace fmsim::telemetry {
namespace {

using observability::Labels;
using observability::SeriesType;
using Phase = reliability::RunTimeline::Phase;

constexpr double kMiB = 1024.0 * 1024.0;

// Where the job is at one instant, and its cumulative totals.
struct Totals {
  double compute = 0.0;   // seconds of compute done (including work later lost)
  double stall = 0.0;     // seconds stalled on snapshots
  double saves = 0.0;     // snapshots started
  double saved = 0.0;     // snapshots' bytes persisted, in units of one checkpoint
  double loaded = 0.0;    // restores' bytes read, in units of one checkpoint
  double restarts = 0.0;  // relaunches started
};

enum class State { Compute, Checkpoint, Detect, Down, Load };

// Walks the timeline forward: totals and state at non-decreasing times.
class Cursor {
 public:
  explicit Cursor(const reliability::RunTimeline& tl, double full_load)
      : tl_(tl), period_(tl.interval + tl.blocking), full_load_(full_load) {}

  void advance(double t) {
    while (i_ < tl_.segments.size() && tl_.segments[i_].end <= t) {
      const auto& s = tl_.segments[i_];
      add(base_, s, s.end - s.start);
      last_phase_ = s.phase;
      ++i_;
    }
    now_ = base_;
    if (i_ < tl_.segments.size() && tl_.segments[i_].start <= t) {
      const auto& s = tl_.segments[i_];
      add(now_, s, t - s.start);
      state_ = state_in(s, t - s.start);
    } else {
      state_ = last_phase_ == Phase::Working ? State::Compute : State::Down;
    }
  }
  [[nodiscard]] const Totals& totals() const { return now_; }
  [[nodiscard]] State state() const { return state_; }

 private:
  void add(Totals& acc, const reliability::RunTimeline::Segment& s, double x) const {
    switch (s.phase) {
      case Phase::Working: {
        const double tau = tl_.interval;
        const double n = std::floor(x / period_);
        const double rem = x - n * period_;
        acc.compute += n * tau + std::min(rem, tau);
        acc.stall += n * tl_.blocking + std::max(0.0, rem - tau);
        const double started = n + (rem >= tau && x > 0.0 ? 1.0 : 0.0);
        acc.saves += started;
        // Snapshot k starts at k P + tau and is persisted over `persist` seconds.
        const double first = std::max(0.0, started - 3.0);
        acc.saved += first;
        for (double k = first; k < started; k += 1.0) {
          const double since = x - (k * period_ + tau);
          acc.saved += tl_.persist > 0.0 ? std::clamp(since / tl_.persist, 0.0, 1.0) : 1.0;
        }
        break;
      }
      case Phase::Snapshot:
        acc.stall += x;
        acc.saves += 1.0;
        acc.saved += (s.end > s.start) ? x / (s.end - s.start) : 1.0;
        break;
      case Phase::Restart: acc.restarts += 1.0; break;
      case Phase::Load: acc.loaded += full_load_ > 0.0 ? x / full_load_ : 1.0; break;
      case Phase::Detect:
      case Phase::Wait: break;
    }
  }

  [[nodiscard]] State state_in(const reliability::RunTimeline::Segment& s, double x) const {
    switch (s.phase) {
      case Phase::Working: {
        const double rem = x - std::floor(x / period_) * period_;
        return rem < tl_.interval ? State::Compute : State::Checkpoint;
      }
      case Phase::Snapshot: return State::Checkpoint;
      case Phase::Detect: return State::Detect;
      case Phase::Wait:
      case Phase::Restart: return State::Down;
      case Phase::Load: return State::Load;
    }
    return State::Down;
  }

  const reliability::RunTimeline& tl_;
  double period_;
  double full_load_;
  std::size_t i_ = 0;
  Totals base_;
  Totals now_;
  State state_ = State::Compute;
  Phase last_phase_ = Phase::Working;
};

// Bytes a group of `size` ranks, `stride` apart in the rank order, moves over NVLink (true) or
// EFA (false): NVLink when the whole group sits in one NVLink domain.
bool on_nvlink(int size, int stride, int domain) { return size <= 1 || size * stride <= domain; }

const GpuState& state_of(const TrainingStates& s, State st) {
  switch (st) {
    case State::Compute: return s.compute;
    case State::Checkpoint: return s.checkpoint;
    case State::Detect: return s.detect;
    case State::Down: return s.down;
    case State::Load: return s.load;
  }
  return s.down;
}

}  // namespace

std::string node_name(int node) { return fmt::format("node-{:04}", node); }

std::string gpu_uuid(int node, int gpu) { return fmt::format("GPU-{:08x}-0000-4000-8000-{:012x}", node, gpu); }

TrainingStates training_states(const TrainingRun& run) {
  const auto& step = run.step;
  const auto& b = step.breakdown;
  const auto& gpu = run.job.cluster.gpu;
  const auto& l = run.job.layout;
  const double t = step.step_time.value();
  FMSIM_CHECK(t > 0.0, "training metrics need a positive step time");
  const double comm = (b.tp_comm + b.cp_comm + b.ep_comm + b.pp_comm + b.dp_comm).value();
  const double kernels = (b.compute + b.optimizer).value();
  const double nccl_sm = gpu.sm_count > 0 ? std::min(1.0, kNcclChannels / gpu.sm_count) : 0.1;
  const double tdp = gpu.tdp.value();
  const double cap = gpu.power_limit.value() > 0.0 ? std::min(gpu.power_limit.value(), tdp) : tdp;
  const double idle = kIdlePowerShareOfTdp * tdp;
  const auto power = [&](double sm) { return idle + (cap - idle) * sm; };
  const double recompute = l.recompute == parallelism::Recompute::Full ? 4.0 / 3.0 : 1.0;

  // Communication per GPU per step by link (rank order tp, cp, ep/dp, pp as Megatron lays it out).
  const int domain = run.job.cluster.nvlink_domain_gpus();
  double nvlink = 0.0;
  double efa = 0.0;
  const auto book = [&](double bytes, int size, int stride) {
    (on_nvlink(size, stride, domain) ? nvlink : efa) += bytes;
  };
  book(step.comm.tp.value(), l.tp, 1);
  book(step.comm.cp.value(), l.cp, l.tp);
  book(step.comm.ep.value(), l.ep, l.tp * l.cp);
  book(step.comm.dp.value(), l.dp, l.tp * l.cp);
  book(step.comm.pp.value(), l.pp, l.tp * l.cp * l.dp);

  TrainingStates s;
  auto& c = s.compute;
  c.gr_engine_active = std::min(1.0, (kernels + comm) / t);
  c.sm_active = std::min(1.0, (kernels + comm * nccl_sm) / t);
  c.tensor_active = std::min(1.0, step.mfu * recompute);
  c.fb_used_bytes = step.memory.total().value();
  c.power_w = power(c.sm_active);
  c.nvlink_tx_bytes_per_s = nvlink / t;
  c.efa_tx_bytes_per_s = efa / t;

  s.checkpoint.fb_used_bytes = c.fb_used_bytes;
  s.checkpoint.power_w = idle;
  s.detect.gr_engine_active = 1.0;
  s.detect.sm_active = nccl_sm;
  s.detect.fb_used_bytes = c.fb_used_bytes;
  s.detect.power_w = power(nccl_sm);
  s.down.power_w = idle;
  s.load.fb_used_bytes = c.fb_used_bytes;
  s.load.power_w = idle;
  return s;
}

WriteSummary write_training_metrics(const TrainingRun& run, const SeriesOptions& options,
                                    observability::MetricsOutput& out) {
  const auto& tl = run.timeline;
  const double horizon = run.scenario.horizon.value();
  const Grid grid = make_grid(horizon, options);
  const std::size_t n = grid.ticks;
  const TrainingStates states = training_states(run);
  const int gpus = run.job.job_gpus();
  const int per_node = std::max(1, run.job.cluster.gpus_per_node());
  const int nodes = (gpus + per_node - 1) / per_node;
  const int nics = run.job.cluster.system.nics_per_node;
  const double step_s = run.step.step_time.value();
  const double tokens_per_s = run.step.tokens_per_s_per_gpu * gpus;
  const auto& causes = run.scenario.failures.causes;

  // One pass over the timeline: state and totals at every tick.
  std::vector<State> state(n);
  std::vector<Totals> totals(n);
  std::vector<double> lost(n, 0.0);
  std::vector<std::vector<double>> failures(causes.size(), std::vector<double>(n, 0.0));
  {
    Cursor cursor(tl, run.scenario.checkpoint.load.value());
    std::size_t next = 0;
    double lost_sum = 0.0;
    std::vector<double> by_cause(causes.size(), 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      const double t = grid.time(k);
      cursor.advance(t);
      state[k] = cursor.state();
      totals[k] = cursor.totals();
      while (next < tl.interruptions.size() && tl.interruptions[next].time <= t) {
        lost_sum += tl.interruptions[next].lost_seconds;
        by_cause[static_cast<std::size_t>(tl.interruptions[next].cause)] += 1.0;
        ++next;
      }
      lost[k] = lost_sum;
      for (std::size_t c = 0; c < causes.size(); ++c) failures[c][k] = by_cause[c];
    }
  }
  const auto per_tick = [&](auto f) {
    std::vector<double> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = f(k);
    return v;
  };
  const auto gauge_of = [&](double GpuState::*field, double scale) {
    return per_tick([&](std::size_t k) { return state_of(states, state[k]).*field * scale; });
  };

  SeriesSink sink(out, grid, options);
  const Labels job{{"job", options.job}, {"instance", "fmsim"}};

  // --- training progress (job level) ------------------------------------------------------------
  sink.family("fmsim_step_time_seconds", SeriesType::Gauge, "Time of one training step (fmsim prediction).", "seconds");
  sink.series(job, per_tick([&](std::size_t) { return step_s; }));
  sink.family("fmsim_gpus", SeriesType::Gauge, "GPUs in the training job.");
  sink.series(job, per_tick([&](std::size_t) { return static_cast<double>(gpus); }));
  sink.family("fmsim_tokens_total", SeriesType::Counter, "Tokens processed, including work later lost to failures.");
  const auto tokens = per_tick([&](std::size_t k) { return totals[k].compute * tokens_per_s; });
  sink.series(job, tokens);
  sink.family("fmsim_tokens_per_second", SeriesType::Gauge,
              "Tokens processed per second by the job over the last sampling interval.");
  sink.series(job, per_tick([&](std::size_t k) {
                return k == 0 ? 0.0 : (tokens[k] - tokens[k - 1]) / (grid.time(k) - grid.time(k - 1));
              }));
  sink.family("fmsim_mfu_ratio", SeriesType::Gauge,
              "Model FLOPs utilisation of the last step (0 while the job is down).", "ratio");
  sink.series(job, per_tick([&](std::size_t k) {
                return state[k] == State::Compute || state[k] == State::Checkpoint ? run.step.mfu : 0.0;
              }));
  sink.family("fmsim_iteration", SeriesType::Gauge,
              "Current training iteration (steps since the start, rolled back to the restored checkpoint).");
  sink.series(job, per_tick([&](std::size_t k) { return std::floor((totals[k].compute - lost[k]) / step_s + 1e-9); }));
  sink.family("fmsim_ettr_ratio", SeriesType::Gauge,
              "Effective training time ratio so far: useful compute / elapsed time.", "ratio");
  sink.series(job, per_tick([&](std::size_t k) {
                const double t = grid.time(k);
                return t > 0.0 ? std::max(0.0, totals[k].compute - lost[k]) / t : 0.0;
              }));
  sink.family("fmsim_checkpoint_saves_total", SeriesType::Counter, "Checkpoint saves started.");
  sink.series(job, per_tick([&](std::size_t k) { return totals[k].saves; }));
  sink.family("fmsim_checkpoint_stall_seconds_total", SeriesType::Counter,
              "Seconds training stalled for checkpoint saves.");
  sink.series(job, per_tick([&](std::size_t k) { return totals[k].stall; }));
  sink.family("fmsim_failures_total", SeriesType::Counter, "Job interruptions by cause.");
  for (std::size_t c = 0; c < causes.size(); ++c) {
    Labels labels = job;
    labels.emplace_back("cause", causes[c].name);
    sink.series(labels, failures[c]);
  }
  sink.family("fmsim_restarts_total", SeriesType::Counter, "Job relaunches after an interruption.");
  sink.series(job, per_tick([&](std::size_t k) { return totals[k].restarts; }));
  sink.family("fmsim_lost_work_seconds_total", SeriesType::Counter,
              "Compute seconds thrown away by rolling back to the last checkpoint.");
  sink.series(job, lost);
  sink.family("fmsim_job_state", SeriesType::Gauge,
              "1 for the state the job is in (compute, checkpoint, "
              "detect, down, load), 0 for the others.");
  const char* state_names[] = {"compute", "checkpoint", "detect", "down", "load"};
  for (int st = 0; st < 5; ++st) {
    Labels labels = job;
    labels.emplace_back("state", state_names[st]);
    sink.series(labels, per_tick([&](std::size_t k) { return static_cast<int>(state[k]) == st ? 1.0 : 0.0; }));
  }
  // Step durations: a step during which a snapshot stalls takes step + blocking.
  {
    const std::vector<double> bounds = {0.5 * step_s, 0.9 * step_s, 1.1 * step_s,  1.5 * step_s,
                                        2.0 * step_s, 5.0 * step_s, 10.0 * step_s, 100.0 * step_s};
    const double slow = step_s + tl.blocking;
    sink.family("fmsim_step_duration_seconds", SeriesType::Histogram,
                "Wall time of training steps (a step with a checkpoint save includes its stall).", "seconds");
    // A save is counted as it starts, its step when its compute is done: steps - saves dips by one
    // while a save has started and its step is not yet counted. Histogram counts never decrease,
    // so the normal steps are the most seen so far (at most one step ahead during such a dip).
    double normal_seen = 0.0;
    sink.histogram(job, bounds, [&](std::size_t k, std::vector<double>& cumulative, double& sum) {
      const double steps = std::floor(totals[k].compute / step_s + 1e-9);
      const double stalled = std::min(steps, totals[k].saves);
      normal_seen = std::max(normal_seen, steps - stalled);
      const double normal = normal_seen;
      for (std::size_t i = 0; i < bounds.size(); ++i) {
        cumulative[i] = (step_s <= bounds[i] ? normal : 0.0) + (slow <= bounds[i] ? stalled : 0.0);
      }
      cumulative.back() = normal + stalled;
      sum = normal * step_s + stalled * slow;
    });
  }

  // --- dcgm-exporter ----------------------------------------------------------------------------
  const std::string model_name =
      run.job.cluster.gpu.display_name.empty() ? run.job.cluster.gpu.name : run.job.cluster.gpu.display_name;
  std::vector<Labels> gpu_series;
  for (int node = 1; node <= nodes; ++node) {
    const std::string host = node_name(node);
    if (options.granularity == Granularity::Node) {
      gpu_series.push_back(
          {{"Hostname", host}, {"modelName", model_name}, {"job", options.job}, {"instance", host + ":9400"}});
      continue;
    }
    const int on_node = std::min(per_node, gpus - (node - 1) * per_node);
    for (int g = 0; g < on_node; ++g) {
      gpu_series.push_back({{"gpu", std::to_string(g)},
                            {"UUID", gpu_uuid(node, g)},
                            {"device", fmt::format("nvidia{}", g)},
                            {"modelName", model_name},
                            {"Hostname", host},
                            {"job", options.job},
                            {"instance", host + ":9400"}});
    }
  }
  const auto dcgm = [&](const char* name, const char* help, const std::vector<double>& values) {
    sink.family(name, SeriesType::Gauge, help);
    sink.series(gpu_series, values);
  };
  dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.",
       gauge_of(&GpuState::gr_engine_active, 1.0));
  dcgm("DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned.",
       gauge_of(&GpuState::sm_active, 1.0));
  dcgm("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.",
       gauge_of(&GpuState::tensor_active, 1.0));
  dcgm("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", gauge_of(&GpuState::gr_engine_active, 100.0));
  dcgm("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", gauge_of(&GpuState::fb_used_bytes, 1.0 / kMiB));
  {
    const double visible = (run.job.cluster.gpu.hbm_usable.value() > 0.0 ? run.job.cluster.gpu.hbm_usable
                                                                         : run.job.cluster.gpu.hbm_capacity)
                               .value();
    dcgm("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", per_tick([&](std::size_t k) {
           return std::max(0.0, visible - state_of(states, state[k]).fb_used_bytes) / kMiB;
         }));
  }
  dcgm("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", gauge_of(&GpuState::power_w, 1.0));
  dcgm("DCGM_FI_PROF_NVLINK_TX_BYTES",
       "The rate of data transmitted over NVLink, not including protocol headers, "
       "in bytes per second.",
       gauge_of(&GpuState::nvlink_tx_bytes_per_s, 1.0));
  dcgm("DCGM_FI_PROF_NVLINK_RX_BYTES",
       "The rate of data received over NVLink, not including protocol headers, "
       "in bytes per second.",
       gauge_of(&GpuState::nvlink_tx_bytes_per_s, 1.0));

  // --- EFA (efa node exporter: node_amazonefa_*, per RDMA device) ---------------------------------
  if (nics > 0) {
    std::vector<Labels> efa_series;
    const bool per_device = options.granularity == Granularity::Gpu;
    for (int node = 1; node <= nodes; ++node) {
      const std::string host = node_name(node);
      const int devices = per_device ? nics : 1;
      for (int d = 0; d < devices; ++d) {
        efa_series.push_back({{"device", per_device ? fmt::format("rdmap{}s0", d) : std::string("all")},
                              {"port", "1"},
                              {"Hostname", host},
                              {"job", options.job},
                              {"instance", host + ":9109"}});
      }
    }
    const double node_rate = states.compute.efa_tx_bytes_per_s * per_node / (per_device ? nics : 1);
    const auto efa_bytes = per_tick([&](std::size_t k) { return totals[k].compute * node_rate; });
    for (const char* name : {"node_amazonefa_tx_bytes", "node_amazonefa_rx_bytes"}) {
      sink.family(name, SeriesType::Counter,
                  name[15] == 't' ? "Number of bytes transmitted" : "Number of bytes received", {}, true);
      sink.series(efa_series, efa_bytes);
    }
  }

  // --- node_exporter: storage traffic on the ENA interface (checkpoints, data) ---------------------
  {
    std::vector<Labels> ena_series;
    for (int node = 1; node <= nodes; ++node) {
      const std::string host = node_name(node);
      ena_series.push_back(
          {{"device", "ens32"}, {"Hostname", host}, {"job", options.job}, {"instance", host + ":9100"}});
    }
    const double save_per_node = run.checkpoint_bytes / nodes;
    const double load_per_node = run.checkpoint_load_bytes / nodes;
    const double data_per_node_per_s = tokens_per_s * run.bytes_per_token / nodes;
    sink.family("node_network_transmit_bytes_total", SeriesType::Counter, "Network device statistic transmit_bytes.");
    const auto tx = per_tick([&](std::size_t k) { return totals[k].saved * save_per_node; });
    sink.series(ena_series, tx);
    sink.family("node_network_receive_bytes_total", SeriesType::Counter, "Network device statistic receive_bytes.");
    const auto rx = per_tick(
        [&](std::size_t k) { return totals[k].loaded * load_per_node + totals[k].compute * data_per_node_per_s; });
    sink.series(ena_series, rx);
  }

  // --- node_exporter: the local NVMe instance store (checkpoints saved to and restored from it) ----
  if (const LocalDisk& disk = run.local_disk; disk.capacity_bytes > 0.0) {
    std::vector<Labels> disk_series;
    std::vector<Labels> fs_series;
    for (int node = 1; node <= nodes; ++node) {
      const std::string host = node_name(node);
      disk_series.push_back(
          {{"device", "md0"}, {"Hostname", host}, {"job", options.job}, {"instance", host + ":9100"}});
      fs_series.push_back({{"device", "/dev/md0"},
                           {"fstype", "ext4"},
                           {"mountpoint", "/opt/dlami/nvme"},
                           {"Hostname", host},
                           {"job", options.job},
                           {"instance", host + ":9100"}});
    }
    // Saves and restores move their bytes linearly over the persist and load phases (as `saved`
    // and `loaded` count them); the devices are busy for bytes / rate of that.
    const double save_per_node = disk.holds_checkpoints ? run.checkpoint_bytes / nodes : 0.0;
    const double load_per_node = disk.holds_checkpoints ? run.checkpoint_load_bytes / nodes : 0.0;
    const auto written = per_tick([&](std::size_t k) { return std::round(totals[k].saved * save_per_node); });
    const auto read = per_tick([&](std::size_t k) { return std::round(totals[k].loaded * load_per_node); });
    sink.family("node_disk_written_bytes_total", SeriesType::Counter,
                "The total number of bytes written successfully.");
    sink.series(disk_series, written);
    sink.family("node_disk_read_bytes_total", SeriesType::Counter, "The total number of bytes read successfully.");
    sink.series(disk_series, read);
    sink.family("node_disk_io_time_seconds_total", SeriesType::Counter, "Total seconds spent doing I/Os.");
    sink.series(disk_series, per_tick([&](std::size_t k) {
                  return (disk.write_bytes_per_s > 0.0 ? written[k] / disk.write_bytes_per_s : 0.0) +
                         (disk.read_bytes_per_s > 0.0 ? read[k] / disk.read_bytes_per_s : 0.0);
                }));
    // Retained: the last `keep` checkpoints, plus the one being written (the oldest is deleted once
    // the new one is complete).
    const double keep = std::max(1, disk.keep);
    sink.family("node_filesystem_avail_bytes", SeriesType::Gauge,
                "Filesystem space available to non-root users in bytes.", "bytes");
    sink.series(fs_series, per_tick([&](std::size_t k) {
                  const double saved = totals[k].saved;
                  const double held = saved <= keep ? saved : keep + (saved - std::floor(saved));
                  return std::max(0.0, std::round(disk.capacity_bytes - held * save_per_node));
                }));
  }
  return sink.summary();
}

}  // namespace fmsim::telemetry
