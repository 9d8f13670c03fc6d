// Young's and Daly's checkpoint intervals and Daly's cost model (formulas in the header).
#include "reliability/checkpoint_interval.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fmsim::reliability {

double lambert_w0(double x) {
  const double e = std::exp(1.0);
  FMSIM_CHECK(x >= -1.0 / e - 1e-15, "lambert_w0 needs x >= -1/e");
  if (x <= -1.0 / e) return -1.0;
  // Start near the branch point with its series, elsewhere with log1p; then Halley's iteration.
  double w;
  if (x < -0.25) {
    const double p = std::sqrt(2.0 * (e * x + 1.0));
    w = -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p;
  } else {
    w = std::log1p(x);
    if (x > 3.0) w -= std::log(w);
  }
  for (int i = 0; i < 50; ++i) {
    const double ew = std::exp(w);
    const double f = w * ew - x;
    const double wp1 = w + 1.0;
    if (std::fabs(wp1) < 1e-300) break;
    const double step = f / (ew * wp1 - (w + 2.0) * f / (2.0 * wp1));
    w -= step;
    if (std::fabs(step) <= 1e-15 * (1.0 + std::fabs(w))) break;
  }
  return w;
}

core::Seconds young_interval(core::Seconds delta, core::Seconds mtbf) {
  return core::Seconds(std::sqrt(2.0 * delta.value() * mtbf.value()));
}

core::Seconds daly_interval(core::Seconds delta, core::Seconds mtbf) {
  const double d = delta.value();
  const double m = mtbf.value();
  if (d >= 2.0 * m) return mtbf;
  const double r = d / (2.0 * m);
  return core::Seconds(std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - d);
}

core::Seconds daly_exact_interval(core::Seconds delta, core::Seconds mtbf) {
  const double m = mtbf.value();
  return core::Seconds(m * (1.0 + lambert_w0(-std::exp(-(delta.value() / m + 1.0)))));
}

double daly_wall_time_ratio(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf) {
  const double m = mtbf.value();
  return m * std::exp(restart.value() / m) * std::expm1((tau.value() + delta.value()) / m) / tau.value();
}

double daly_ettr(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf) {
  return 1.0 / daly_wall_time_ratio(tau, delta, restart, mtbf);
}

double first_order_ettr(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf) {
  const double m = mtbf.value();
  return 1.0 - delta.value() / tau.value() - tau.value() / (2.0 * m) - restart.value() / m;
}

}  // namespace fmsim::reliability
