// Every `fmsim validate ... --json` ends with a "summary" object of the same shape (cli/
// validation_summary.hpp): rows, predicted, compared (whole numbers, predicted <= rows) and the
// median, p90 and max |error| in percent over the compared predictions (median <= p90 <= max,
// null when nothing was compared). Commands may add fields of their own after these.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;

void expect_common_summary(const std::string& what, const std::vector<std::string>& args) {
  SCOPED_TRACE(what);
  const auto r = run_fmsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("summary")) << "no summary object";
  const auto& s = j["summary"];
  for (const char* key : {"rows", "predicted", "compared"}) {
    ASSERT_TRUE(s.contains(key) && s[key].is_number_unsigned()) << key << " in " << s.dump();
  }
  EXPECT_LE(s["predicted"].get<int>(), s["rows"].get<int>());
  EXPECT_GT(s["compared"].get<int>(), 0);
  for (const char* key : {"median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct"}) {
    ASSERT_TRUE(s.contains(key) && s[key].is_number()) << key << " in " << s.dump();
    EXPECT_GE(s[key].get<double>(), 0.0) << key;
  }
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), s["p90_abs_error_pct"].get<double>());
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), s["max_abs_error_pct"].get<double>());
}

TEST(ValidateSummary, EveryValidateCommandHasTheSameSummaryFields) {
  expect_common_summary("memory", {"validate", "memory", "--json"});
  expect_common_summary("training", {"validate", "training", "--json"});
  expect_common_summary("collectives", {"validate", "collectives", "--json"});
  expect_common_summary("inference", {"validate", "inference", "--json"});
  expect_common_summary("rl", {"validate", "rl", "--json"});
  // The planner searches every row's layouts (12 s for the whole CSV): its first six rows here.
  const auto csv = std::filesystem::path(::testing::TempDir()) / "planner_rows.csv";
  {
    std::ifstream in(source_path("validation/training.csv"));
    std::ofstream out(csv);
    std::string line;
    for (int n = 0; n < 7 && std::getline(in, line); ++n) out << line << "\n";
  }
  expect_common_summary("planner", {"validate", "planner", "--csv", csv.string(), "--threads", "2", "--json"});
}

TEST(ValidateSummary, RlKeepsItsTopLevelFieldsAndAgreesWithTheSummary) {
  // validate rl had no summary object; its top-level median (kept for older readers) is the
  // summary's median over the same checks.
  const auto r = run_fmsim({"validate", "rl", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["median_abs_error_pct"].get<double>(), j["summary"]["median_abs_error_pct"].get<double>());
  EXPECT_EQ(j["rows"], j["summary"]["rows"]);
  EXPECT_EQ(j["predicted"], j["summary"]["predicted"]);
}

}  // namespace
