// Where time series of simulated runs go: an OpenMetrics text file (OpenMetricsWriter) or a
// Prometheus TSDB block (TsdbBlockWriter). Both take families of series of timestamped samples.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/vocabulary.hpp"

namespace fmsim::observability {

/// Which of the two outputs: OpenMetrics text, or a Prometheus TSDB block.
enum class MetricsFormat { OpenMetrics, Tsdb };
/// The words of --metrics-format.
inline constexpr core::Word<MetricsFormat> kMetricsFormatWordList[] = {
    {MetricsFormat::OpenMetrics, "openmetrics", "om"},
    {MetricsFormat::Tsdb, "tsdb", "block"},
};
inline constexpr core::Vocabulary<MetricsFormat> kMetricsFormatWords{"metrics format", kMetricsFormatWordList};

/// OpenMetrics metric types fmsim writes.
enum class SeriesType { Gauge, Counter, Histogram };

/// Labels of one series, in the order they are written.
using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricsOutput {
 public:
  virtual ~MetricsOutput() = default;

  /// Starts a family. `unit` may be empty. Names must be new in this output. `exporter_name`: a
  /// counter keeps the name a real exporter gives it even without "_total".
  virtual void family(std::string_view name, SeriesType type, std::string_view help, std::string_view unit = {},
                      bool exporter_name = false) = 0;
  /// The same samples under each of `label_sets` (one series each) of the current gauge or counter
  /// family; timestamps in seconds, strictly increasing.
  virtual void shared_series(const std::vector<Labels>& label_sets, const std::vector<std::int64_t>& timestamps_s,
                             const std::vector<double>& values) = 0;
  /// One histogram series of the current histogram family: at each timestamp the cumulative
  /// counts (bounds.size() + 1 values, the total last) and the sum of the observations.
  virtual void histogram_series(const Labels& labels, const std::vector<double>& bounds,
                                const std::vector<std::int64_t>& timestamps_s,
                                const std::vector<std::vector<double>>& cumulative,
                                const std::vector<double>& sums) = 0;
  /// True where every written sample costs bytes (text): series are then written where they
  /// change (plus a heartbeat). False where a repeated value costs about two bits (TSDB chunks):
  /// every tick is written.
  [[nodiscard]] virtual bool thins() const = 0;
};

}  // namespace fmsim::observability
