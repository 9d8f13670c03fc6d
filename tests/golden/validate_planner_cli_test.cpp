// fmsim validate planner: the planner's best layout against the best published layout, as a
// validate command and as the library function behind `plan --against-csv` (same groups, same figures).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;
using ::testing::HasSubstr;

// The header and the first `rows` data lines of validation/training.csv (V001.. are NeMo 24.07
// Megatron runs of Llama 3 on H100), written to the test's own temporary folder.
std::string first_rows(int rows) {
  std::ifstream in(source_path("validation/training.csv"));
  std::string line, text;
  for (int i = 0; i <= rows && std::getline(in, line); ++i) text += line + "\n";
  const std::string path = ::testing::TempDir() + "planner_rows.csv";
  std::ofstream(path) << text;
  return path;
}

TEST(ValidatePlannerCli, SameGroupsAsPlanAgainstCsv) {
  const auto csv = first_rows(3);
  const auto v = run_fmsim({"validate", "planner", "--csv", csv, "--json", "--no-progress"});
  const auto p = run_fmsim({"plan", "--against-csv", csv, "--json", "--no-progress"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto vj = nlohmann::json::parse(v.out);
  const auto pj = nlohmann::json::parse(p.out);
  EXPECT_EQ(vj["command"], "validate planner");
  EXPECT_EQ(pj["command"], "plan --against-csv");
  ASSERT_FALSE(vj["groups"].empty());
  EXPECT_EQ(vj["groups"], pj["groups"]);
  for (const auto& g : vj["groups"]) {
    // ratio = planner / published predicted step; a verdict of "agrees" or "faster" means ratio <= 1.
    const double ratio = g["ratio"].get<double>();
    EXPECT_NEAR(ratio, g["planner_predicted_step_s"].get<double>() / g["published_predicted_step_s"].get<double>(),
                1e-12);
    const std::string verdict = g["verdict"];
    if (verdict.rfind("agrees", 0) == 0 || verdict.find("faster") != std::string::npos) {
      EXPECT_LE(ratio, 1.0 + 1e-9) << verdict;
    }
  }
}

TEST(ValidatePlannerCli, TextTableEndsWithTheCount) {
  const auto r = run_fmsim({"validate", "planner", "--csv", first_rows(2), "--no-progress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("PUBLISHED (BEST)"));
  EXPECT_THAT(r.out, HasSubstr("groups: the planner's best is at least as fast as the best published layout"));
}

TEST(ValidatePlannerCli, MissingFileExitsTwo) {
  const auto r = run_fmsim({"validate", "planner", "--csv", "/nonexistent/training.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--csv"));
}

}  // namespace
