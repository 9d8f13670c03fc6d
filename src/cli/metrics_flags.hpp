// --metrics-out and its companions, shared by `fmsim run`, `serve` and `cluster`.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "jobspec/cluster.hpp"
#include "jobspec/metrics.hpp"
#include "observability/openmetrics.hpp"
#include "telemetry/training_metrics.hpp"

namespace fmsim::cli {

using jobspec::MetricsFlags;
using jobspec::resolve_metrics_options;

void add_metrics_flags(CLI::App& cmd, MetricsFlags& flags);

/// Unix seconds -> "2026-01-01T00:00:00Z".
std::string format_unix_time(std::int64_t unix_s);

/// Writes the series `write` emits into flags.out: as OpenMetrics text into DIR/<file> (# EOF is
/// added), or with --metrics-format tsdb as a Prometheus TSDB block DIR/<ULID>/. Both are written
/// aside and renamed into place, so a failed run leaves nothing half-written. Returns what --json
/// reports under "metrics" and prints nothing.
nlohmann::json write_metrics_file(const MetricsFlags& flags, const std::string& file,
                                  const std::function<telemetry::WriteSummary(observability::MetricsOutput&)>& write);

/// `fmsim cluster --metrics-out DIR`: DIR/cluster.om, the Slurm exporter's series of the job's
/// replay under its first policy (telemetry::write_cluster_metrics, job label "slurm" by default);
/// nullopt without the flag.
std::optional<nlohmann::json> write_cluster_metrics_file(const MetricsFlags& flags, const jobspec::ClusterJob& job);

/// One line for the text report: "Metrics: DIR/run.om: 123 series, 4,567 samples, 1.2 MB (0.05 s)".
std::string metrics_line(const nlohmann::json& metrics);

}  // namespace fmsim::cli
