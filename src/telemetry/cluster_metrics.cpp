// Cluster twin -> Slurm exporter time series (see cluster_metrics.hpp).
#include "telemetry/cluster_metrics.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "telemetry/series.hpp"

namespace fmsim::telemetry {

using observability::Labels;
using observability::SeriesType;

WriteSummary write_cluster_metrics(const orchestration::ClusterLayout& layout, const orchestration::SlurmConfig& config,
                                   const std::vector<orchestration::JobSpec>& jobs,
                                   orchestration::SimulationOptions simulation, const SeriesOptions& options,
                                   observability::MetricsOutput& out) {
  const double res = static_cast<double>(options.resolution_s);
  simulation.utilisation_bucket_s = res;
  const auto result = orchestration::simulate_slurm(layout, config, jobs, simulation);
  const auto& ts = result.series;
  const std::size_t n = ts.busy_nodes.size();
  FMSIM_CHECK(n > 0, "cluster metrics: the replay produced no time series");
  // Bucket k, the mean over [k res, (k + 1) res), is sampled at (k + 1) res.
  Grid grid;
  grid.ticks = n;
  grid.resolution_s = options.resolution_s;
  grid.start_unix_s = options.start_unix_s + options.resolution_s;
  const auto at = [&](const std::vector<double>& v, std::size_t k) { return k < v.size() ? v[k] : 0.0; };
  const auto per_tick = [&](auto f) {
    std::vector<double> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = f(k);
    return v;
  };

  // Running jobs, as a mean over each bucket, from the records' last runs.
  std::vector<double> running(n, 0.0);
  for (const auto& j : result.jobs) {
    if (j.start_s < 0.0) continue;
    const double end = j.end_s >= 0.0 ? j.end_s : static_cast<double>(n) * res;
    for (auto k = static_cast<std::size_t>(j.start_s / res); k < n && static_cast<double>(k) * res < end; ++k) {
      const double a = std::max(j.start_s, static_cast<double>(k) * res);
      const double b = std::min(end, static_cast<double>(k + 1) * res);
      if (b > a) running[k] += (b - a) / res;
    }
  }

  const double nodes = layout.nodes();
  const double gpus_per_node = layout.gpus_per_node;
  const auto alloc = per_tick([&](std::size_t k) { return at(ts.busy_nodes, k); });
  const auto down = per_tick([&](std::size_t k) { return at(ts.down_nodes, k); });

  SeriesSink sink(out, grid, options);
  const Labels labels{{"job", options.job}, {"instance", "slurmctld:8080"}};
  const auto gauge = [&](const char* name, const char* help, const std::vector<double>& values) {
    sink.family(name, SeriesType::Gauge, help);
    sink.series(labels, values);
  };
  gauge("slurm_queue_pending", "Pending jobs in queue",
        per_tick([&](std::size_t k) { return at(ts.queue_length, k); }));
  gauge("slurm_queue_running", "Running jobs in the cluster", running);
  gauge("slurm_nodes_alloc", "Allocated nodes", alloc);
  gauge("slurm_nodes_idle", "Idle nodes",
        per_tick([&](std::size_t k) { return std::max(0.0, nodes - alloc[k] - down[k]); }));
  gauge("slurm_nodes_down", "Down nodes", down);
  gauge("slurm_gpus_alloc", "Allocated GPUs", per_tick([&](std::size_t k) { return alloc[k] * gpus_per_node; }));
  gauge("slurm_gpus_idle", "Idle GPUs",
        per_tick([&](std::size_t k) { return std::max(0.0, nodes - alloc[k] - down[k]) * gpus_per_node; }));
  gauge("slurm_gpus_total", "Total GPUs", per_tick([&](std::size_t) { return nodes * gpus_per_node; }));
  gauge("slurm_gpus_utilization", "Total GPU utilization",
        per_tick([&](std::size_t k) { return nodes > 0.0 ? alloc[k] / nodes : 0.0; }));
  sink.family("fmsim_cluster_utilisation_ratio", SeriesType::Gauge,
              "Allocated nodes / scheduled nodes (fmsim cluster twin).", "ratio");
  sink.series(labels, per_tick([&](std::size_t k) { return nodes > 0.0 ? alloc[k] / nodes : 0.0; }));
  // Serving replica units (JobSpec::deployment) beside the rest, when the replay has any.
  std::vector<double> serving(n, 0.0);
  bool any_serving = false;
  for (const auto& j : result.jobs) {
    for (const auto& [start, end0] : j.runs) {
      any_serving = true;
      const double end = end0 >= 0.0 ? end0 : static_cast<double>(n) * res;
      for (auto k = static_cast<std::size_t>(start / res); k < n && static_cast<double>(k) * res < end; ++k) {
        const double a = std::max(start, static_cast<double>(k) * res);
        const double b = std::min(end, static_cast<double>(k + 1) * res);
        if (b > a) serving[k] += (b - a) / res * static_cast<double>(j.nodes.size());
      }
    }
  }
  if (any_serving) {
    sink.family("fmsim_cluster_serving_nodes", SeriesType::Gauge,
                "Nodes held by serving deployments' replica units (fmsim cluster twin).");
    sink.series(labels, serving);
    sink.family("fmsim_cluster_batch_nodes", SeriesType::Gauge,
                "Nodes held by batch and training jobs (fmsim cluster twin).");
    sink.series(labels, per_tick([&](std::size_t k) { return std::max(0.0, alloc[k] - serving[k]); }));
  }
  sink.family("fmsim_cluster_fragmented_nodes", SeriesType::Gauge,
              "Free nodes while the top pending job cannot be placed on them (fmsim cluster twin).");
  sink.series(labels, per_tick([&](std::size_t k) { return at(ts.fragmented_nodes, k); }));
  sink.family("fmsim_cluster_fragmentation_ratio", SeriesType::Gauge,
              "Fragmented nodes / scheduled nodes (fmsim cluster twin).", "ratio");
  sink.series(labels, per_tick([&](std::size_t k) { return nodes > 0.0 ? at(ts.fragmented_nodes, k) / nodes : 0.0; }));
  return sink.summary();
}

}  // namespace fmsim::telemetry
