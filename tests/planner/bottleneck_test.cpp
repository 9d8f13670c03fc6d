// Bottleneck sentences: the largest non-compute component, its share, and whether its group
// crosses the NVLink domain.
#include "planner/bottleneck.hpp"

#include <gtest/gtest.h>

#include "planner_fixtures.hpp"

namespace fmsim::planner {
namespace {

using testing::cluster;

training::StepResult step_with(double compute, double tp, double ep, double dp, double bubble) {
  training::StepResult r;
  r.feasible = true;
  r.breakdown.compute = core::Seconds(compute);
  r.breakdown.tp_comm = core::Seconds(tp);
  r.breakdown.ep_comm = core::Seconds(ep);
  r.breakdown.dp_comm = core::Seconds(dp);
  r.breakdown.bubble = core::Seconds(bubble);
  r.step_time = r.breakdown.total();
  r.micro_batches = 32;
  return r;
}

TEST(Bottleneck, GroupPlacement) {
  // Rule (as the communication model): a group of `size` ranks at `stride` crosses the NVLink
  // domain when size * stride > domain GPUs.
  const auto c8 = cluster("p", 80.0, 1.0, 64);
  EXPECT_FALSE(crosses_nvlink_domain({8, 1}, c8));
  EXPECT_TRUE(crosses_nvlink_domain({16, 1}, c8));
  EXPECT_TRUE(crosses_nvlink_domain({2, 8}, c8));  // DP pair of two tp8 groups: two nodes
  EXPECT_FALSE(crosses_nvlink_domain({1, 64}, c8));
  auto nvl72 = c8;
  nvl72.system.nvlink_domain_gpus = 72;
  EXPECT_FALSE(crosses_nvlink_domain({64, 1}, nvl72));
  EXPECT_FALSE(crosses_nvlink_domain({8, 8}, nvl72));
  EXPECT_TRUE(crosses_nvlink_domain({16, 8}, nvl72));
}

TEST(Bottleneck, LargestOverheadAndItsShare) {
  // share = component seconds / step time; the EP all-to-all of ep 16 (stride 1) spans two 8-GPU
  // nodes, so it crosses EFA; in a 72-GPU domain it stays inside.
  parallelism::Layout l;
  l.tp = 1;
  l.ep = 16;
  l.dp = 64;
  const auto step = step_with(6.0, 0.2, 3.0, 0.5, 0.3);  // total 10 s
  const auto c8 = cluster("p", 80.0, 1.0, 8);
  const auto b = find_bottleneck(step, l, c8);
  EXPECT_EQ(b.component, Component::Ep);
  EXPECT_DOUBLE_EQ(b.share, 3.0 / 10.0);
  EXPECT_DOUBLE_EQ(b.compute_share, 6.0 / 10.0);
  EXPECT_TRUE(b.crosses_network);
  EXPECT_FALSE(b.compute_bound);
  EXPECT_EQ(b.sentence, "EP all-to-all (ep 16) crosses EFA v2: 30% of the step");
  auto nvl72 = c8;
  nvl72.system.nvlink_domain_gpus = 72;
  const auto inside = find_bottleneck(step, l, nvl72);
  EXPECT_FALSE(inside.crosses_network);
  EXPECT_EQ(inside.sentence, "EP all-to-all (ep 16) inside one NVL72 domain: 30% of the step");
}

TEST(Bottleneck, ComputeBoundBelowTenPercent) {
  // When the largest overhead is below kComputeBoundShare (10%), the step is called compute-bound.
  parallelism::Layout l;
  l.tp = 8;
  l.pp = 4;
  l.vp = 5;
  l.dp = 16;
  const auto step = step_with(9.2, 0.3, 0.0, 0.1, 0.4);  // bubble 4%
  const auto b = find_bottleneck(step, l, cluster("p", 80.0, 1.0, 64));
  EXPECT_TRUE(b.compute_bound);
  EXPECT_EQ(b.component, Component::Bubble);
  EXPECT_NE(b.sentence.find("compute-bound"), std::string::npos);
  EXPECT_NE(b.sentence.find("pipeline bubble (pp 4, vp 5, 32 micro-batches)"), std::string::npos);
}

}  // namespace
}  // namespace fmsim::planner
