// Analytic goodput against Daly's closed form, and the Monte Carlo simulation against both.
#include "reliability/goodput.hpp"

#include <gtest/gtest.h>

#include "reliability/checkpoint_interval.hpp"
#include "reliability/monte_carlo.hpp"

namespace fmsim::reliability {
namespace {

using core::hours;
using core::minutes;
using core::seconds;

GoodputScenario daly_scenario(core::Seconds mtbf, core::Seconds delta, core::Seconds restart, core::Seconds tau) {
  GoodputScenario s;
  s.failures = single_cause_process(mtbf, false);
  s.recovery.restart = restart;
  s.checkpoint = {.interval = tau, .blocking = delta, .persist = delta, .load = seconds(0)};
  s.horizon = core::days(90);
  s.gpus = 16384;
  return s;
}

TEST(AnalyticGoodput, ReducesToDalysCostModel) {
  // One cause, sync saves: ETTR = tau / (M e^{R/M} (e^{(tau+delta)/M} - 1)).
  const auto s = daly_scenario(hours(3), seconds(60), minutes(10), minutes(20));
  EXPECT_NEAR(analytic_goodput(s).ettr, daly_ettr(minutes(20), seconds(60), minutes(10), hours(3)), 1e-12);
}

TEST(AnalyticGoodput, TimeSplitAddsUpToTheHorizon) {
  // useful + checkpoint + restart + lost work + waiting = horizon.
  const auto r = analytic_goodput(daly_scenario(hours(3), seconds(60), minutes(10), minutes(20)));
  EXPECT_NEAR(r.time.total(), core::days(90).value(), 1e-6 * core::days(90).value());
  EXPECT_GT(r.time.lost_work, 0.0);
  EXPECT_GT(r.time.restart, 0.0);
}

TEST(AnalyticGoodput, OptimalIntervalIsDalysExactOptimum) {
  // With one recovery time the analytic model is Daly's, so its maximiser is M (1 + W0(-e^{-(delta/M+1)})).
  auto s = daly_scenario(hours(3), seconds(60), minutes(10), minutes(20));
  const auto best = optimal_interval(s);
  EXPECT_NEAR(best.value(), daly_exact_interval(seconds(60), hours(3)).value(), 1e-3 * best.value());
}

TEST(AnalyticGoodput, AsyncBeatsSyncForTheSameSave) {
  // Async stalls only for the copy (5 s instead of 60 s), at the price of a 55 s persist lag.
  auto sync = daly_scenario(hours(3), seconds(60), minutes(5), minutes(20));
  auto async = sync;
  async.checkpoint.blocking = seconds(5);
  async.checkpoint.persist = seconds(60);
  EXPECT_GT(analytic_goodput(async).ettr, analytic_goodput(sync).ettr);
}

TEST(MonteCarlo, DeterministicForASeedAndAnyThreadCount) {
  // Same seed -> identical results; replication i uses stream i whatever thread runs it.
  const auto s = daly_scenario(hours(2), seconds(30), minutes(5), minutes(15));
  const auto a = simulate_goodput(s, {.replications = 50, .seed = 7, .threads = 1});
  const auto b = simulate_goodput(s, {.replications = 50, .seed = 7, .threads = 2});
  const auto c = simulate_goodput(s, {.replications = 50, .seed = 8, .threads = 2});
  EXPECT_EQ(a.ettr, b.ettr);
  EXPECT_EQ(a.time.lost_work, b.time.lost_work);
  EXPECT_NE(a.ettr, c.ettr);
}

TEST(MonteCarlo, AgreesWithDalyForExponentialFailures) {
  // Daly's model and the simulation share their assumptions; 200 x 90-day runs agree to 0.5 pp.
  const auto s = daly_scenario(hours(3), seconds(60), minutes(10), minutes(20));
  const auto mc = simulate_goodput(s, {.replications = 200, .seed = 1, .threads = 2});
  EXPECT_NEAR(mc.ettr, analytic_goodput(s).ettr, 0.005);
  EXPECT_NEAR(mc.time.total(), core::days(90).value(), 1.0);
}

TEST(MonteCarlo, ExpectedInterruptions) {
  // A Poisson process over 90 days at M = 3 h: 720 interruptions on average (recoveries included).
  const auto s = daly_scenario(hours(3), seconds(60), minutes(10), minutes(20));
  const auto mc = simulate_goodput(s, {.replications = 200, .seed = 3, .threads = 2});
  EXPECT_NEAR(mc.interruptions, 720.0, 720.0 * 0.02);
}

TEST(MonteCarlo, EmptySparePoolMakesTheJobWait) {
  // Every failure needs a node; with no spares and a 12 h repair the job waits for repaired nodes.
  auto s = daly_scenario(hours(3), seconds(60), minutes(5), minutes(20));
  s.failures = single_cause_process(hours(3), true);
  s.recovery.spares = 0;
  s.recovery.repair = hours(12);
  const auto starved = simulate_goodput(s, {.replications = 20, .seed = 5, .threads = 2});
  s.recovery.spares = -1;
  const auto plenty = simulate_goodput(s, {.replications = 20, .seed = 5, .threads = 2});
  EXPECT_GT(starved.time.waiting, 0.0);
  EXPECT_EQ(plenty.time.waiting, 0.0);
  EXPECT_LT(starved.ettr, plenty.ettr);
}

TEST(MonteCarlo, PeerRecoveryLosesOnlyTheStepInFlight) {
  // Replacement failures restore from a replica: lost work per failure is at most one step (10 s).
  auto s = daly_scenario(hours(3), seconds(60), minutes(5), minutes(20));
  s.failures = single_cause_process(hours(3), true);
  s.peer_recovery = true;
  s.peer_load = seconds(30);
  s.step_time = seconds(10);
  const auto mc = simulate_goodput(s, {.replications = 20, .seed = 9, .threads = 2});
  EXPECT_LE(mc.time.lost_work, mc.interruptions * 10.0);
  EXPECT_NEAR(mc.ettr, analytic_goodput(s).ettr, 0.005);
}

TEST(MonteCarlo, WeibullKeepsTheMeanGap) {
  // Weibull inter-arrivals with shape 0.7 scaled to the same mean: about H/M interruptions.
  auto s = daly_scenario(hours(3), seconds(60), minutes(10), minutes(20));
  s.weibull_shape = 0.7;
  const auto mc = simulate_goodput(s, {.replications = 200, .seed = 11, .threads = 2});
  EXPECT_NEAR(mc.interruptions, 720.0, 720.0 * 0.05);
}

}  // namespace
}  // namespace fmsim::reliability
