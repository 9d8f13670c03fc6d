// --metrics-out and its companions as a setting of the run's time series: which series, how
// often, from when, under which job label and in which format; shared by `fmsim run`, `serve` and
// `cluster` (src/cli/metrics_flags declares the flags and writes the files).
#pragma once

#include <string>

#include "observability/metrics_output.hpp"
#include "telemetry/training_metrics.hpp"

namespace fmsim::jobspec {

struct MetricsFlags {
  std::string out;                ///< --metrics-out DIR ("" = no metrics)
  bool per_gpu = false;           ///< --metrics-per-gpu (the default; kept so scripts that pass it still run)
  bool per_node = false;          ///< --metrics-per-node: one dcgm series per node instead of per GPU
  std::string resolution = "1m";  ///< --metrics-resolution
  std::string heartbeat = "4m";   ///< --metrics-heartbeat ("0" = changes only)
  std::string start = "2026-01-01T00:00:00Z";  ///< --metrics-start (ISO 8601 UTC or Unix seconds)
  std::string job;                             ///< --job-name (alias --metrics-job) (default: set by the command)
  std::string format = "openmetrics";          ///< --metrics-format: a word of observability::kMetricsFormatWords
  std::string max_size = "10GiB";              ///< --metrics-max-size: the largest OpenMetrics file written
};

/// The options the flags ask for; InputError naming the flag on a bad value.
telemetry::SeriesOptions resolve_metrics_options(const MetricsFlags& flags, const std::string& default_job);

/// The output format --metrics-format names; InputError listing the words otherwise.
observability::MetricsFormat resolve_metrics_format(const MetricsFlags& flags);

}  // namespace fmsim::jobspec
