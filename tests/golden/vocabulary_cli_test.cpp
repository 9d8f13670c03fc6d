// One vocabulary across commands (docs/cli.md): the same concept has one flag and one JSON key
// everywhere, the older spellings still work as aliases, unknown words get a suggestion, and
// serve's --cluster SYSTEM:COUNT is the fleet it simulates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

// The same command with the current and the older spelling of a flag prints the same thing.
void expect_alias(const std::vector<std::string>& current, const std::vector<std::string>& older) {
  const auto a = run_fmsim(current);
  const auto b = run_fmsim(older);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Vocabulary, OlderFlagSpellingsAreAliases) {
  // plan-serve --systems as plan --systems (--families before); rl --model as every command
  // (--policy before).
  expect_alias({"plan-serve", "--model", "llama3.1-8b", "--systems", "p5.48xlarge", "--rate", "20", "--probe-requests",
                "30", "--no-disagg", "--json"},
               {"plan-serve", "--model", "llama3.1-8b", "--families", "p5.48xlarge", "--rate", "20", "--probe-requests",
                "30", "--no-disagg", "--json"});
  expect_alias({"rl", "--model", "qwen3-8b", "--cluster", "p5.48xlarge:2", "--prompts", "64", "--json"},
               {"rl", "--policy", "qwen3-8b", "--cluster", "p5.48xlarge:2", "--prompts", "64", "--json"});
}

TEST(Vocabulary, TraceOutWritesTheTraceAndJobTraceReadsIt) {
  // Outputs end in -out: train --trace-out writes the Chrome trace (--trace is the older name);
  // cluster --job-trace-out writes the job trace and --job-trace reads it back (--write-trace and
  // --trace before): the replay of the written trace prints the same summary.
  const fs::path dir = fs::path(::testing::TempDir()) / "vocabulary_trace";
  fs::create_directories(dir);
  for (const char* flag : {"--trace-out", "--trace"}) {
    const fs::path out = dir / (std::string(flag + 2) + ".json");
    const auto r = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", flag, out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(fs::file_size(out), 100u) << flag;
  }
  const fs::path jobs = dir / "jobs.csv";
  const auto written = run_fmsim(
      {"cluster", "--cluster", "p5en.48xlarge:16", "--synthetic", "50", "--json", "--job-trace-out", jobs.string()});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  for (const char* flag : {"--job-trace", "--trace"}) {
    const auto replay = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:16", flag, jobs.string(), "--json"});
    ASSERT_EQ(replay.exit_code, 0) << replay.err;
    const auto a = nlohmann::json::parse(written.out)["policies"][0]["summary"];
    const auto b = nlohmann::json::parse(replay.out)["policies"][0]["summary"];
    EXPECT_EQ(a["completed"], b["completed"]) << flag;
    EXPECT_EQ(a["mean_wait_s"], b["mean_wait_s"]) << flag;
  }
}

TEST(Vocabulary, FitsMemoryIsTheKeyEverywhere) {
  // train and run said fits_memory, serve fits, rl training_fits_memory: all say fits_memory now,
  // the older keys kept for one release.
  const auto serve = run_fmsim({"serve", "--model", "llama3.1-8b", "--num-requests", "20", "--json"});
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  const auto s = nlohmann::json::parse(serve.out);
  EXPECT_EQ(s["fits_memory"], true);
  EXPECT_EQ(s["fits"], s["fits_memory"]);
  const auto rl = run_fmsim({"rl", "--model", "qwen3-8b", "--cluster", "p5.48xlarge:2", "--prompts", "64", "--json"});
  ASSERT_EQ(rl.exit_code, 0) << rl.err;
  const auto r = nlohmann::json::parse(rl.out);
  EXPECT_TRUE(r["fits_memory"].is_boolean());
  EXPECT_EQ(r["training_fits_memory"], r["fits_memory"]);
  const auto train = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--json"});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_TRUE(nlohmann::json::parse(train.out)["fits_memory"].is_boolean());
}

TEST(Vocabulary, UnknownWordsGetASuggestion) {
  const auto command = run_fmsim({"traim"});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_THAT(command.err, HasSubstr("did you mean train?"));
  const auto flag = run_fmsim({"plan-serve", "--sytems", "p5.48xlarge"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_THAT(flag.err, HasSubstr("did you mean --systems"));
  const auto sub = run_fmsim({"validate", "rll"});
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_THAT(sub.err, HasSubstr("did you mean rl?"));
}

TEST(Vocabulary, ServeClusterCountIsTheFleet) {
  // --cluster p5en.48xlarge:2 holds 2 x 8 = 16 GPUs: at tp 4 that is 16 / 4 = 4 replicas (the :2
  // was ignored: one replica). --replicas that need more GPUs than the cluster holds are refused.
  const auto fleet = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge:2", "--tp", "4",
                                "--num-requests", "40", "--json"});
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  EXPECT_EQ(nlohmann::json::parse(fleet.out)["replicas"], 4);
  const auto too_many =
      run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge:1", "--tp", "8", "--replicas", "2"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_THAT(too_many.err, HasSubstr("2 replicas of 8 GPUs need 16; --cluster p5en.48xlarge:1 holds 8"));
  const auto bare = run_fmsim(
      {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--tp", "4", "--num-requests", "40", "--json"});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_EQ(nlohmann::json::parse(bare.out)["replicas"], 1);
}

}  // namespace
