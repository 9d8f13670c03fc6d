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
// the summary fields. Bounds (issue 13 targets median <= 10%): the measured
// figures, median |error| <= 9.0% (8.76%), p90 <= 21% (20.51%) over the rows with a number; at
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
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), 9.0);
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), 21.0);
  ASSERT_TRUE(s.contains("oom_rows"));
  ASSERT_TRUE(s.contains("oom_agreed"));
  // Every row that ran is judged to fit (BigScience M115, 80 of 80 GB at dp 1, fits since the
  // optimizer step's fp32 gradient copy competes with the activations instead of adding to them);
  // 7 of the 10 out-of-memory rows agree (M141, M154, M168 are predicted to fit).
  EXPECT_EQ(s["run_agreed"].get<int>(), s["run_rows"].get<int>());
  EXPECT_GE(s["oom_agreed"].get<int>(), 7);
}

// Korthikanti et al. 2022, Table 2: activations per layer are 34 s b h / t bytes with sequence
// parallelism and selective recompute (5 a s^2 b / t more without recompute, no flash attention);
// Fig. 1's component values for the 22B, 175B and 1T models are reproduced within 1%.
TEST(MemoryValidation, KorthikantiActivationsReproduced) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M172,M174,M176,M178,M184,M186"});
  ASSERT_EQ(j["rows"].size(), 6u);
  for (const auto& r : j["rows"]) EXPECT_NEAR(r["error_pct"].get<double>(), 0.0, 1.0) << r.dump();
}

// Published training runs ran: issue 13's target is at least 98% of the 222 measured rows of
// training.csv judged to fit, so at most 4 judged out of memory (4 today: V010 V015 V057 V178; 9
// before the optimizer step's transient gradient copy and llm-foundry's fused loss, 48 before the
// distributed optimizer, bf16 gradient buffers, FP8-saved inputs and per-stage peaks).
TEST(MemoryValidation, PublishedTrainingRunsFit) {
  const auto j = run_json({"validate", "training", "--json"});
  EXPECT_LE(j["summary"]["does_not_fit"].size(), 4u) << j["summary"]["does_not_fit"].dump();
  EXPECT_GE(j["summary"]["fit_memory"].get<int>(), 218);
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
