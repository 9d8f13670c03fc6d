// Max-min fair sharing and the event-driven flow simulation.
#include "network/flow_sharing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fmsim::network {
namespace {

TEST(MaxMin, EqualFlowsSplitALinkEvenly) {
  // Three flows on one 30 B/s link: 10 each.
  const std::vector<double> cap{30.0};
  FlowSet f;
  for (int i = 0; i < 3; ++i) f.add(std::vector<int>{0});
  const auto r = max_min_rates(cap, f);
  for (double x : r) EXPECT_DOUBLE_EQ(x, 10.0);
}

TEST(MaxMin, ClassicParkingLot) {
  // Links A (10) and B (20). Flow 0 crosses A and B, flow 1 only A, flow 2 only B.
  // Max-min: A is the bottleneck of flows 0 and 1 (5 each); flow 2 gets B's rest, 15.
  const std::vector<double> cap{10.0, 20.0};
  FlowSet f;
  f.add(std::vector<int>{0, 1});
  f.add(std::vector<int>{0});
  f.add(std::vector<int>{1});
  const auto r = max_min_rates(cap, f);
  EXPECT_DOUBLE_EQ(r[0], 5.0);
  EXPECT_DOUBLE_EQ(r[1], 5.0);
  EXPECT_DOUBLE_EQ(r[2], 15.0);
}

TEST(MaxMin, ConservesCapacityAndEveryFlowHasASaturatedLink) {
  // Random-ish mesh: for every link, the sum of its flows' rates <= capacity; every flow crosses
  // at least one saturated link on which its rate is the largest (the max-min condition).
  const std::vector<double> cap{7.0, 11.0, 13.0, 5.0, 17.0};
  FlowSet f;
  const std::vector<std::vector<int>> routes{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}, {1, 3}, {2}, {0, 2, 4}};
  for (const auto& r : routes) f.add(r);
  const auto rate = max_min_rates(cap, f);
  std::vector<double> used(cap.size(), 0.0);
  for (std::size_t i = 0; i < routes.size(); ++i) {
    for (int l : routes[i]) used[static_cast<std::size_t>(l)] += rate[i];
  }
  for (std::size_t l = 0; l < cap.size(); ++l) EXPECT_LE(used[l], cap[l] * (1 + 1e-9));
  for (std::size_t i = 0; i < routes.size(); ++i) {
    bool bottleneck = false;
    for (int l : routes[i]) {
      const auto li = static_cast<std::size_t>(l);
      if (used[li] < cap[li] * (1 - 1e-9)) continue;
      double biggest = 0.0;
      for (std::size_t j = 0; j < routes.size(); ++j) {
        for (int m : routes[j]) {
          if (m == l) biggest = std::max(biggest, rate[j]);
        }
      }
      if (rate[i] >= biggest * (1 - 1e-9)) bottleneck = true;
    }
    EXPECT_TRUE(bottleneck) << "flow " << i;
  }
}

TEST(MaxMin, WeightsScaleShares) {
  // Weights 1 and 3 on a 40 B/s link: 10 and 30.
  const std::vector<double> cap{40.0};
  FlowSet f;
  f.add(std::vector<int>{0}, 1.0);
  f.add(std::vector<int>{0}, 3.0);
  const auto r = max_min_rates(cap, f);
  EXPECT_DOUBLE_EQ(r[0], 10.0);
  EXPECT_DOUBLE_EQ(r[1], 30.0);
}

TEST(FlowSimulation, ShorterFlowLeavesBandwidthToTheLonger) {
  // 10 B/s link, flows of 10 B and 30 B from t=0: both at 5 B/s until t=2 (10 B done), then the
  // long one alone at 10 B/s for its remaining 20 B: finishes at t=4.
  const std::vector<double> cap{10.0};
  std::vector<Flow> flows{{{0}, core::Bytes(10), core::Seconds(0), 1.0}, {{0}, core::Bytes(30), core::Seconds(0), 1.0}};
  const auto t = simulate_flows(cap, flows);
  EXPECT_NEAR(t[0].value(), 2.0, 1e-12);
  EXPECT_NEAR(t[1].value(), 4.0, 1e-12);
}

TEST(FlowSimulation, LateStartSharesFromItsStart) {
  // 10 B/s link; A 20 B from t=0, B 10 B from t=1. A alone 1 s (10 B), then 5 B/s each: B ends at
  // t=3, A has 0 B left at t=3 as well.
  const std::vector<double> cap{10.0};
  std::vector<Flow> flows{{{0}, core::Bytes(20), core::Seconds(0), 1.0}, {{0}, core::Bytes(10), core::Seconds(1), 1.0}};
  const auto t = simulate_flows(cap, flows);
  EXPECT_NEAR(t[0].value(), 3.0, 1e-9);
  EXPECT_NEAR(t[1].value(), 3.0, 1e-9);
}

TEST(FlowSimulation, TotalBytesOverBottleneckBoundsTheMakespan) {
  // Conservation: n flows through one link finish no earlier than total bytes / capacity, and
  // with equal sizes exactly then.
  const std::vector<double> cap{100.0};
  TimedFlowSet f;
  for (int i = 0; i < 50; ++i) f.add(std::vector<int>{0}, core::Bytes(40), core::Seconds(0));
  const auto t = simulate_flows(cap, f);
  for (double x : t) EXPECT_NEAR(x, 50 * 40 / 100.0, 1e-9);
}

}  // namespace
}  // namespace fmsim::network
