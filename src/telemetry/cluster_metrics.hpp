// A replayed cluster (the Slurm twin in orchestration/) as the time series its Slurm exporter would
// have produced: prometheus-slurm-exporter's slurm_queue_*, slurm_nodes_* and slurm_gpus_*
// families, plus fmsim_cluster_* for utilisation and fragmentation, and with serving deployments the
// nodes their replica units hold (fmsim_cluster_serving_nodes) beside the rest (fmsim_cluster_batch_nodes).
#pragma once

#include <vector>

#include "observability/metrics_output.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"
#include "telemetry/training_metrics.hpp"

namespace fmsim::telemetry {

/// Replays `jobs` on `layout` under `config` and `simulation` (as `fmsim cluster` does, the same
/// seeded failures) with the twin's time series at `options.resolution_s`, and writes them. Each
/// sample at time t is the twin's mean over [t - resolution, t): node and job counts are whole
/// numbers while nothing changes within the minute. Names (vpenso/prometheus-slurm-exporter):
/// slurm_queue_pending, slurm_queue_running (queue.go), slurm_nodes_alloc, slurm_nodes_idle,
/// slurm_nodes_down (nodes.go), slurm_gpus_alloc, slurm_gpus_idle, slurm_gpus_total,
/// slurm_gpus_utilization (gpus.go: allocated / total). Running jobs come from the job records
/// (a requeued job counts from its last start). Labels: job (options.job) and the exporter's
/// instance (slurmctld:8080). Deterministic.
WriteSummary write_cluster_metrics(const orchestration::ClusterLayout& layout, const orchestration::SlurmConfig& config,
                                   const std::vector<orchestration::JobSpec>& jobs,
                                   orchestration::SimulationOptions simulation, const SeriesOptions& options,
                                   observability::MetricsOutput& out);

}  // namespace fmsim::telemetry
