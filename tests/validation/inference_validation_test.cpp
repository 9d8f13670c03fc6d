// fmsim validate inference against validation/inference.csv (published serving measurements) and
// validation/inference_aic.csv (AIConfigurator's measured sample).
// Issue 14's targets on inference.csv: >= 90% of rows predicted, throughput median |error| <= 15%,
// TTFT and TPOT median <= 20%, asserted as given. Today: 34/34 predicted, 13.6% / 12.1% / 5.8%.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;

TEST(InferenceValidation, SummaryAndErrorBounds) {
  const auto r = run_fmsim({"validate", "inference", "--csv", source_path("validation/inference.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  const int rows = s["rows"].get<int>(), predicted = s["predicted"].get<int>();
  EXPECT_EQ(rows, 34);
  EXPECT_GE(predicted, 0.9 * rows);                               // target met
  EXPECT_LE(s["tpot_median_abs_error_pct"].get<double>(), 20.0);  // target met
  EXPECT_LE(j["errors"]["e2e"]["median_abs_error_pct"].get<double>(), 20.0);
  EXPECT_LE(s["throughput_median_abs_error_pct"].get<double>(), 15.0);
  EXPECT_LE(s["ttft_median_abs_error_pct"].get<double>(), 20.0);
  // The NIM closed-loop sweep saturates: TTFT grows >10x from concurrency 50 to 250 while
  // throughput per GPU flattens (within 20% from 100 to 250).
  double ttft50 = 0, ttft250 = 0, thr100 = 0, thr250 = 0;
  for (const auto& row : j["rows"]) {
    const auto id = row["id"].get<std::string>();
    if (id == "inf-090") ttft50 = row["ttft_ms_mean"]["predicted"].get<double>();
    if (id == "inf-092") ttft250 = row["ttft_ms_mean"]["predicted"].get<double>();
    if (id == "inf-091") thr100 = row["output_tok_s_per_gpu"]["predicted"].get<double>();
    if (id == "inf-092") thr250 = row["output_tok_s_per_gpu"]["predicted"].get<double>();
  }
  EXPECT_GT(ttft250, 10 * ttft50);
  EXPECT_LT(thr250, 1.2 * thr100);
}

// AIConfigurator's measured sample (validation/inference_aic.csv, 3,956 configurations over six
// GPUs, three engines, aggregated and disaggregated). The engines' host costs in
// data/calibration/serving.yaml were measured on it (`fmsim calibrate serving`), so these are
// in-sample figures; docs/validation.md has the held-out ones. Issue 39's targets (TTFT median
// <= 15%, TPOT <= 8%) are not met: the bounds below hold the model at what it reached (TTFT
// 36.8% median / 85.3% p90 |error|, TPOT 12.8%, disaggregated TTFT 60.1%, with each TTFT the mean
// over the row's 20 profiled rounds, the first of them every client at once, and each request's
// path time drawn (clients that drift apart); the issue measured 57% and 19% before, 40.8% /
// 91.1% / 73.8% without the first round, 38.1% / 90.0% / 60.7% with one fixed path time).
TEST(InferenceValidation, AiconfiguratorSampleErrorBounds) {
#ifdef FMSIM_SANITIZED
  GTEST_SKIP() << "15 s of simulation in the Release build; ASan/UBSan make it minutes";
#endif
  const auto r = run_fmsim({"validate", "inference", "--csv", source_path("validation/inference_aic.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  EXPECT_EQ(s["rows"].get<int>(), 3956);
  EXPECT_GE(s["predicted"].get<int>(), 2700);  // 2,723 today
  EXPECT_LE(s["ttft_median_abs_error_pct"].get<double>(), 37.2);
  EXPECT_LE(j["errors"]["ttft"]["p90_abs_error_pct"].get<double>(), 86.0);
  EXPECT_LE(j["by"]["mode"]["disagg"]["ttft"]["median_abs_error_pct"].get<double>(), 60.5);
  EXPECT_LE(s["tpot_median_abs_error_pct"].get<double>(), 15.0);
  // Every row that is not predicted says why, and no prediction is 0 or missing.
  for (const auto& row : j["rows"]) {
    if (!row["predicted"].get<bool>()) {
      EXPECT_FALSE(row["reason"].get<std::string>().empty()) << row["id"];
      continue;
    }
    EXPECT_GT(row["ttft_ms_mean"]["predicted"].get<double>(), 0.0) << row["id"];
    EXPECT_GT(row["tpot_ms_mean"]["predicted"].get<double>(), 0.0) << row["id"];
  }
  // Disaggregated rows are predicted too, and a median over no rows is null, never 0.
  EXPECT_GT(j["by"]["mode"]["disagg"]["ttft"]["rows"].get<int>(), 200);
  EXPECT_TRUE(j["by"]["mode"]["disagg"]["throughput"]["median_abs_error_pct"].is_null());
}
