// Streaming writer of time series in the OpenMetrics text format (the format Prometheus backfills
// from with `promtool tsdb create-blocks-from openmetrics`).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "observability/metrics_output.hpp"

namespace fmsim::observability {

/// A write to the output failed (disk full); the message names the file.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes metric families, each made of series, each made of timestamped samples:
///
///     # HELP fmsim_step_time_seconds Time of one training step.
///     # TYPE fmsim_step_time_seconds gauge
///     # UNIT fmsim_step_time_seconds seconds
///     fmsim_step_time_seconds{job="llama"} 7.25 1767225600
///     ...
///     # EOF
///
/// Shape rules (OpenMetrics 1.0, as Prometheus' parsers read it):
/// - all samples of a family are contiguous (call family() once per name), all samples of a
///   series are contiguous, timestamps strictly increase within a series;
/// - timestamps are integer seconds since the Unix epoch, so that both `promtool check metrics`
///   (text format 0.0.4, integer timestamps) and the OpenMetrics backfill parse the same file;
/// - a counter family is named with its "_total" suffix in TYPE and HELP and in its samples (what
///   promtool's linter and Prometheus' OpenMetrics parser both accept), its values never
///   decrease, and it carries no UNIT line; a gauge or histogram with a unit has a name ending in
///   "_<unit>" (Prometheus rejects a UNIT that is not a suffix of the name);
/// - a histogram sample is its cumulative buckets (ending with le="+Inf"), _count and _sum.
/// Output is written through a fixed-size buffer to `out` (memory does not grow with the number
/// of samples) and is a pure function of the calls made: identical calls, identical bytes.
/// Violations of these rules are programming errors (FMSIM_CHECK).
class OpenMetricsWriter final : public MetricsOutput {
 public:
  /// Writes to `out` (not owned, not closed). Throws WriteError naming `path_for_errors` when a
  /// write fails (disk full). With `out` null it writes nothing and only counts: bytes_written()
  /// is then the size the same calls would write (a run's file sized before it is written).
  OpenMetricsWriter(std::FILE* out, std::string path_for_errors);
  OpenMetricsWriter(const OpenMetricsWriter&) = delete;
  OpenMetricsWriter& operator=(const OpenMetricsWriter&) = delete;
  ~OpenMetricsWriter() override;

  /// Starts a family. `unit` may be empty. Names must be new in this file. `exporter_name`: a
  /// counter keeps the name a real exporter gives it even without "_total" (the EFA exporter's
  /// node_amazonefa_tx_bytes); promtool's linter reports those, as it does on the exporter's output.
  void family(std::string_view name, SeriesType type, std::string_view help, std::string_view unit = {},
              bool exporter_name = false) override;
  /// Starts a series of the current family with these labels (label names valid and distinct).
  void series(const Labels& labels);
  /// One gauge or counter sample of the current series at `timestamp_s`.
  void sample(std::int64_t timestamp_s, double value);
  /// The same samples under each of `label_sets` (the identical nodes of a synchronous job): the
  /// samples are checked and formatted once, then copied after each series' labels. Each label
  /// set starts a series of the current (gauge or counter) family, as series() would.
  void shared_series(const std::vector<Labels>& label_sets, const std::vector<std::int64_t>& timestamps_s,
                     const std::vector<double>& values) override;
  /// histogram_sample() at each timestamp.
  void histogram_series(const Labels& labels, const std::vector<double>& bounds,
                        const std::vector<std::int64_t>& timestamps_s,
                        const std::vector<std::vector<double>>& cumulative, const std::vector<double>& sums) override;
  [[nodiscard]] bool thins() const override { return true; }
  /// One histogram sample: `bounds` are the finite upper bounds (increasing), `cumulative` the
  /// counts of observations <= each bound plus the total as last element (bounds.size() + 1
  /// values, non-decreasing), `sum` the sum of the observations.
  void histogram_sample(std::int64_t timestamp_s, const std::vector<double>& bounds,
                        const std::vector<double>& cumulative, double sum);
  /// Writes "# EOF" and flushes. Nothing may follow.
  void finish();

  [[nodiscard]] std::uint64_t samples_written() const { return samples_; }
  [[nodiscard]] std::uint64_t bytes_written() const { return bytes_; }

 private:
  void append(std::string_view text);
  void append_value(double v);
  void append_int(std::int64_t v);
  void flush();

  std::FILE* out_;
  std::string path_;
  std::string buffer_;
  std::vector<std::string> families_;  // names written, sorted on insert (duplicate check)
  std::string family_;
  SeriesType type_ = SeriesType::Gauge;
  std::string prefix_;  // "name{labels} " of the current series, or "name{labels" for histograms
  bool in_series_ = false;
  std::int64_t last_timestamp_ = 0;
  double last_value_ = 0.0;
  bool has_sample_ = false;
  bool finished_ = false;
  std::uint64_t samples_ = 0;
  std::uint64_t bytes_ = 0;
};

/// Shortest decimal that reads back to the same double; NaN, +Inf, -Inf as OpenMetrics spells them.
void append_metric_value(std::string& out, double v);

}  // namespace fmsim::observability
