// `fmsim plan` end to end: the table, the --json schema and the relations between its numbers,
// pins that narrow the search, the scaling sweep, --against-csv, and bad flags (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::with;
using nlohmann::json;
using ::testing::HasSubstr;

// A quick search: Llama 3.1 8B on 64 GPUs of two systems.
const std::vector<std::string> kSmall{
    "plan",      "--model", "llama3.1-8b", "--gpus", "64", "--systems", "p5.48xlarge,u-p6e-gb200x72",
    "--threads", "2",       "--tokens",    "1T"};

TEST(PlanCli, TablePerSystemWithBottleneckLines) {
  // The text output has a heading per system (name, units, GPU), a header row, ranked rows and a
  // "bottleneck:" line under each, and a closing "Best by time" line.
  const auto r = run_fmsim(kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Plan: llama3.1-8b on 64 GPUs"));
  EXPECT_THAT(r.out, HasSubstr("p5.48xlarge: 8 x p5.48xlarge"));
  EXPECT_THAT(r.out, HasSubstr("u-p6e-gb200x72: 1 x u-p6e-gb200x72"));
  EXPECT_THAT(r.out, HasSubstr("LAYOUT"));
  EXPECT_THAT(r.out, HasSubstr("TOK/S/GPU"));
  EXPECT_THAT(r.out, HasSubstr("bottleneck: "));
  EXPECT_THAT(r.out, HasSubstr("Best by time: "));
  EXPECT_TRUE(r.err.empty()) << "no progress bar or noise on a non-terminal stderr: " << r.err;
}

TEST(PlanCli, JsonSchemaAndRelations) {
  // Relations every layout satisfies: train seconds = steps x step time; cost = units x price per
  // unit-hour x hours; tokens/s/GPU = gbs x seq / (step x GPUs); the breakdown sums to the step
  // time; memory + headroom = capacity, and memory fits; ranks ascend with step time (objective time).
  const auto r = run_fmsim(with(kSmall, {"--json", "--top", "3"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("command"), "plan");
  EXPECT_EQ(j.at("model"), "llama3.1-8b");
  EXPECT_EQ(j.at("objective"), "time");
  EXPECT_EQ(j.at("seq_len"), 8192);
  EXPECT_EQ(j.at("global_batch"), 1024);
  EXPECT_GT(j.at("search").at("candidates").get<double>(), 0);
  EXPECT_EQ(j.at("search").at("candidates").get<double>(), j.at("search").at("pruned_batch").get<double>() +
                                                               j.at("search").at("pruned_memory").get<double>() +
                                                               j.at("search").at("evaluated").get<double>());
  ASSERT_EQ(j.at("systems").size(), 2u);
  for (const auto& s : j.at("systems")) {
    const double price = s.at("price_per_unit_hour_usd").get<double>();
    const auto& layouts = s.at("layouts");
    ASSERT_GE(layouts.size(), 1u) << s.at("system");
    ASSERT_LE(layouts.size(), 3u);
    double previous = 0;
    for (const auto& l : layouts) {
      for (const char* key : {"label",
                              "tp",
                              "pp",
                              "vp",
                              "cp",
                              "ep",
                              "dp",
                              "sharding",
                              "micro_batch",
                              "recompute",
                              "precision",
                              "step_time_s",
                              "tokens_per_s_per_gpu",
                              "mfu",
                              "memory_bytes",
                              "memory_capacity_bytes",
                              "headroom_bytes",
                              "train_days",
                              "cost_usd",
                              "breakdown_s",
                              "bottleneck"}) {
        EXPECT_TRUE(l.contains(key)) << key;
      }
      const double step = l.at("step_time_s").get<double>();
      EXPECT_GE(step, previous);
      previous = step;
      EXPECT_NEAR(l.at("train_seconds").get<double>(), l.at("steps").get<double>() * step,
                  1e-9 * l.at("train_seconds").get<double>());
      EXPECT_NEAR(l.at("cost_usd").get<double>(),
                  l.at("units").get<double>() * price * l.at("train_seconds").get<double>() / 3600.0,
                  1e-9 * l.at("cost_usd").get<double>());
      EXPECT_NEAR(l.at("tokens_per_s_per_gpu").get<double>(), 1024.0 * 8192.0 / (step * 64.0),
                  1e-9 * l.at("tokens_per_s_per_gpu").get<double>());
      double sum = 0;
      for (const auto& [_, v] : l.at("breakdown_s").items()) sum += v.get<double>();
      EXPECT_NEAR(sum, step, 1e-9 * step);
      EXPECT_LE(l.at("memory_bytes").get<double>(), l.at("memory_capacity_bytes").get<double>());
      EXPECT_NEAR(l.at("memory_bytes").get<double>() + l.at("headroom_bytes").get<double>(),
                  l.at("memory_capacity_bytes").get<double>(), 1.0);
      EXPECT_EQ(l.at("tp").get<int>() * l.at("pp").get<int>() * l.at("cp").get<int>() * l.at("dp").get<int>(), 64);
      EXPECT_FALSE(l.at("bottleneck").at("sentence").get<std::string>().empty());
    }
  }
  // The best is the fastest #1 across systems.
  double fastest = INFINITY;
  for (const auto& s : j.at("systems"))
    fastest = std::min(fastest, s.at("layouts").at(0).at("step_time_s").get<double>());
  EXPECT_DOUBLE_EQ(j.at("best").at("step_time_s").get<double>(), fastest);
}

TEST(PlanCli, PinsNarrowTheSearch) {
  // --tp 8 --max-pp 2: every layout shown has tp 8 and pp <= 2.
  const auto r = run_fmsim(with(kSmall, {"--json", "--tp", "8", "--max-pp", "2", "--top", "5"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  for (const auto& s : j.at("systems")) {
    for (const auto& l : s.at("layouts")) {
      EXPECT_EQ(l.at("tp"), 8);
      EXPECT_LE(l.at("pp").get<int>(), 2);
    }
  }
}

// Megatron-Bridge's MoE switches apply to every candidate: with the all-to-all overlapped, a
// full-iteration graph and the fused grouped MLP, Qwen3-30B-A3B's best layout on 16 H100 is faster
// than without (the switches only remove or hide time).
TEST(PlanCli, MoeRecipeSwitchesSpeedUpTheCandidates) {
  const std::vector<std::string> moe{"plan",      "--model",  "qwen3-30b-a3b", "--gpus", "16",
                                     "--systems", "dgx-h100", "--threads",     "2",      "--tokens",
                                     "1T",        "--json"};
  const auto plain = run_fmsim(moe);
  const auto switched =
      run_fmsim(with(moe, {"--moe-a2a-overlap", "--full-iteration-cuda-graph", "--fused-grouped-mlp"}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(switched.exit_code, 0) << switched.err;
  EXPECT_LT(json::parse(switched.out).at("best").at("step_time_s").get<double>(),
            json::parse(plain.out).at("best").at("step_time_s").get<double>());
}

TEST(PlanCli, CostObjectiveRanksByCost) {
  // --objective cost: the best system's #1 has the lowest cost of all systems' #1.
  const auto r = run_fmsim(with(kSmall, {"--json", "--objective", "cost"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  double cheapest = INFINITY;
  for (const auto& s : j.at("systems"))
    cheapest = std::min(cheapest, s.at("layouts").at(0).at("cost_usd").get<double>());
  EXPECT_DOUBLE_EQ(j.at("best").at("cost_usd").get<double>(), cheapest);
}

TEST(PlanCli, ScalingSweep) {
  // --scaling --gpus-range 32:128 sweeps 32, 64, 128; the first point has no speedup, later ones
  // have speedup = previous step time / this step time.
  const auto r = run_fmsim({"plan", "--model", "llama3.1-8b", "--systems", "p5.48xlarge", "--scaling", "--gpus-range",
                            "32:128", "--threads", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j.at("scaling").size(), 1u);
  const auto& points = j.at("scaling").at(0).at("points");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points.at(0).at("gpus"), 32);
  EXPECT_EQ(points.at(2).at("gpus"), 128);
  EXPECT_TRUE(points.at(0).at("speedup").is_null());
  const double t0 = points.at(0).at("layout").at("step_time_s").get<double>();
  const double t1 = points.at(1).at("layout").at("step_time_s").get<double>();
  EXPECT_NEAR(points.at(1).at("speedup").get<double>(), t0 / t1, 1e-9);
  const auto text = run_fmsim({"plan", "--model", "llama3.1-8b", "--systems", "p5.48xlarge", "--scaling",
                               "--gpus-range", "32:128", "--threads", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Scaling: the best layout at each GPU count"));
  EXPECT_THAT(text.out, HasSubstr("EFFICIENCY"));
}

TEST(PlanCli, AgainstCsvPlannerAtLeastAsFastAsPublished) {
  // For published layouts inside the search space that fit the memory model, the planner's best
  // (searching the same space, same precision, batch and sequence) predicts a step at most as long.
  const std::string csv = fmsim::testing::source_path("validation/training.csv");
  std::ifstream in(csv);
  ASSERT_TRUE(in) << csv;
  std::string header, line, rows;
  std::getline(in, header);
  while (std::getline(in, line)) {
    if (line.rfind("V001,", 0) == 0 || line.rfind("V002,", 0) == 0) rows += line + "\n";
  }
  ASSERT_FALSE(rows.empty());
  const auto path = std::filesystem::path(::testing::TempDir()) / "fmsim_plan_csv.csv";
  std::ofstream(path) << header << "\n" << rows;
  const auto r = run_fmsim({"plan", "--against-csv", path.string(), "--json", "--threads", "2"});
  std::filesystem::remove(path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_GE(j.at("groups").size(), 1u);
  for (const auto& g : j.at("groups")) {
    if (!g.at("published_fits_memory").get<bool>()) continue;
    EXPECT_LE(g.at("planner_predicted_step_s").get<double>(),
              g.at("published_predicted_step_s").get<double>() * (1 + 1e-9))
        << g.dump();
  }
}

struct BadFlag {
  std::vector<std::string> args;
  std::string message;  // expected in stderr
};

// Test names show the command line, not the struct's bytes.
void PrintTo(const BadFlag& f, std::ostream* os) {
  for (const auto& a : f.args) *os << a << ' ';
}

class PlanBadFlags : public ::testing::TestWithParam<BadFlag> {};

TEST_P(PlanBadFlags, ExitTwoWithAClearMessage) {
  // Bad input is exit status 2 with a message naming the flag and what is allowed.
  const auto r = run_fmsim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Flags, PlanBadFlags,
    ::testing::Values(
        BadFlag{{"plan", "--objective", "speed"}, "unknown objective 'speed'; allowed: time, cost, tokens-per-dollar"},
        BadFlag{{"plan", "--gpus", "0"}, "--gpus"}, BadFlag{{"plan", "--tp", "6"}, "6 does not divide"},
        BadFlag{{"plan", "--tp", "x"}, "'x' is not a whole number"},
        BadFlag{{"plan", "--systems", "p5.48xlarg"}, "p5.48xlarge"},
        BadFlag{{"plan", "--systems", "p5.48xlarge,p5.48xlarge"}, "listed twice"},
        BadFlag{{"plan", "--tokens", "lots"}, "--tokens"},
        BadFlag{{"plan", "--gpus-range", "1024:256"}, "MAX is below MIN"},
        BadFlag{{"plan", "--gpus-range", "256"}, "expected MIN:MAX"},
        BadFlag{{"plan", "--model", "no-such-model"}, "no-such-model"},
        BadFlag{{"plan", "--ep", "8"}, "expert parallelism needs a mixture of experts"},
        BadFlag{{"plan", "--sharding", "zero4"},
                "unknown sharding 'zero4'; allowed: ddp (none, zero0), zero1 (distopt"},
        BadFlag{{"plan", "--recompute", "some"},
                "unknown recompute policy 'some'; allowed: none (no, off), selective (sel), full"},
        BadFlag{{"plan", "--precision", "int8"},
                "unknown training precision 'int8'; allowed: bf16, fp16, fp8 (mxfp8), fp4 (nvfp4, mxfp4)"},
        BadFlag{{"plan", "--stack", "jax"}, "jax"},
        BadFlag{{"plan", "--moe-dispatcher", "deepep"}, "allowed: alltoall, deduplicated"},
        BadFlag{{"plan", "--top", "0"}, "--top"}, BadFlag{{"plan", "--no-such-flag"}, "no-such-flag"}));

}  // namespace
