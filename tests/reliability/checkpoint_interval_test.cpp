// Young's and Daly's optimum checkpoint intervals, Lambert W, and Daly's cost model.
#include "reliability/checkpoint_interval.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace fmsim::reliability {
namespace {

using core::minutes;
using core::seconds;

TEST(LambertW, KnownValues) {
  // W0(0) = 0, W0(e) = 1, W0(-1/e) = -1, W0(1) = Omega = 0.5671432904097838.
  EXPECT_DOUBLE_EQ(lambert_w0(0.0), 0.0);
  EXPECT_NEAR(lambert_w0(std::exp(1.0)), 1.0, 1e-14);
  EXPECT_NEAR(lambert_w0(-1.0 / std::exp(1.0)), -1.0, 1e-7);
  EXPECT_NEAR(lambert_w0(1.0), 0.5671432904097838, 1e-14);
  // Defining identity W e^W = x near the branch point.
  const double w = lambert_w0(-0.36);
  EXPECT_NEAR(w * std::exp(w), -0.36, 1e-14);
}

TEST(Young, SquareRootOfTwoDeltaM) {
  // sqrt(2 x 5 min x 1440 min) = 120 min.
  EXPECT_NEAR(young_interval(minutes(5), minutes(1440)).value(), minutes(120).value(), 1e-9);
}

TEST(Daly, HigherOrderFormula) {
  // M = 6 h = 360 min, delta = 5 min: sqrt(3600) = 60; d = 5/720; 60 (1 + sqrt(d)/3 + d/9) - 5 = 56.7129 min.
  const double d = 5.0 / 720.0;
  const double expected = 60.0 * (1.0 + std::sqrt(d) / 3.0 + d / 9.0) - 5.0;
  EXPECT_NEAR(daly_interval(minutes(5), minutes(360)).value() / 60.0, expected, 1e-9);
  // delta >= 2M: checkpoint every M.
  EXPECT_DOUBLE_EQ(daly_interval(minutes(30), minutes(10)).value(), minutes(10).value());
}

TEST(Daly, ExactOptimumSolvesTheFirstOrderCondition) {
  // d/dtau [(e^{(tau+delta)/M} - 1)/tau] = 0  <=>  e^{(tau+delta)/M} (1 - tau/M) = 1.
  for (const double m : {15.0, 360.0, 1440.0}) {
    const double tau = daly_exact_interval(minutes(5), minutes(m)).value() / 60.0;
    EXPECT_NEAR(std::exp((tau + 5.0) / m) * (1.0 - tau / m), 1.0, 1e-12) << m;
  }
}

TEST(Daly, ExactOptimumMinimisesWallTime) {
  // T_w/T_s = M e^{R/M}(e^{(tau+delta)/M} - 1)/tau is larger 1% either side of the optimum.
  const auto m = minutes(360);
  const auto tau = daly_exact_interval(minutes(5), m);
  const double best = daly_wall_time_ratio(tau, minutes(5), minutes(10), m);
  EXPECT_LT(best, daly_wall_time_ratio(tau * 1.01, minutes(5), minutes(10), m));
  EXPECT_LT(best, daly_wall_time_ratio(tau * 0.99, minutes(5), minutes(10), m));
}

TEST(Daly, WallTimeRatioClosedForm) {
  // M = 100 s, R = 10 s, tau = 20 s, delta = 5 s: 100 e^{0.1} (e^{0.25} - 1) / 20.
  const double expected = 100.0 * std::exp(0.1) * (std::exp(0.25) - 1.0) / 20.0;
  EXPECT_NEAR(daly_wall_time_ratio(seconds(20), seconds(5), seconds(10), seconds(100)), expected, 1e-12);
  EXPECT_NEAR(daly_ettr(seconds(20), seconds(5), seconds(10), seconds(100)), 1.0 / expected, 1e-12);
}

TEST(FirstOrder, EttrAtYoungsInterval) {
  // At tau = sqrt(2 delta M): 1 - delta/tau - tau/2M - R/M = 1 - sqrt(2 delta/M) - R/M.
  const auto m = seconds(11134.0);
  const auto tau = young_interval(seconds(10), m);
  EXPECT_NEAR(first_order_ettr(tau, seconds(10), seconds(300), m), 1.0 - std::sqrt(20.0 / 11134.0) - 300.0 / 11134.0,
              1e-12);
}

}  // namespace
}  // namespace fmsim::reliability
