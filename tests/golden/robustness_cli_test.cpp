// Absurd inputs are errors that name the flag and the allowed range (exit 2), never a crash,
// an internal error, a hang or a wrapped number; a bad output path is refused before any work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
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
    {"size_past_2_63", {"collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "1e30"},
     "--max-bytes: '1e30' is too large for a size; allowed: below 2^63"},
    {"size_nan", {"collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "nan"}, "--max-bytes: 'nan' is not a size"},
    {"size_negative", {"collective", "--cluster", "p5.48xlarge:2", "--min-bytes", "-5"}, "--min-bytes: must be positive"},
    // 8 B .. 16 GiB by 1.0000001 is 2.15e8 rows: refused rather than printed for hours.
    {"rows_unbounded", {"collective", "--cluster", "p5.48xlarge:2", "--step-factor", "1.0000001"},
     "--step-factor: 1.0000001 from 8 to 16G gives 2.15e+08 sizes; at most 100000"},
    {"step_nan", {"collective", "--cluster", "p5.48xlarge:2", "--step-factor", "nan"}, "--step-factor: must be greater than 1"},
    // 2^31 - 1 tokens overflowed the integer-nanosecond clock (internal error before).
    {"seq_2_31", {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "2147483647"},
     "--seq: 2147483647 tokens is too long; allowed: 1 to 134217728"},
    // 10^8 sequences at mbs 1, dp 64: 1.56 million micro-batches per step ran for minutes before.
    {"microbatches", {"train", "--model", "llama3.1-405b", "--cluster", "p5.48xlarge:1024", "--tp", "8", "--pp", "16",
                      "--gbs", "100000000"},
     "--gbs: global batch 100000000 is 1562500 micro-batches"},
    {"tokens_inf", {"plan", "--model", "llama3.1-8b", "--gpus", "64", "--tokens", "inf"}, "--tokens: 'inf'"},
    {"params_past_2_63", {"checkpoint", "--params", "1e30", "--gpus", "512"}, "--params: '1e30' is not a positive count"},
    // 10^8 Monte Carlo runs grew past 4 GB before; 10^30 s of save time printed -nan.
    {"replications", {"goodput", "--gpus", "16384", "--save-time", "30s", "--replications", "100000000"},
     "--replications: 100000000 is out of range; allowed: 0 to 1000000"},
    {"duration_huge", {"goodput", "--gpus", "16384", "--save-time", "1e30s"},
     "--save-time: '1e30s' is too long; allowed: 0 to 10 years"},
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
}

}  // namespace
}  // namespace fmsim::testing
