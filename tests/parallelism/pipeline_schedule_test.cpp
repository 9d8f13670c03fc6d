// parallelism::pipeline_issue_order: Megatron-LM's 1F1B and interleaved issue orders.
#include "parallelism/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

namespace {

using fmsim::parallelism::pipeline_issue_order;
using fmsim::parallelism::PipelineItem;

// "F0 B0 ..." (vp = 1) or "F0.1" = forward of chunk 0, micro-batch 1 (vp > 1).
std::string render(const std::vector<PipelineItem>& order, bool chunks) {
  std::string out;
  for (const auto& it : order) {
    if (!out.empty()) out += ' ';
    out += it.forward ? 'F' : 'B';
    if (chunks) out += std::to_string(it.chunk) + ".";
    out += std::to_string(it.micro_batch);
  }
  return out;
}

TEST(PipelineIssueOrder, OneFOneBWarmsUpWithPpMinusStageMinusOneForwards) {
  // pp 4, 8 micro-batches (Narayanan et al. SC'21 Fig. 4 top): stage s runs pp - s - 1 = 3, 2, 1, 0
  // warm-up forwards, then one forward / one backward, then the cool-down backwards.
  EXPECT_EQ(render(pipeline_issue_order(4, 1, 8, 0), false), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(render(pipeline_issue_order(4, 1, 8, 2), false), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(render(pipeline_issue_order(4, 1, 8, 3), false), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}

TEST(PipelineIssueOrder, FewerMicroBatchesThanStagesRunsAllForwardsFirst) {
  // Warm-up is capped at the micro-batch count: pp 8, 2 micro-batches on stage 0 is F F B B.
  EXPECT_EQ(render(pipeline_issue_order(8, 1, 2, 0), false), "F0 F1 B0 B1");
}

TEST(PipelineIssueOrder, InterleavedSweepsChunksInGroupsOfPpMicroBatches) {
  // pp 2, vp 2, 4 micro-batches: forward k runs chunk (k/2) mod 2 on micro-batch (k/4)*2 + k mod 2;
  // stage 0 warms up (2-0-1)*2 + (2-1)*2 = 4 forwards, stage 1 (2-1-1)*2 + 2 = 2; backwards run the
  // chunks in reverse.
  EXPECT_EQ(render(pipeline_issue_order(2, 2, 4, 0), true),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3");
  EXPECT_EQ(render(pipeline_issue_order(2, 2, 4, 1), true),
            "F0.0 F0.1 F1.0 B1.0 F1.1 B1.1 F0.2 B0.0 F0.3 B0.1 F1.2 B1.2 F1.3 B1.3 B0.2 B0.3");
}

TEST(PipelineIssueOrder, InterleavingNeedsMicroBatchesDivisibleByPp) {
  // Megatron refuses interleaving when micro_batches % pp != 0; the order falls back to every
  // forward (chunk 0 over all micro-batches, then chunk 1) before the first backward (last chunk first).
  for (int stage = 0; stage < 2; ++stage) {
    EXPECT_EQ(render(pipeline_issue_order(2, 2, 3, stage), true),
              "F0.0 F0.1 F0.2 F1.0 F1.1 F1.2 B1.0 B1.1 B1.2 B0.0 B0.1 B0.2");
  }
}

TEST(PipelineIssueOrder, EveryPassOnceAndBackwardAfterForward) {
  // For each shape: 2 x vp x m items; each (chunk, micro-batch) once forward, once backward, in that order.
  for (const auto& [pp, vp, m] : {std::tuple{1, 1, 1}, {4, 1, 16}, {4, 3, 8}, {8, 5, 16}, {3, 2, 5}}) {
    for (int s = 0; s < pp; ++s) {
      const auto order = pipeline_issue_order(pp, vp, m, s);
      ASSERT_EQ(order.size(), static_cast<std::size_t>(2 * vp * m));
      std::set<std::pair<int, int>> forwards, backwards;
      for (const auto& it : order) {
        ASSERT_GE(it.chunk, 0);
        ASSERT_LT(it.chunk, vp);
        ASSERT_GE(it.micro_batch, 0);
        ASSERT_LT(it.micro_batch, m);
        const std::pair key{it.chunk, it.micro_batch};
        if (it.forward) {
          EXPECT_TRUE(forwards.insert(key).second);
        } else {
          EXPECT_TRUE(forwards.count(key)) << "backward before forward";
          EXPECT_TRUE(backwards.insert(key).second);
        }
      }
      EXPECT_EQ(backwards.size(), static_cast<std::size_t>(vp * m));
    }
  }
}

TEST(PipelineIssueOrder, BadShapesGiveNoOrder) {
  EXPECT_TRUE(pipeline_issue_order(0, 1, 4, 0).empty());
  EXPECT_TRUE(pipeline_issue_order(4, 1, 0, 0).empty());
  EXPECT_TRUE(pipeline_issue_order(4, 1, 4, 4).empty());
  EXPECT_TRUE(pipeline_issue_order(4, 0, 4, 0).empty());
}

}  // namespace
