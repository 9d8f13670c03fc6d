// Export of simulated metrics in the Prometheus text exposition format, version 0.0.4.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fmsim::observability {

/// Prometheus metric types fmsim emits. A gauge is a value that can go up and down (step time,
/// memory); a counter only grows (tokens processed) and its name ends in "_total".
enum class MetricType { Gauge, Counter };

/// One sample: a metric name, its labels and a value. Several samples may share a name (with
/// different labels); they must then agree on `help` and `type`.
///
/// Naming (Prometheus conventions, see docs/models/observability.md): prefix "fmsim_", snake_case,
/// base units as a suffix ("_seconds", "_bytes", "_ratio" for 0..1 fractions, "_total" for
/// counters), e.g. fmsim_step_time_seconds, fmsim_memory_bytes{kind="weights"}.
struct Metric {
  std::string name;  ///< [a-zA-Z_:][a-zA-Z0-9_:]*
  std::string help;  ///< one line of documentation (newlines and backslashes are escaped)
  MetricType type = MetricType::Gauge;
  std::vector<std::pair<std::string, std::string>> labels;  ///< names [a-zA-Z_][a-zA-Z0-9_]*, not "__"-prefixed
  double value = 0.0;                                       ///< NaN and +-infinity are written as NaN, +Inf, -Inf
};

/// Shorthand constructors.
Metric gauge(std::string name, std::string help, double value,
             std::vector<std::pair<std::string, std::string>> labels = {});
Metric counter(std::string name, std::string help, double value,
               std::vector<std::pair<std::string, std::string>> labels = {});

/// Renders metrics as Prometheus text format 0.0.4 (Content-Type `text/plain; version=0.0.4`):
///
///     # HELP fmsim_memory_bytes Memory per GPU by kind.
///     # TYPE fmsim_memory_bytes gauge
///     fmsim_memory_bytes{kind="weights"} 1.75e+10
///
/// Samples are grouped by name, names in order of first appearance, samples within a name in
/// input order; every name gets one HELP and one TYPE line before its samples. Label values
/// escape `\` as `\\`, `"` as `\"` and newline as `\n`; HELP text escapes `\` and newline.
/// Values use the shortest decimal form that reads back to the same double. No timestamps
/// (simulated results have no wall-clock time). Deterministic.
/// Preconditions (FMSIM_CHECK, they are programming errors): valid metric and label names, no
/// duplicate label names in a sample, counters named "*_total" with non-negative values, one
/// help/type per name.
std::string to_prometheus_text(const std::vector<Metric>& metrics);

/// True for a valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*.
bool is_valid_metric_name(std::string_view name);
/// True for a valid label name: [a-zA-Z_][a-zA-Z0-9_]* and not starting with "__" (reserved).
bool is_valid_label_name(std::string_view name);

}  // namespace fmsim::observability
