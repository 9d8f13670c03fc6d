// One vocabulary for every command: a word one command accepts, every command that reads the same
// setting accepts, and every refusal lists the same words (issue 19: `train --sharding distopt`
// worked while `plan --sharding distopt` failed; `plan --recompute sel` worked, `train` refused it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::with;
using ::testing::HasSubstr;

const std::vector<std::string> kTrain = {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:8",
                                         "--gbs", "64",      "--seq",       "4096",      "--json"};
const std::vector<std::string> kPlan = {"plan",        "--model",  "llama3.1-8b", "--gpus", "64", "--systems",
                                        "p5.48xlarge", "--tokens", "1B",          "--top",  "1",  "--json"};

TEST(WordsCli, TrainAndPlanAcceptTheSameShardingAndRecomputeWords) {
  for (const auto& base : {kTrain, kPlan}) {
    const auto r = run_fmsim(with(base, {"--sharding", "distopt", "--recompute", "sel"}));
    EXPECT_EQ(r.exit_code, 0) << base[0] << ": " << r.err;
  }
}

TEST(WordsCli, AnAliasGivesTheSameFiguresAsTheCanonicalWord) {
  // distopt is zero1, sel is selective: the same job, the same JSON.
  const auto alias = run_fmsim(with(kTrain, {"--sharding", "distopt", "--recompute", "sel"}));
  const auto canonical = run_fmsim(with(kTrain, {"--sharding", "zero1", "--recompute", "selective"}));
  ASSERT_EQ(alias.exit_code, 0) << alias.err;
  EXPECT_EQ(alias.out, canonical.out);
}

TEST(WordsCli, RefusalsNameTheFlagAndListTheSameWords) {
  const std::string allowed =
      "allowed: ddp (none, zero0), zero1 (distopt, distributed-optimizer, optimizer), "
      "zero2 (shard-grad-op), fsdp (zero3, full-shard, full)";
  const auto t = run_fmsim(with(kTrain, {"--sharding", "zero4"}));
  const auto p = run_fmsim(with(kPlan, {"--sharding", "zero4"}));
  const auto c = run_fmsim({"checkpoint", "--model", "llama3.1-8b", "--gpus", "8", "--sharding", "zero4"});
  for (const auto* r : {&t, &p, &c}) {
    EXPECT_EQ(r->exit_code, 2);
    EXPECT_THAT(r->err, HasSubstr("--sharding"));
    EXPECT_THAT(r->err, HasSubstr(allowed));
  }
}

// Serving words (issue 19): --speculative, --router, --isl-dist/--osl-dist, --preemption,
// --kv-offload and --engine read through their vocabularies; an alias is the same deployment.
TEST(WordsCli, ServeAliasesGiveTheSameFiguresAsTheCanonicalWords) {
  const std::vector<std::string> base = {"serve",          "--model", "llama3.1-8b", "--rate", "20",
                                         "--num-requests", "60",      "--replicas",  "2",      "--json"};
  const auto alias =
      run_fmsim(with(base, {"--speculative", "draft-model", "--router", "jsq", "--isl-dist", "gaussian", "--isl-spread",
                            "0.2", "--preemption", "SWAP", "--engine", "TensorRT-LLM", "--kv-offload", "dram"}));
  const auto canonical = run_fmsim(
      with(base, {"--speculative", "draft", "--router", "least-outstanding", "--isl-dist", "normal", "--isl-spread",
                  "0.2", "--preemption", "swap", "--engine", "trtllm", "--kv-offload", "host"}));
  ASSERT_EQ(canonical.exit_code, 0) << canonical.err;
  EXPECT_EQ(alias.out, canonical.out);
}

// Each (flag, allowed words): `base flag bogus` exits 2 naming the flag and listing the words.
void expect_refusals(const std::vector<std::string>& base,
                     const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [flag, allowed] : cases) {
    const auto r = run_fmsim(with(base, {flag, "bogus"}));
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_THAT(r.err, HasSubstr(flag + ": unknown")) << r.err;
    EXPECT_THAT(r.err, HasSubstr(allowed)) << r.err;
  }
}

TEST(WordsCli, ServingRefusalsNameTheFlagAndListTheWords) {
  expect_refusals({"serve", "--model", "llama3.1-8b", "--num-requests", "10"},
                  {
                      {"--preemption", "allowed: recompute, swap"},
                      {"--speculative", "allowed: none (off), mtp, eagle, draft (draft-model)"},
                      {"--osl-dist", "allowed: fixed (constant), uniform, normal (gaussian), lognormal, exponential"},
                      {"--router", "allowed: round-robin (rr), least-outstanding (jsq), prefix-aware (prefix)"},
                      {"--kv-offload", "allowed: none, host (dram, cpu), grace (lpddr5x), nvme (ssd, disk)"},
                      {"--engine", "allowed: vllm, sglang, trtllm (tensorrt-llm, tensorrt)"},
                      {"--precision", "allowed: bf16, fp16, fp8 (mxfp8), fp4 (nvfp4), mxfp4"},
                  });
}

// Cluster words: --scheduler, --placement, --policy.
TEST(WordsCli, ClusterRefusalsListTheWords) {
  expect_refusals({"cluster", "--cluster", "p5en.48xlarge:4", "--synthetic", "5"},
                  {
                      {"--scheduler", "allowed: slurm, k8s (kubernetes, kueue)"},
                      {"--placement", "allowed: consecutive (none), tree, block"},
                      {"--policy", "allowed: backfill, fifo (builtin)"},
                  });
}

}  // namespace

namespace {

struct Typo {
  std::vector<std::string> args;
  std::string message;  ///< the whole first line of stderr
};

// Issue 43: `fmsim traim` said "A subcommand is required" and a misspelt flag "The following
// arguments were not expected"; each now names the word and the closest real ones (exit 2).
TEST(WordsCli, MisspeltSubcommandsAndFlagsSuggestTheClosest) {
  const std::vector<Typo> typos = {
      {{"traim"}, "fmsim: error: unknown subcommand 'traim'; did you mean train?"},
      // --catalog takes one file per flag: it read the command word after it as a second file.
      {{"--catalog", fmsim::testing::source_path("examples/custom_catalog.yaml"), "traim"},
       "fmsim: error: unknown subcommand 'traim'; did you mean train?"},
      {{"plann", "--gpus", "8"}, "fmsim: error: unknown subcommand 'plann'; did you mean plan?"},
      {{"validate", "trainng"}, "fmsim: error: unknown subcommand 'trainng'; did you mean training?"},
      {{"catalog", "gpuss"}, "fmsim: error: unknown subcommand 'gpuss'; did you mean gpus?"},
      {{"train", "--model", "llama3.1-8b", "--tpp", "8"},
       "fmsim: error: unknown flag '--tpp' of `fmsim train`; did you mean --tp or --pp or --vp?"},
      {{"train", "--tpp=8"}, "fmsim: error: unknown flag '--tpp' of `fmsim train`; did you mean --tp or --pp or --vp?"},
      {{"serve", "--num-request", "5"},
       "fmsim: error: unknown flag '--num-request' of `fmsim serve`; did you mean --num-requests?"},
      {{"validate", "training", "--jsn"},
       "fmsim: error: unknown flag '--jsn' of `fmsim validate training`; did you mean --json or --csv?"},
      {{"train", "--zzzzzzzz"}, "fmsim: error: unknown flag '--zzzzzzzz' of `fmsim train`; see `fmsim train --help`"},
  };
  for (const auto& t : typos) {
    const auto r = run_fmsim(t.args);
    EXPECT_EQ(r.exit_code, 2) << t.args[0];
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), t.message) << r.err;
  }
}

}  // namespace
