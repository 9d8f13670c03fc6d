// A simulated training run as the time series its exporters would have produced: dcgm-exporter
// (GPU activity, memory, power, NVLink), the EFA node exporter (network bytes), node_exporter
// (storage traffic on the ENA interface) and fmsim_* training progress (step time, tokens,
// checkpoints, failures, restarts, ETTR), over the run's simulated time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "observability/metrics_output.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
#include "training/step_model.hpp"

namespace fmsim::telemetry {

/// Series per GPU (dcgm-exporter's own shape, labels gpu, UUID, device, modelName, Hostname; EFA
/// per device; the default) or per node (dcgm values of a node's GPUs, which the model keeps
/// identical, as one series without the gpu labels; EFA bytes summed over the node's devices).
enum class Granularity { Node, Gpu };

/// How the series are sampled and labelled.
struct SeriesOptions {
  std::string job;                         ///< value of the `job` label on every series
  std::int64_t start_unix_s = 1767225600;  ///< timestamp of simulated time 0 (default 2026-01-01T00:00:00Z)
  std::int64_t resolution_s = 60;          ///< sampling grid (a scrape interval)
  /// Longest gap between two written samples of a series; in between, a sample is written only
  /// where the value (gauges) or its slope (counters) changes.
  /// 240 s keeps every series inside Prometheus' default 5-minute lookback; 0 = changes only.
  std::int64_t heartbeat_s = 240;
  Granularity granularity = Granularity::Gpu;
};

/// A node's local NVMe instance store as node_exporter reads it: the devices striped as RAID 0
/// (md0) and mounted at /opt/dlami/nvme, as the AWS Deep Learning AMI sets it up.
struct LocalDisk {
  double capacity_bytes = 0.0;     ///< all devices of a node; 0 = none (no disk series)
  double write_bytes_per_s = 0.0;  ///< a node's devices together
  double read_bytes_per_s = 0.0;
  bool holds_checkpoints = false;  ///< the checkpoint tier is the instance store
  int keep = 1;                    ///< checkpoints retained on it
};

/// Everything the series are derived from.
struct TrainingRun {
  training::TrainingJob job;
  training::StepResult step;
  double checkpoint_bytes = 0.0;       ///< written by the whole job per save
  double checkpoint_load_bytes = 0.0;  ///< read by the whole job per restore
  double bytes_per_token = 0.0;        ///< training data read per token (token ids)
  reliability::GoodputScenario scenario;
  reliability::RunTimeline timeline;  ///< one Monte Carlo replication (seeded)
  LocalDisk local_disk;
};

/// What one GPU's exporters read in each state of the job. Derivation (docs/models/observability.md):
/// - compute: engine busy = (compute + optimizer + exposed communication) / step (NCCL kernels keep
///   the engine busy; pipeline bubbles and framework overhead leave it idle); SM active = compute
///   and optimizer kernels on all SMs plus exposed communication on NCCL's channels (one thread
///   block per channel, kNcclChannels of sm_count SMs); tensor pipe = MFU x the recompute factor
///   (hardware FLOPs / model FLOPs: 4/3 for full recompute); memory from the memory model; power
///   linear in SM activity between idle and the power cap; NVLink and EFA bytes from the step's
///   communication volume per kind, on EFA when its group spans NVLink domains;
/// - checkpoint stall: the GPU-to-host copy (copy engines; SMs idle), memory held;
/// - detect: the surviving ranks spin in a hung NCCL collective until the timeout (engine busy,
///   NCCL's SMs active, no tensor work);
/// - wait, restart: the processes are gone (no memory, idle power);
/// - load: memory allocated, the state read from storage.
struct GpuState {
  double gr_engine_active = 0.0;       ///< DCGM_FI_PROF_GR_ENGINE_ACTIVE, 0..1
  double sm_active = 0.0;              ///< DCGM_FI_PROF_SM_ACTIVE, 0..1
  double tensor_active = 0.0;          ///< DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, 0..1
  double fb_used_bytes = 0.0;          ///< DCGM_FI_DEV_FB_USED (written in MiB)
  double power_w = 0.0;                ///< DCGM_FI_DEV_POWER_USAGE
  double nvlink_tx_bytes_per_s = 0.0;  ///< DCGM_FI_PROF_NVLINK_TX_BYTES (= RX: collectives are symmetric)
  double efa_tx_bytes_per_s = 0.0;     ///< this GPU's share of its node's EFA traffic
};

struct TrainingStates {
  GpuState compute, checkpoint, detect, down, load;
};

/// NCCL channels assumed for exposed communication (one CTA each).
inline constexpr double kNcclChannels = 16.0;
/// Idle power as a share of TDP: an idle H200 SXM draws about 80 W of its 700 W.
inline constexpr double kIdlePowerShareOfTdp = 0.115;

TrainingStates training_states(const TrainingRun& run);

/// What was written.
struct WriteSummary {
  std::uint64_t series = 0;
  std::uint64_t samples = 0;
  std::int64_t first_timestamp_s = 0;
  std::int64_t last_timestamp_s = 0;
};

/// Writes the run's families to `out` (without the closing # EOF). Deterministic.
WriteSummary write_training_metrics(const TrainingRun& run, const SeriesOptions& options,
                                    observability::MetricsOutput& out);

/// Node host names used in the series ("node-0001", ...) and a GPU's UUID label
/// ("GPU-00000001-0000-4000-8000-000000000003" for node 1, gpu 3).
std::string node_name(int node);
std::string gpu_uuid(int node, int gpu);

}  // namespace fmsim::telemetry
