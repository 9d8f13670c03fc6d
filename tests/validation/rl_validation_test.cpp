// Validation of the RL step model against validation/rl.csv (fmsim validate rl). The bounds are
// the errors the model reaches today (docs/models/rl.md lists them with the targets);
// a change that makes them worse fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

namespace fmsim::testing {
namespace {

TEST(RlValidation, StepAndWeightSyncErrors) {
  const auto r = run_fmsim({"validate", "rl", "--csv", source_path("validation/rl.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"], 148);
  EXPECT_GE(j["rl_step_predicted"].get<int>(), 49);
  // The coverage target: at least 70% of the rl_step and weight_sync rows predicted (71%:
  // 49 of 65 steps, 22 of 35 syncs).
  EXPECT_GE(j["step_and_sync_coverage_pct"].get<double>(), 70.0);
  EXPECT_GE(j["weight_sync_predicted"].get<int>(), 22);
  // The target: step median at most 15%. 12.9% once vLLM's iteration time on Blackwell
  // and Grace-host offload had their own calibration values (docs/models/rl.md); 13.9% since the
  // Hopper GEMM tile factor rests on the kernels measured on an H200 (gemm_half_dim 128 -> 32,
  // validation/kernels/h200): the largest errors fell (R014 +88.6% -> +52.2%, R002 +101.9% ->
  // +89.6%, R022 +140.9% -> +126.1%) while rows already fast got faster (R085 -5.4% -> -10.1%).
  EXPECT_LE(j["by_type"]["step"]["median_abs_error_pct"].get<double>(), 14.0);
  // Held out from the Blackwell factor (fitted on R077, R079, R081, R083 and bounded by the
  // colocated GB200 rows): the GB200 Llama 8B split (R075), train-bound, stays within 15%.
  // Fully async at staleness 0 (R007, verl): the tail is exposed and the trainer waits.
  for (const auto& c : j["checks"]) {
    const auto id = c["row_id"].get<std::string>();
    if (id == "R075" && c["type"] == "step") {
      EXPECT_LE(std::abs(c["error_pct"].get<double>()), 15.0) << id;
    }
    if (id == "R007" && c["what"] == "trainer wait") {
      EXPECT_GT(c["predicted"].get<double>(), 0.0) << id;
    }
  }
  // The target: weight-sync median at most 25% (24.0% since on-the-fly FP8 quantisation
  // on receive is modelled; R096 vs R095 set requant_per_tensor, so R096 is in-sample).
  EXPECT_LE(j["by_type"]["weight_sync"]["median_abs_error_pct"].get<double>(), 25.0);
  // Held out: engine_load_bandwidth is read off R143 alone; the other checkpoint-engine updates
  // (DeepSeek-V3.1 and Kimi-K2 in FP8 on 16 and 256 H20) stay within 15%.
  for (const auto& c : j["checks"]) {
    const auto id = c["row_id"].get<std::string>();
    if (id == "R144" || id == "R145" || id == "R146" || id == "R147") {
      EXPECT_LE(std::abs(c["error_pct"].get<double>()), 15.0) << id;
    }
  }
  // Every row is predicted or says why not: none is dropped silently.
  EXPECT_EQ(j["predicted"].get<std::size_t>() + j["unpredicted"].size(), 148u);
}

}  // namespace
}  // namespace fmsim::testing
