// Response-length laws of RL rollouts (src/rl/lengths.hpp).
#include "rl/lengths.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fmsim::rl {
namespace {

// Phi^-1(0.975) = 1.959964, Phi^-1(0.5) = 0, Phi^-1(0.01) = -2.326348 (normal tables).
TEST(Lengths, NormalQuantileMatchesTables) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(normal_quantile(0.01), -2.326348, 1e-6);
}

// The mean the user gives is the mean after the cap (what frameworks log): the law's location
// is solved so that E[min(L, cap)] = mean.
TEST(Lengths, CappedMeanIsTheRequestedMean) {
  LengthDistribution d{LengthLaw::Lognormal, 6144.0, 0.8, 16384};
  EXPECT_NEAR(capped_mean(d), 6144.0, 0.01 * 6144.0);
  const auto v = sample_lengths(d, 4096, 3);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  EXPECT_NEAR(mean, 6144.0, 0.02 * 6144.0);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 16384);  // the tail is cut at the cap
}

// P(L > cap) for ln L ~ N(mu, sigma^2) is Phi((mu - ln cap) / sigma); the stratified sample
// hits the cap in the same fraction of responses (to one stratum).
TEST(Lengths, TruncatedFractionMatchesTheSample) {
  LengthDistribution d{LengthLaw::Lognormal, 6144.0, 0.8, 16384};
  const double f = truncated_fraction(d);
  EXPECT_GT(f, 0.01);
  EXPECT_LT(f, 0.2);
  const auto v = sample_lengths(d, 10000, 1);
  const double hit = static_cast<double>(std::count(v.begin(), v.end(), 16384)) / static_cast<double>(v.size());
  EXPECT_NEAR(hit, f, 0.002);
}

// Fixed: every response has the mean; uniform on [0, 2 mean]: the quantile is 2 mean p.
TEST(Lengths, FixedAndUniformLaws) {
  LengthDistribution fixed{LengthLaw::Fixed, 1000.0, 0.8, 4096};
  EXPECT_DOUBLE_EQ(length_quantile(fixed, 0.99), 1000.0);
  LengthDistribution uniform{LengthLaw::Uniform, 1000.0, 0.8, 4096};
  EXPECT_NEAR(length_quantile(uniform, 0.25), 500.0, 1e-9);
  EXPECT_DOUBLE_EQ(truncated_fraction(uniform), 0.0);
}

// The sample is a permutation of the quantiles: the seed changes the order, not the multiset.
TEST(Lengths, SeedShufflesOnly) {
  LengthDistribution d{LengthLaw::Lognormal, 2048.0, 1.0, 8192};
  auto a = sample_lengths(d, 512, 1), b = sample_lengths(d, 512, 2);
  EXPECT_NE(a, b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace fmsim::rl
