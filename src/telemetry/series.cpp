// Sampling grid and change-point emission (see series.hpp).
#include "telemetry/series.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace fmsim::telemetry {
namespace {

bool differs(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
  return std::abs(a - b) > 1e-9 * std::max({std::abs(a), std::abs(b), 1e-300});
}

}  // namespace

Grid make_grid(double horizon_s, const SeriesOptions& options) {
  FMSIM_CHECK(options.resolution_s > 0, "metrics resolution must be positive");
  FMSIM_CHECK(horizon_s > 0.0, "metrics need a positive duration");
  Grid g;
  g.resolution_s = options.resolution_s;
  g.start_unix_s = options.start_unix_s;
  g.ticks = static_cast<std::size_t>(std::floor(horizon_s / static_cast<double>(options.resolution_s))) + 1;
  g.ticks = std::max<std::size_t>(g.ticks, 2);
  return g;
}

SeriesSink::SeriesSink(observability::MetricsOutput& out, const Grid& grid, const SeriesOptions& options)
    : out_(out), grid_(grid), heartbeat_s_(options.heartbeat_s) {}

void SeriesSink::family(std::string_view name, observability::SeriesType type, std::string_view help,
                        std::string_view unit, bool exporter_name) {
  out_.family(name, type, help, unit, exporter_name);
  type_ = type;
}

void SeriesSink::choose_ticks(const std::vector<double>& values) {
  const std::size_t n = grid_.ticks;
  FMSIM_CHECK(values.size() == n, "one value per tick");
  ticks_.clear();
  if (!out_.thins()) {
    for (std::size_t k = 0; k < n; ++k) ticks_.push_back(k);
    return;
  }
  ticks_.push_back(0);
  // A tick is kept, whatever its value, when the gap from the last kept one to the next tick
  // would otherwise exceed the heartbeat.
  const auto beat = [&](std::size_t k, std::size_t last) {
    return heartbeat_s_ > 0 && static_cast<std::int64_t>(k + 1 - last) * grid_.resolution_s > heartbeat_s_;
  };
  if (type_ != observability::SeriesType::Counter) {
    std::size_t last = 0;
    for (std::size_t k = 1; k < n; ++k) {
      if (k + 1 == n || differs(values[k], values[k - 1]) || beat(k, last)) {
        ticks_.push_back(k);
        last = k;
      }
    }
    return;
  }
  // Counters: swinging door. The straight line from the last kept sample must pass within +-e of
  // every dropped one; the slopes that still do so form [lo, hi], narrowed at each tick. When the
  // range empties at tick k, tick k-1 is kept (exact) and the door reopens from it.
  const double mean_step = n > 1 ? std::abs(values[n - 1] - values[0]) / static_cast<double>(n - 1) : 0.0;
  const double tolerance = kCounterTolerance * mean_step;
  std::size_t last = 0;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  const auto narrow = [&](std::size_t k) {
    const double e = std::max(tolerance, 1e-12 * std::abs(values[k]));
    const double dt = static_cast<double>(k - last);
    lo = std::max(lo, (values[k] - e - values[last]) / dt);
    hi = std::min(hi, (values[k] + e - values[last]) / dt);
  };
  const auto keep = [&](std::size_t k) {
    ticks_.push_back(k);
    last = k;
    lo = -std::numeric_limits<double>::infinity();
    hi = std::numeric_limits<double>::infinity();
  };
  for (std::size_t k = 1; k < n; ++k) {
    if (k + 1 == n) {
      keep(k);
      break;
    }
    narrow(k);
    if (lo > hi) {  // k - 1 > last here: from an adjacent kept tick the range cannot empty
      keep(k - 1);
      narrow(k);
    }
    if (beat(k, last)) keep(k);
  }
}

void SeriesSink::series(const observability::Labels& labels, const std::vector<double>& values) {
  series(std::vector<observability::Labels>{labels}, values);
}

void SeriesSink::series(const std::vector<observability::Labels>& labels, const std::vector<double>& values) {
  choose_ticks(values);
  std::vector<std::int64_t> timestamps;
  std::vector<double> kept;
  timestamps.reserve(ticks_.size());
  kept.reserve(ticks_.size());
  for (std::size_t k : ticks_) {
    timestamps.push_back(grid_.timestamp(k));
    kept.push_back(values[k]);
  }
  out_.shared_series(labels, timestamps, kept);
  series_ += labels.size();
  samples_ += labels.size() * ticks_.size();
}

void SeriesSink::histogram(const observability::Labels& labels, const std::vector<double>& bounds,
                           const std::function<void(std::size_t, std::vector<double>&, double&)>& fill) {
  std::vector<std::int64_t> timestamps(grid_.ticks);
  std::vector<std::vector<double>> cumulative(grid_.ticks, std::vector<double>(bounds.size() + 1));
  std::vector<double> sums(grid_.ticks, 0.0);
  for (std::size_t k = 0; k < grid_.ticks; ++k) {
    timestamps[k] = grid_.timestamp(k);
    fill(k, cumulative[k], sums[k]);
  }
  out_.histogram_series(labels, bounds, timestamps, cumulative, sums);
  ++series_;
  samples_ += grid_.ticks;
}

WriteSummary SeriesSink::summary() const {
  return WriteSummary{.series = series_,
                      .samples = samples_,
                      .first_timestamp_s = grid_.timestamp(0),
                      .last_timestamp_s = grid_.timestamp(grid_.ticks - 1)};
}

}  // namespace fmsim::telemetry
