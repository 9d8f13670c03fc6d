// Summary statistics shared by the validation comparisons.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace fmsim::jobspec {

/// The q-quantile (0..1) of v by linear interpolation between order statistics; 0 when empty.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * (static_cast<double>(v.size()) - 1.0);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace fmsim::jobspec
