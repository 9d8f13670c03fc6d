// fmsim validate inference against validation/inference.csv (published serving measurements).
// Issue 14's targets: >= 90% of rows predicted, throughput median |error| <= 15%, TTFT and TPOT
// median <= 20%, asserted as given. Today: 33/34 predicted, 10.6% / 16.4% / 2.4%.
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
