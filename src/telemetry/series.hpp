// Sampling grid and change-point emission shared by the run, serve and cluster metrics.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "observability/metrics_output.hpp"
#include "telemetry/training_metrics.hpp"

namespace fmsim::telemetry {

/// A counter's dropped ticks lie within this share of its mean increase per tick of the line
/// through the written samples: rate() over one resolution is off by at most 1% of the mean rate.
inline constexpr double kCounterTolerance = 0.005;

/// Ticks 0, resolution, 2 resolution, ... up to the horizon (seconds of simulated time).
struct Grid {
  std::size_t ticks = 0;
  std::int64_t resolution_s = 60;
  std::int64_t start_unix_s = 0;
  [[nodiscard]] double time(std::size_t k) const { return static_cast<double>(k) * static_cast<double>(resolution_s); }
  [[nodiscard]] std::int64_t timestamp(std::size_t k) const {
    return start_unix_s + static_cast<std::int64_t>(k) * resolution_s;
  }
};

/// The grid of a run of `horizon_s` seconds (at least two ticks).
Grid make_grid(double horizon_s, const SeriesOptions& options);

/// Writes families of series whose values are given per tick. To an output that does not thin
/// (a TSDB block) every tick is written. To one that does (OpenMetrics text), a gauge sample is written at the
/// first and last tick, at every change of value (a query reads the last value before it, so the
/// step function is exact), and wherever the gap since the last written sample would otherwise
/// exceed the heartbeat. A counter is written where a straight line from its last written sample
/// would miss a tick's value by more than kCounterTolerance of its mean increase per tick (rate()
/// interpolates linearly between samples; every written sample is exact), and at the heartbeat.
class SeriesSink {
 public:
  SeriesSink(observability::MetricsOutput& out, const Grid& grid, const SeriesOptions& options);

  void family(std::string_view name, observability::SeriesType type, std::string_view help, std::string_view unit = {},
              bool exporter_name = false);
  void series(const observability::Labels& labels, const std::vector<double>& values);
  /// Several series with the same values (the nodes of a synchronous job): ticks chosen and samples
  /// formatted once, copied after each series' labels.
  void series(const std::vector<observability::Labels>& labels, const std::vector<double>& values);
  /// A histogram series written at every tick: fill(k, cumulative (bounds.size() + 1), sum).
  void histogram(const observability::Labels& labels, const std::vector<double>& bounds,
                 const std::function<void(std::size_t, std::vector<double>&, double&)>& fill);

  [[nodiscard]] WriteSummary summary() const;

 private:
  void choose_ticks(const std::vector<double>& values);

  observability::MetricsOutput& out_;
  Grid grid_;
  std::int64_t heartbeat_s_;
  observability::SeriesType type_ = observability::SeriesType::Gauge;
  std::vector<std::size_t> ticks_;
  std::uint64_t series_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace fmsim::telemetry
