// Merging equal-width time buckets into wider ones for charts.
#include "report/series.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace fmsim::report {

CoarseSeries coarsen(std::span<const double> values, std::size_t max_points) {
  FMSIM_CHECK(max_points >= 1, "coarsen: max_points must be at least 1");
  constexpr std::array<std::size_t, 13> kFactors{1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 168, 336, 720};
  CoarseSeries out;
  out.factor = (values.size() + max_points - 1) / max_points;
  for (const std::size_t f : kFactors) {
    if ((values.size() + f - 1) / f <= max_points) {
      out.factor = f;
      break;
    }
  }
  if (out.factor == 0) out.factor = 1;
  for (std::size_t start = 0; start < values.size(); start += out.factor) {
    const std::size_t end = std::min(values.size(), start + out.factor);
    double sum = 0;
    for (std::size_t i = start; i < end; ++i) sum += values[i];
    out.mean.push_back(sum / static_cast<double>(end - start));
  }
  return out;
}

}  // namespace fmsim::report
