// Per-GPU memory predictions against validation/memory.csv and the memory verdicts on
// validation/training.csv (published measurements).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;

nlohmann::json run_json(const std::vector<std::string>& args) {
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// validate memory defaults to the repository's validation/memory.csv (compiled in) and reports
// the summary fields. Bounds (issue 13 targets median <= 10%, not met): the measured
// figures, median |error| <= 10.6% (10.54%), p90 <= 21% (20.51%) over the rows with a number; at
// least 75% of the rows predicted (the rest lack a layer count, a sequence length or a catalog
// GPU: V100, RTX cards). The p90 bound was 20% (19.70%) until the Llama 3.2 3B preset gave the
// torchtune rows M190-M194 the model's tied embeddings (2.4 GiB less): the median improved from
// 10.64%, and M191 moved from -17.5% to -21.2% across the p90 cut. Those five rows measure one
// configuration at 25-60 GiB.
TEST(MemoryValidation, DefaultsToRepositoryDataAndErrorBands) {
  const auto j = run_json({"validate", "memory", "--json"});
  const auto& s = j["summary"];
  EXPECT_EQ(j["csv"], "validation/memory.csv");
  EXPECT_EQ(s["rows"].get<int>(), 185);
  EXPECT_GE(s["predicted"].get<double>() / s["rows"].get<double>(), 0.75);
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), 10.6);
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), 21.0);
  ASSERT_TRUE(s.contains("oom_rows"));
  ASSERT_TRUE(s.contains("oom_agreed"));
  // Rows that ran are judged to fit, all but one (BigScience M115 reads 80 of 80 GiB).
  EXPECT_GE(s["run_agreed"].get<int>() + 1, s["run_rows"].get<int>());
}

// Korthikanti et al. 2022, Table 2: activations per layer are 34 s b h / t bytes with sequence
// parallelism and selective recompute (5 a s^2 b / t more without recompute, no flash attention);
// Fig. 1's component values for the 22B, 175B and 1T models are reproduced within 1%.
TEST(MemoryValidation, KorthikantiActivationsReproduced) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M172,M174,M176,M178,M184,M186"});
  ASSERT_EQ(j["rows"].size(), 6u);
  for (const auto& r : j["rows"]) EXPECT_NEAR(r["error_pct"].get<double>(), 0.0, 1.0) << r.dump();
}

// Published training runs ran: at most 10 of the 222 measured rows of training.csv are judged
// out of memory (9 today; 48 before the distributed optimizer, bf16 gradient buffers, FP8-saved
// inputs and per-stage peaks).
TEST(MemoryValidation, PublishedTrainingRunsFit) {
  const auto j = run_json({"validate", "training", "--json"});
  EXPECT_LE(j["summary"]["does_not_fit"].size(), 10u) << j["summary"]["does_not_fit"].dump();
  EXPECT_GE(j["summary"]["fit_memory"].get<int>(), 212);
}

// A missing file names the flag; a row id that is not in the file names --rows.
TEST(MemoryValidation, BadInputNamesTheFlag) {
  auto r = run_fmsim({"validate", "memory", "--rows", "M999"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rows"), std::string::npos) << r.err;
  r = run_fmsim({"validate", "memory", "--csv", "/nonexistent/memory.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--csv"), std::string::npos) << r.err;
}

}  // namespace
