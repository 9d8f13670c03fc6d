// simulate_timeline records one Monte Carlo replication as it unfolds.
#include <gtest/gtest.h>

#include "reliability/monte_carlo.hpp"

namespace fmsim::reliability {
namespace {

GoodputScenario scenario() {
  GoodputScenario s;
  s.failures = single_cause_process(core::hours(3), false);
  s.recovery.restart = core::minutes(10);
  s.checkpoint = {.interval = core::minutes(20),
                  .blocking = core::seconds(60),
                  .persist = core::seconds(90),
                  .load = core::seconds(30)};
  s.horizon = core::days(7);
  s.gpus = 1024;
  return s;
}

TEST(RunTimeline, SegmentsTileTheHorizonInOrder) {
  // The segments are contiguous: each starts where the last ended, from 0 to the horizon.
  const auto s = scenario();
  const RunTimeline tl = simulate_timeline(s, 11);
  ASSERT_FALSE(tl.segments.empty());
  EXPECT_DOUBLE_EQ(tl.segments.front().start, 0.0);
  for (std::size_t i = 1; i < tl.segments.size(); ++i) {
    EXPECT_NEAR(tl.segments[i].start, tl.segments[i - 1].end, 1e-6) << "segment " << i;
    EXPECT_GT(tl.segments[i].end, tl.segments[i].start);
  }
  EXPECT_NEAR(tl.segments.back().end, s.horizon.value(), 1e-6);
  // A 3-hour MTBF over 7 days: about 56 interruptions; at least one happened, all inside the run.
  ASSERT_FALSE(tl.interruptions.empty());
  for (const auto& i : tl.interruptions) {
    EXPECT_GE(i.time, 0.0);
    EXPECT_LT(i.time, s.horizon.value());
    EXPECT_GE(i.lost_seconds, 0.0);
  }
}

TEST(RunTimeline, IsReplicationZeroOfTheMonteCarlo) {
  // Same seed, same draws: the recorded split is simulate_goodput's with one replication.
  const auto s = scenario();
  const RunTimeline tl = simulate_timeline(s, 11);
  const GoodputResult mc = simulate_goodput(s, {.replications = 1, .seed = 11, .threads = 1});
  EXPECT_DOUBLE_EQ(tl.time.useful, mc.time.useful);
  EXPECT_DOUBLE_EQ(tl.time.lost_work, mc.time.lost_work);
  EXPECT_DOUBLE_EQ(static_cast<double>(tl.interruptions.size()), mc.interruptions);
  EXPECT_NEAR(tl.time.total(), s.horizon.value(), 1e-6 * s.horizon.value());
  // Lost work of the recorded interruptions adds up to the split's lost work.
  double lost = 0.0;
  for (const auto& i : tl.interruptions) lost += i.lost_seconds;
  EXPECT_NEAR(lost, tl.time.lost_work, 1e-6 * s.horizon.value());
}

}  // namespace
}  // namespace fmsim::reliability
