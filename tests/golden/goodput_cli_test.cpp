// Golden tests of `fmsim goodput`: plain-number input, JSON, determinism and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

TEST(GoodputCli, Llama3SnapshotFromPlainNumbers) {
  // 16,384 GPUs on the Llama 3 mix: 419 interruptions expected in 54 days (MTBF 3.1 h).
  const auto r = run_fmsim({"goodput", "--gpus", "16384", "--save-time", "10s", "--load-time", "1min", "--duration",
                            "54d", "--replications", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("job MTBF 3.1 h"));
  EXPECT_THAT(r.out, HasSubstr("ETTR"));
  EXPECT_THAT(r.out, HasSubstr("lost work"));
}

TEST(GoodputCli, JsonAgreesWithItselfAndRepeats) {
  // Analytic and Monte Carlo ETTR agree within 0.5 pp; the same seed prints the same bytes.
  const std::vector<std::string> args{"goodput", "--gpus",     "16384", "--save-time",    "60s", "--restart",
                                      "8min",    "--duration", "54d",   "--replications", "300", "--json"};
  const auto a = run_fmsim(args);
  const auto b = run_fmsim(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_NEAR(j["analytic"]["ettr"].get<double>(), j["monte_carlo"]["ettr"].get<double>(), 0.005);
  EXPECT_NEAR(j["mtbf_s"].get<double>() / 3600.0, 54.0 * 24.0 / 419.0, 1e-6);
  EXPECT_EQ(j["monte_carlo"]["replications"].get<int>(), 300);
}

TEST(GoodputCli, PublishedRateAndStrategies) {
  // Meta RSC-1 rate on 131,072 GPUs: MTBF 13.5 min; async stalls only for the copy.
  const auto r =
      run_fmsim({"goodput", "--gpus", "131072", "--node-failure-rate", "meta-rsc1", "--strategy", "async",
                 "--save-time", "60s", "--copy-time", "2s", "--duration", "7d", "--replications", "50", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["mtbf_s"].get<double>() / 60.0, 13.5, 0.1);
  EXPECT_DOUBLE_EQ(j["checkpoint"]["blocking_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["checkpoint"]["persist_s"].get<double>(), 60.0);
}

TEST(GoodputCli, BadInputExitsTwo) {
  const auto typo = run_fmsim({"goodput", "--gpus", "64", "--save-time", "10s", "--failures", "lama3-405b"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, HasSubstr("llama3-405b"));
  const auto duration = run_fmsim({"goodput", "--gpus", "64", "--save-time", "ten seconds"});
  EXPECT_EQ(duration.exit_code, 2);
  EXPECT_THAT(duration.err, HasSubstr("--save-time"));
  const auto no_save = run_fmsim({"goodput", "--gpus", "64"});
  EXPECT_EQ(no_save.exit_code, 2);
  EXPECT_THAT(no_save.err, HasSubstr("--save-time"));
  const auto no_size = run_fmsim({"goodput", "--save-time", "10s"});
  EXPECT_EQ(no_size.exit_code, 2);
  const auto strategy = run_fmsim({"goodput", "--gpus", "64", "--save-time", "10s", "--strategy", "lazy"});
  EXPECT_EQ(strategy.exit_code, 2);
  EXPECT_THAT(strategy.err, HasSubstr("allowed: sync, async, in-memory (memory), peer"));
}

}  // namespace
