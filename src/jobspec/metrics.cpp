// --metrics-out and its companions resolved (see metrics.hpp).
#include "jobspec/metrics.hpp"

#include <fmt/format.h>

#include <cmath>

#include "config/flag_values.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::jobspec {
telemetry::SeriesOptions resolve_metrics_options(const MetricsFlags& flags, const std::string& default_job) {
  telemetry::SeriesOptions o;
  o.job = flags.job.empty() ? default_job : flags.job;
  const double res = config::parse_duration_flag(flags.resolution, "--metrics-resolution").value();
  if (res < 1.0 || res != std::floor(res)) {
    throw core::InputError::flag(
        "--metrics-resolution", fmt::format("\"{}\" must be a whole number of seconds, at least 1s", flags.resolution));
  }
  o.resolution_s = static_cast<std::int64_t>(res);
  const std::string hb(core::trim_blanks(flags.heartbeat));
  const double heartbeat =
      hb == "0" ? 0.0 : config::parse_duration_flag(flags.heartbeat, "--metrics-heartbeat").value();
  if (heartbeat != 0.0 && heartbeat < res) {
    throw core::InputError::flag("--metrics-heartbeat",
                                 fmt::format("\"{}\" is shorter than --metrics-resolution {}; use 0 "
                                             "(changes only) or at least the resolution",
                                             flags.heartbeat, flags.resolution));
  }
  o.heartbeat_s = static_cast<std::int64_t>(heartbeat);
  o.start_unix_s = config::parse_unix_time(flags.start, "--metrics-start");
  if (flags.per_gpu && flags.per_node) {
    throw core::InputError::flag("--metrics-per-node", "excludes --metrics-per-gpu (per GPU is the default)");
  }
  o.granularity = flags.per_node ? telemetry::Granularity::Node : telemetry::Granularity::Gpu;
  resolve_metrics_format(flags);
  (void)config::parse_bytes_flag(flags.max_size, "--metrics-max-size");
  return o;
}

observability::MetricsFormat resolve_metrics_format(const MetricsFlags& flags) {
  return config::word_flag(observability::kMetricsFormatWords, flags.format, "--metrics-format");
}

}  // namespace fmsim::jobspec
