// Absurd inputs are errors that name the flag and the allowed range (exit 2), never a crash,
// an internal error, a hang or a wrapped number; a bad output path is refused before any work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace fmsim::testing {
namespace {

using ::testing::HasSubstr;

struct Absurd {
  std::string name;
  std::vector<std::string> args;
  std::string message;  ///< what stderr must say (flag and allowed range)
};

class AbsurdInput : public ::testing::TestWithParam<Absurd> {};

TEST_P(AbsurdInput, ExitsTwoNamingTheFlagAndRange) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_fmsim(GetParam().args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_LT(seconds, 5.0) << "refusing bad input must not take long";
}

const std::vector<Absurd> kAbsurd = {
    // 1e30 bytes would wrap to -9223372036854775808 in the table's int64 size column.
    {"size_past_2_63",
     {"collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "1e30"},
     "--max-bytes: '1e30' is too large for a size; allowed: below 2^63"},
    {"size_nan",
     {"collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "nan"},
     "--max-bytes: 'nan' is not a size"},
    {"size_negative",
     {"collective", "--cluster", "p5.48xlarge:2", "--min-bytes", "-5"},
     "--min-bytes: must be positive"},
    // 8 B .. 16 GiB by 1.0000001 is 2.15e8 rows: refused rather than printed for hours.
    {"rows_unbounded",
     {"collective", "--cluster", "p5.48xlarge:2", "--step-factor", "1.0000001"},
     "--step-factor: 1.0000001 from 8 to 16G gives 2.15e+08 sizes; at most 100000"},
    {"step_nan",
     {"collective", "--cluster", "p5.48xlarge:2", "--step-factor", "nan"},
     "--step-factor: must be greater than 1"},
    // 2^31 - 1 tokens overflowed the integer-nanosecond clock (internal error before).
    {"seq_2_31",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "2147483647"},
     "--seq: 2147483647 tokens is too long; allowed: 1 to 134217728"},
    // 10^8 sequences at mbs 1, dp 64: 1.56 million micro-batches per step ran for minutes before.
    {"microbatches",
     {"train", "--model", "llama3.1-405b", "--cluster", "p5.48xlarge:1024", "--tp", "8", "--pp", "16", "--gbs",
      "100000000"},
     "--gbs: global batch 100000000 is 1562500 micro-batches"},
    {"tokens_inf", {"plan", "--model", "llama3.1-8b", "--gpus", "64", "--tokens", "inf"}, "--tokens: 'inf'"},
    {"params_past_2_63",
     {"checkpoint", "--params", "1e30", "--gpus", "512"},
     "--params: '1e30' is not a positive count"},
    // 10^8 Monte Carlo runs grew past 4 GB before; 10^30 s of save time printed -nan.
    {"replications",
     {"goodput", "--gpus", "16384", "--save-time", "30s", "--replications", "100000000"},
     "--replications: 100000000 is out of range; allowed: 0 to 1000000"},
    {"duration_huge",
     {"goodput", "--gpus", "16384", "--save-time", "1e30s"},
     "--save-time: '1e30s' is too long; allowed: 0 to 10 years"},
    // 300 days of saving on 16384 GPUs (an interruption every ~2 h): e^(lambda t) overflowed and
    // goodput printed -nan. A checkpoint longer than 50 MTBFs never completes between failures.
    {"save_many_mtbf",
     {"goodput", "--gpus", "16384", "--save-time", "300d"},
     "--save-time: 300.0 d is 2.33e+03 times the job's mean time between interruptions (3.1 h); allowed: at most 50 x "
     "MTBF = 6.4 d"},
    {"interval_many_mtbf",
     {"goodput", "--gpus", "16384", "--save-time", "30s", "--interval", "52w"},
     "--interval: 364.0 d is"},
    // CLI11's own range check printed the largest double, 309 digits, as the bound.
    {"gbs_negative",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--gbs", "-1"},
     "--gbs: must be a whole number from 1 to 9223372036854775807 (2^63-1), got -1"},
    {"tp_zero",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "0"},
     "--tp: must be a whole number from 1 to 2147483647 (2^31-1), got 0"},
    {"tp_exponent",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "1e30"},
     "--tp: must be a whole number from 1 to 2147483647 (2^31-1), got 1e30"},
    {"tp_past_2_31",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "99999999999"},
     "--tp: must be a whole number from 1 to 2147483647 (2^31-1), got 99999999999"},
    {"rounds_range",
     {"calibrate", "training", "--rounds", "50"},
     "--rounds: must be a whole number from 1 to 20, got 50"},
    {"anchor_range", {"calibrate", "training", "--anchor", "-1"}, "--anchor: must be a number from 0 to 10, got -1"},
    {"seq_len_fraction",
     {"models", "show", "llama3.1-8b", "--seq-len", "1.5"},
     "--seq-len: must be a whole number from 1 to 9223372036854775807 (2^63-1), got 1.5"},
    // An integer flag without a range check of its own: CLI11's "Could not convert" made readable.
    {"seed_fraction",
     {"goodput", "--gpus", "16", "--save-time", "30s", "--seed", "1.5"},
     "--seed: must be a whole number"},
};

INSTANTIATE_TEST_SUITE_P(Robustness, AbsurdInput, ::testing::ValuesIn(kAbsurd),
                         [](const auto& info) { return info.param.name; });

// Absurd but legal sizes are simulated, quickly: a million GPUs, a 1-token and a 10-million-token
// sequence.
TEST(Robustness, HugeButLegalJobsRunInBoundedTime) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:125000", "--tp", "8", "--json"},
           {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "1", "--json"},
           {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "10000000", "--json"}}) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("step_time_s"));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  }
}

// Extreme but accepted values through every command: each either runs and prints no nan or inf
// (text output; JSON would print null) or is refused with exit 2 naming a flag, never a crash.
struct Extreme {
  std::string name;
  std::vector<std::string> args;
};

class ExtremeValues : public ::testing::TestWithParam<Extreme> {};

bool has_nan_or_inf(const std::string& text) {
  static const std::regex word(R"((^|[^A-Za-z_])[-+]?(nan|inf|infinity)([^A-Za-z_]|$))", std::regex::icase);
  return std::regex_search(text, word);
}

TEST(ExtremeValuesCheck, FindsNanAndInfButNotWords) {
  EXPECT_TRUE(has_nan_or_inf("ETTR -nan%"));
  EXPECT_TRUE(has_nan_or_inf("goodput inf GPU-h"));
  EXPECT_TRUE(has_nan_or_inf("1.0, NaN"));
  EXPECT_FALSE(has_nan_or_inf("inference info infiniband nano"));
}

TEST_P(ExtremeValues, RunOrRefuseWithoutNanOrInf) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_fmsim(GetParam().args);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  if (r.exit_code == 2) {
    EXPECT_THAT(r.err, HasSubstr("fmsim: error: "));
    EXPECT_THAT(r.err, ::testing::ContainsRegex("--[a-z]"));  // names a flag
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_FALSE(has_nan_or_inf(r.out)) << r.out;
  EXPECT_FALSE(has_nan_or_inf(r.err)) << r.err;
}

const std::vector<Extreme> kExtreme = {
    {"train_one_token",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--tp", "8", "--seq", "1", "--gbs", "1"}},
    {"train_huge_seq", {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "134217728"}},
    {"train_800k_gpus", {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:100000", "--tp", "8"}},
    {"plan_one_gpu", {"plan", "--model", "llama3.1-8b", "--gpus", "1", "--tokens", "1"}},
    {"collective_one_byte", {"collective", "--cluster", "p5.48xlarge:1", "--min-bytes", "1", "--max-bytes", "1"}},
    {"collective_10k_nodes",
     {"collective", "--cluster", "p5.48xlarge:10000", "--op", "all_to_all", "--max-bytes", "8"}},
    {"checkpoint_one_param", {"checkpoint", "--params", "1", "--gpus", "1"}},
    {"checkpoint_1e18_params", {"checkpoint", "--params", "1e18", "--gpus", "8"}},
    {"goodput_instant_save", {"goodput", "--gpus", "8", "--save-time", "0s", "--replications", "10"}},
    {"goodput_million_gpus", {"goodput", "--gpus", "1000000", "--save-time", "30s", "--replications", "10"}},
    {"goodput_save_near_limit", {"goodput", "--gpus", "16384", "--save-time", "3d", "--replications", "10"}},
    {"goodput_ten_years",
     {"goodput", "--gpus", "64", "--save-time", "1min", "--duration", "3650d", "--replications", "10"}},
    {"run_one_hour",
     {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--duration", "1h", "--replications", "10"}},
    {"models_one_token", {"models", "show", "llama3.1-8b", "--seq-len", "1"}},
    {"serve_one_token",
     {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--isl", "1", "--osl", "1", "--num-requests",
      "1"}},
    {"serve_flood",
     {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--rate", "1000000", "--num-requests", "200"}},
    {"plan_serve_tiny_rate",
     {"plan-serve", "--model", "llama3.1-8b", "--families", "p5.48xlarge", "--rate", "0.001", "--probe-requests",
      "20"}},
    {"rl_one_prompt", {"rl", "--policy", "qwen3-8b", "--cluster", "p5.48xlarge:1", "--prompts", "1", "--samples", "1"}},
    {"cluster_one_job", {"cluster", "--cluster", "p5.48xlarge:1", "--synthetic", "1"}},
    {"cluster_busy",
     {"cluster", "--cluster", "p5.48xlarge:2", "--synthetic", "300", "--arrival", "1s", "--node-failure-rate", "1000"}},
    {"topology_one_node", {"topology", "slurm", "--cluster", "p5.48xlarge:1"}},
};

INSTANTIATE_TEST_SUITE_P(Robustness, ExtremeValues, ::testing::ValuesIn(kExtreme),
                         [](const auto& info) { return info.param.name; });

// A bad output path is an error from the flag parser, before the simulation starts, and nothing
// is left behind (neither the file nor a temporary beside it).
TEST(Robustness, BadOutputPathFailsBeforeAnyWork) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "robust_out";
  std::filesystem::create_directories(dir);
  const auto missing = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--trace",
                                  (dir / "no/such/folder/step.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--trace: cannot write"));
  EXPECT_THAT(missing.err, HasSubstr("does not exist"));
  EXPECT_EQ(missing.out, "");
  const auto is_dir = run_fmsim({"plan", "--model", "llama3.1-8b", "--gpus", "64", "--report", dir.string()});
  EXPECT_EQ(is_dir.exit_code, 2);
  EXPECT_THAT(is_dir.err, HasSubstr("is a directory; give a file name"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // Every other command that writes a file checks its path the same way.
  const std::string missing_file = (dir / "no/such/folder/out.txt").string();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--trace", missing_file},
           {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--metrics", missing_file},
           {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--timeseries", missing_file},
           {"rl", "--trace", missing_file},
           {"topology", "--cluster", "p5.48xlarge:4", "--output", missing_file},
           {"calibrate", "training", "--write", missing_file},
           {"validate", "collectives", "--write-doc", missing_file}}) {
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[args.size() - 2];
    EXPECT_THAT(r.err, HasSubstr("folder '" + (dir / "no/such/folder").string() + "' does not exist")) << args[0];
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace fmsim::testing
