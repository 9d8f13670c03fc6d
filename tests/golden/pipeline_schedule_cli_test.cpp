// The event-simulated pipeline schedule on a layout Megatron cannot interleave: vp 2 with 3
// micro-batches on pp 2 (3 % 2 != 0) plays the all-forward-first order (it was an internal error,
// "pipeline schedule deadlocked", before parallelism::pipeline_issue_order).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;

TEST(PipelineScheduleCli, InterleavingWithMicroBatchesNotDivisibleByPpRuns) {
  // dp = 8 / pp 2 = 4; gbs 12 / (mbs 1 x dp 4) = 3 micro-batches.
  const auto r = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--pp", "2", "--vp", "2",
                            "--gbs", "12", "--mbs", "1", "--seq", "4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
  // All forwards before any backward leaves no overlap to exploit: the pipeline is not faster
  // than the analytical 1F1B bound's compute alone.
  EXPECT_GT(j["breakdown_s"]["compute"].get<double>(), 0.0);
}

}  // namespace
