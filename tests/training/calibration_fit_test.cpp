// Fitting calibration parameters: recovery of a known value, the pull of the priors, and the
// deduplicating MoE dispatcher's traffic ratio.
#include "training/calibration_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_fixtures.hpp"

namespace fmsim::training {
namespace {

using testing::free_network;
using testing::test_calibration;
using testing::test_job;

parallelism::Layout fit_layout(int mbs, std::int64_t gbs) {
  parallelism::Layout l;
  l.micro_batch = mbs;
  l.global_batch = gbs;
  l.recompute = parallelism::Recompute::None;
  return l;
}

// Step times computed with GEMM efficiency 0.6 are "measurements"; a fit started from a prior of
// 0.7 with no anchor recovers 0.6 (the step time is monotone in it), and the reported losses are
// the data loss before and after.
std::vector<Measurement> synthetic(double true_efficiency) {
  auto truth = test_calibration();
  truth.gpus[hardware::Architecture::Hopper].gemm_efficiency_bf16 = true_efficiency;
  std::vector<Measurement> out;
  for (std::int64_t seq : {512, 1024, 2048, 4096, 8192, 16384, 32768}) {
    auto job = test_job(1, fit_layout(1, 8), seq);
    const auto r = estimate_step(job, truth, free_network());
    out.push_back(Measurement{job, r.step_time.value(), "synthetic", free_network()});
  }
  return out;
}

TEST(CalibrationFit, RecoversAKnownEfficiencyFromItsPrior) {
  const auto data = synthetic(0.6);
  auto cal = test_calibration();
  cal.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  const auto rep = fit_calibration(cal, data, FitOptions{.rounds = 12, .from_priors = true, .anchor = 0.0});
  EXPECT_NEAR(cal.gpus[hardware::Architecture::Hopper].gemm_efficiency_bf16, 0.6, 0.6 * 0.02);
  EXPECT_LT(rep.loss_after, 0.01);
}

// The prior term anchor x ln(value / prior)^2 holds a parameter near its benchmark when the data
// barely prefers another value: with a heavy anchor the fit stays within 5% of the prior.
TEST(CalibrationFit, HeavyAnchorHoldsThePrior) {
  const auto data = synthetic(0.6);
  auto cal = test_calibration();
  cal.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  (void)fit_calibration(cal, data, FitOptions{.rounds = 12, .from_priors = true, .anchor = 100.0});
  EXPECT_NEAR(cal.gpus[hardware::Architecture::Hopper].gemm_efficiency_bf16, 0.7, 0.7 * 0.05);
}

// The prior term is anchor x (ln(value / prior) / spread)^2: with the same anchor, a tight spread
// (1%) holds the value within 5% of its prior while a loose one (x 100) lets the data move it to
// within 3% of the true 0.6.
TEST(CalibrationFit, PriorSpreadSetsHowFarTheDataMayMoveAValue) {
  const auto data = synthetic(0.6);
  auto tight = test_calibration();
  tight.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  tight.prior_spreads["hopper.gemm_efficiency_bf16"] = 0.01;
  (void)fit_calibration(tight, data, FitOptions{.rounds = 12, .from_priors = true, .anchor = 0.001});
  EXPECT_NEAR(tight.gpus[hardware::Architecture::Hopper].gemm_efficiency_bf16, 0.7, 0.7 * 0.05);
  auto loose = test_calibration();
  loose.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  loose.prior_spreads["hopper.gemm_efficiency_bf16"] = 1.0;
  (void)fit_calibration(loose, data, FitOptions{.rounds = 12, .from_priors = true, .anchor = 0.001});
  EXPECT_NEAR(loose.gpus[hardware::Architecture::Hopper].gemm_efficiency_bf16, 0.6, 0.6 * 0.03);
}

// A fit from the priors also puts back values no measurement exercises (here the FP8 GEMM
// efficiency of a BF16-only data set): nothing fitted to other data survives.
TEST(CalibrationFit, FromPriorsResetsUnexercisedValues) {
  const auto data = synthetic(0.6);
  auto cal = test_calibration();
  cal.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  cal.priors["hopper.gemm_efficiency_fp8"] = 0.65;
  cal.gpus[hardware::Architecture::Hopper].gemm_efficiency_fp8 = 0.42;
  (void)fit_calibration(cal, data, FitOptions{.rounds = 2, .from_priors = true, .anchor = 0.0});
  EXPECT_EQ(cal.gpus[hardware::Architecture::Hopper].gemm_efficiency_fp8, 0.65);
  auto kept = test_calibration();
  kept.priors["hopper.gemm_efficiency_fp8"] = 0.65;
  kept.gpus[hardware::Architecture::Hopper].gemm_efficiency_fp8 = 0.42;
  (void)fit_calibration(kept, data, FitOptions{.rounds = 2, .from_priors = false, .anchor = 0.0});
  EXPECT_EQ(kept.gpus[hardware::Architecture::Hopper].gemm_efficiency_fp8, 0.42);
}

// fit_parameters carries the prior of each parameter, or its current value when none is given,
// and the prior's spread, or kDefaultPriorSpread (0.3) when none is given.
TEST(CalibrationFit, ParametersCarryTheirPriors) {
  const auto data = synthetic(0.6);
  auto cal = test_calibration();
  cal.priors["hopper.gemm_efficiency_bf16"] = 0.7;
  cal.prior_spreads["hopper.gemm_efficiency_bf16"] = 0.1;
  int seen = 0;
  for (const auto& p : fit_parameters(cal, data)) {
    if (p.name == "hopper.gemm_efficiency_bf16") {
      EXPECT_EQ(p.prior, 0.7);
      EXPECT_EQ(p.spread, 0.1);
      ++seen;
    }
    if (p.name == "hopper.attention_fwd_efficiency") {
      EXPECT_EQ(p.prior, 0.5);
      EXPECT_EQ(p.spread, kDefaultPriorSpread);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
}

// Deduplicated dispatch, balanced top-k over E experts on D domains: a token leaves its domain
// k (D-1)/D times with all-to-all, and (D-1)(1 - P0) times deduplicated, P0 = C(E-E/D, k) / C(E, k).
// Qwen3-30B-A3B (E 128, k 8) on 2 nodes: P0 = C(64,8)/C(128,8) = 0.00310, ratio = 0.9969 / 4.
TEST(MoeDispatcher, DedupRatioMatchesTheCombinatorics) {
  double p0 = 1.0;
  for (int i = 0; i < 8; ++i) p0 *= (64.0 - i) / (128.0 - i);
  EXPECT_NEAR(p0, 0.00310, 0.00001);
  EXPECT_NEAR(dedup_ratio(128, 8, 2), (1.0 - p0) / 4.0, 1e-12);
  EXPECT_NEAR(dedup_ratio(128, 8, 2), 0.2492, 0.0001);
  // One domain, or top-1 routing: nothing to deduplicate.
  EXPECT_EQ(dedup_ratio(128, 8, 1), 1.0);
  EXPECT_EQ(dedup_ratio(64, 1, 4), 1.0);
  // More domains, less to save: 4 domains keep (3 (1 - C(96,8)/C(128,8))) / 6 of the copies.
  double q0 = 1.0;
  for (int i = 0; i < 8; ++i) q0 *= (96.0 - i) / (128.0 - i);
  EXPECT_NEAR(dedup_ratio(128, 8, 4), 3.0 * (1.0 - q0) / 6.0, 1e-12);
  EXPECT_NEAR(dedup_ratio(128, 8, 4), 0.4536, 0.0001);
}

}  // namespace
}  // namespace fmsim::training
