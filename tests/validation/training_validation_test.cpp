// Training-step predictions against shared/validation/training.csv (published measurements).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;

nlohmann::json run_validation(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"validate", "training", "--csv", std::string(FMSIM_SHARED_DIR) + "/validation/training.csv",
                                "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Issue targets: at least 95% of measured rows predicted, a median |error| of at most 10% and a
// p90 of at most 25% (all met: 100%, 6.9%, 24.9%); docs/validation.md lists the worst rows and why.
TEST(TrainingValidation, CoverageAndErrorBands) {
  const auto j = run_validation();
  const auto& s = j["summary"];
  const double rows = s["rows"].get<double>();
  const double predicted = s["predicted"].get<double>();
  EXPECT_GE(rows, 200);
  EXPECT_GE(predicted / rows, 0.95);
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), 10.0);
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), 25.0);
  // Dense models, the bulk of the data, are held to the targets.
  EXPECT_LE(j["by_arch"]["dense"]["median_abs_error_pct"].get<double>(), 10.0);
  EXPECT_LE(j["by_arch"]["dense"]["p90_abs_error_pct"].get<double>(), 25.0);
}

// Every row is listed: predicted, or skipped with a reason (never dropped silently).
TEST(TrainingValidation, EveryRowAccountedFor) {
  const auto j = run_validation();
  for (const auto& r : j["rows"]) {
    EXPECT_TRUE(r.contains("predicted_step_time_s") || r.contains("skipped")) << r.dump();
  }
}

// The whole file in under 5 s (issue's speed target).
TEST(TrainingValidation, WholeFileIsFast) {
  const auto j = run_validation();
  EXPECT_LT(j["elapsed_s"].get<double>(), 5.0);
}

}  // namespace
