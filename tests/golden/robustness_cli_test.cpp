// Absurd inputs are errors that name the flag and the allowed range (exit 2), never a crash,
// an internal error, a hang or a wrapped number; a bad output path is refused before any work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cli/process.hpp"
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
  EXPECT_LT(seconds, hang_guard_s(5.0)) << "refusing bad input must not take long";
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
     "--step-factor: must be a finite number, got nan"},
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
    // Issue 43: serve, plan-serve, cluster and rl accepted nan (exit 0; --acceptance nan hung),
    // and ran out of memory (bad_alloc, exit 70) on what they were asked to simulate.
    {"serve_rate_nan", {"serve", "--rate", "nan"}, "--rate: must be a finite number, got nan"},
    {"serve_memory_nan",
     {"serve", "--gpu-memory-utilization", "nan"},
     "--gpu-memory-utilization: must be a finite number, got nan"},
    {"serve_acceptance_nan",
     {"serve", "--speculative", "mtp", "--acceptance", "nan"},
     "--acceptance: must be a finite number, got nan"},
    {"serve_rate_past_double", {"serve", "--rate", "1e999"}, "--rate: must be a finite number, got 1e999"},
    {"plan_serve_rate_inf", {"plan-serve", "--rate", "inf"}, "--rate: must be a finite number, got inf"},
    {"serve_requests_exponent", {"serve", "--num-requests", "1e9"}, "--num-requests: must be a whole number, got 1e9"},
    {"serve_requests_huge",
     {"serve", "--num-requests", "1000000000"},
     "--num-requests: 1000000000 is out of range; allowed: 1 to 1,000,000 requests"},
    {"serve_samples_huge",
     {"serve", "--samples", "1000000"},
     "--samples: 1000000 is out of range; allowed: 1 to 1,024 samples per prompt"},
    {"serve_sequences_huge",
     {"serve", "--num-requests", "1000000", "--samples", "2"},
     "--samples: 1000000 requests x 2 samples is 2000000 sequences; at most 1,000,000 are simulated"},
    {"serve_replicas_huge",
     {"serve", "--replicas", "100000000"},
     "--replicas: 100000000 is out of range; allowed: 1 to 4,096 replicas"},
    {"serve_rate_negative", {"serve", "--rate", "-1"}, "--rate: -1 is out of range; allowed: 0 to 1e+06 requests/s"},
    // A request larger than the whole KV cache waited for room forever.
    {"serve_request_past_kv",
     {"serve", "--isl", "2000000", "--num-requests", "2"},
     "--isl: request 1 needs 2000000 input + 1024 output tokens of KV cache; the replica holds"},
    // 10^9 output tokens: 90 s and 3.7 GB of engine iterations.
    {"serve_output_tokens_huge",
     {"serve", "--num-requests", "10000", "--osl", "100000"},
     "--osl: the requests generate 1e+09 output tokens in all; at most 2^28 (2.68e+08) are simulated"},
    {"cluster_days_nan", {"cluster", "--days", "nan"}, "--days: must be a finite number, got nan"},
    {"cluster_days_huge", {"cluster", "--days", "1e9"}, "--days: 1e+09 is out of range; allowed: 0 to 3652.5 days"},
    {"cluster_limit_factor_nan", {"cluster", "--limit-factor", "nan"}, "--limit-factor: must be a finite number"},
    {"cluster_limit_factor_small",
     {"cluster", "--limit-factor", "0.5"},
     "--limit-factor: 0.5 is out of range; allowed: 1 to 1000"},
    {"cluster_synthetic_negative",
     {"cluster", "--synthetic", "-1"},
     "--synthetic: -1 is out of range; allowed: 0 to 1,000,000 jobs"},
    {"cluster_synthetic_huge",
     {"cluster", "--synthetic", "1000000000"},
     "--synthetic: 1000000000 is out of range; allowed: 0 to 1,000,000 jobs"},
    {"cluster_spares_huge",
     {"cluster", "--cluster", "p5en.48xlarge:128", "--spares", "100000000"},
     "--spares: 100000000 is out of range; allowed: 0 to 128 nodes"},
    {"cluster_nodes_huge",
     {"cluster", "--cluster", "p5.48xlarge:500000"},
     "--cluster: p5.48xlarge:500000 is 500000 nodes; allowed: at most 20,000 nodes in the cluster twin"},
    {"topology_nodes_huge",
     {"topology", "slurm", "--cluster", "p5.48xlarge:524288"},
     "--cluster: p5.48xlarge:524288 is 524288 nodes; allowed: at most 100,000"},
    {"cluster_compare_spares_huge",
     {"cluster", "--compare", "spares=100000000"},
     "--compare: spares: '100000000' is out of range; allowed: a whole number from 0 to 128"},
    // 10^9 failures per 1000 node-days on 4 nodes simulated for hours.
    {"cluster_failure_rate_huge",
     {"cluster", "--cluster", "p5.48xlarge:4", "--node-failure-rate", "1e9"},
     "--node-failure-rate: 1e9 per 1000 node-days is out of range; allowed: more than 0 to 1000 (one failure per "
     "node-day)"},
    {"cluster_slurm_conf_directory",
     {"cluster", "--slurm-conf", "/"},
     "--slurm-conf: cannot read '/': it is a directory; give a file"},
    // 1e30 tokens wrapped past 2^63 in the output; 1e6 tokens, more than the KV cache, never ended.
    {"rl_prompt_past_2_63",
     {"rl", "--prompt-len", "1e30"},
     "--prompt-len: '1e30' is 1e+30 tokens; allowed: 1 to 10,000,000"},
    {"rl_prompt_nan", {"rl", "--prompt-len", "nan"}, "--prompt-len: 'nan' is not a token count"},
    // 8 million responses took a minute and half a gigabyte.
    {"rl_responses_huge",
     {"rl", "--prompts", "1000000", "--samples", "8"},
     "--samples: 1000000 prompts x 8 samples is 8000000 responses; at most 1,000,000 are simulated"},
    {"rl_step_tokens_huge",
     {"rl", "--prompts", "100000", "--samples", "10", "--max-response", "10000"},
     "--max-response: 100000 prompts x 10 samples x 10000 tokens is 1e+10 response tokens a step; at most 2^32 "
     "(4.29e9) are simulated"},
    {"rl_steps_negative", {"rl", "--steps", "-1"}, "--steps: -1 is out of range; allowed: 1 to 1,000,000,000"},
    // The --metrics-out companions were read only with --metrics-out, so a bad value without it
    // ran (exit 0), and with it failed after the whole simulation: now checked when given.
    {"metrics_resolution_nan", {"run", "--metrics-resolution", "nan"}, "--metrics-resolution: 'nan' is not a duration"},
    {"metrics_heartbeat_no_unit", {"cluster", "--metrics-heartbeat", "-5"}, "--metrics-heartbeat: '-5' has no unit"},
    {"metrics_start_word", {"run", "--metrics-start", "yesterday"}, "--metrics-start: \"yesterday\" is not a time"},
    {"metrics_format_word",
     {"serve", "--metrics-format", "nan"},
     "--metrics-format: unknown metrics format 'nan'; allowed: openmetrics (om), tsdb (block)"},
    // plan-serve took an unknown --precision for a family without FP8 and skipped every family
    // (exit 0), and ignored --cluster, which only serve reads.
    {"plan_serve_precision_word",
     {"plan-serve", "--precision", "nan"},
     "--precision: unknown serving precision 'nan'; allowed: bf16, fp16, fp8 (mxfp8), fp4 (nvfp4), mxfp4"},
    {"plan_serve_cluster",
     {"plan-serve", "--cluster", "p5en.48xlarge"},
     "--cluster: plan-serve searches --systems (e.g. --systems p5en.48xlarge); --cluster is serve's"},
    // Words of a mode that was off were ignored (exit 0): Kueue's queueing without --scheduler
    // k8s, a column map without a trace.
    {"cluster_queueing_word",
     {"cluster", "--queueing", "nan"},
     "--queueing: unknown queueing strategy 'nan'; allowed: best-effort (besteffortfifo), strict (strictfifo)"},
    {"cluster_trace_map_without_trace",
     {"cluster", "--trace-map", "id=x"},
     "--trace-map: maps the columns of --job-trace FILE; give --job-trace"},
    // Speculative decoding's and disaggregation's values were read only with --speculative or
    // --disagg, so a bad one alone ran (exit 0).
    {"serve_acceptance_alone", {"serve", "--acceptance", "-1"}, "--acceptance: -1: allowed [0, 1)"},
    {"serve_kv_transfer_alone",
     {"serve", "--kv-transfer", "nan"},
     "--kv-transfer: unknown KV transfer 'nan'; allowed: layer (layerwise, streamed), request (whole)"},
    // Worker threads: -1 ran validate planner on every core, 1e6 would have started a million.
    {"validate_planner_threads_negative",
     {"validate", "planner", "--threads", "-1"},
     "--threads: must be a whole number from 0 to 1024, got -1"},
    {"goodput_threads_huge",
     {"goodput", "--threads", "1000000"},
     "--threads: must be a whole number from 1 to 1024, got 1000000"},
    // A source to leave out that the file does not hold fitted on everything (exit 0).
    {"calibrate_unknown_source",
     {"calibrate", "training", "--exclude-source", "S99"},
     "--exclude-source: no source 'S99' in the built-in validation/training.csv; allowed: S01, S02"},
    {"rl_prompt_past_kv",
     {"rl", "--prompt-len", "1e6"},
     "a sequence of 1008192 tokens (prompt 1000000 + response 8192) does not fit the KV cache of one generator "
     "replica"},
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
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), hang_guard_s(5.0));
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
  EXPECT_LT(seconds, hang_guard_s(20.0));
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
  // --trace is the older name of --trace-out; the message names the flag by its current name.
  EXPECT_THAT(missing.err, HasSubstr("--trace-out: cannot write"));
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

// --report naming a directory said "cannot write 'DIR': Success" after the whole simulation; now
// every output flag refuses it while the flags are parsed.
TEST(Robustness, OutputNamingADirectoryIsRefusedWithTheReason) {
  const std::string dir = (std::filesystem::path(::testing::TempDir()) / "robust_dir_out").string();
  std::filesystem::create_directories(dir);
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"plan-serve", "--report", dir},
                                             {"cluster", "--synthetic", "5", "--report", dir},
                                             {"cluster", "--synthetic", "5", "--jobs-csv", dir},
                                             {"cluster", "--synthetic", "5", "--job-trace-out", dir}}) {
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[args.size() - 2];
    EXPECT_THAT(r.err, HasSubstr(args[args.size() - 2] + ": '" + dir + "' is a directory; give a file name"));
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Success")));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// A command that fails after writing some of its outputs left them behind, a half-set beside the
// previous run's files. Its outputs now appear only when it completes: a failure leaves no file,
// no temporary, and the previous run's files untouched.
TEST(Robustness, FailedCommandLeavesNoOutputsAndClobbersNothing) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "robust_half";
  fs::create_directories(dir);
  std::ofstream((dir / "metrics.prom").string()) << "old\n";
  std::ofstream((dir / "blocker").string()) << "a file where --metrics-out wants a folder\n";
  const std::vector<std::string> serve = {"serve",
                                          "--num-requests",
                                          "5",
                                          "--trace",
                                          (dir / "trace.json").string(),
                                          "--metrics",
                                          (dir / "metrics.prom").string()};
  auto failing = serve;
  failing.insert(failing.end(), {"--metrics-out", (dir / "blocker").string()});
  const auto r = run_fmsim(failing);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--metrics-out"));
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"blocker", "metrics.prom"}));
  EXPECT_EQ(slurp((dir / "metrics.prom").string()), "old\n");
  // The same command without the failing output writes both.
  const auto ok = run_fmsim(serve);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(dir / "trace.json"));
  EXPECT_THAT(slurp((dir / "metrics.prom").string()), HasSubstr("vllm:"));
}

// --node-prefix went unquoted into the `kubectl label node` script that --help says to run, so
// 'n$(touch PWNED);' ran a command. Only node-name characters are accepted now.
TEST(Robustness, NodePrefixIsANodeNameNotShellText) {
  const std::string dir = (std::filesystem::path(::testing::TempDir()) / "robust_prefix").string();
  std::filesystem::create_directories(dir);
  RunOptions in_dir;
  in_dir.cwd = dir;
  for (const std::string prefix : {"n$(touch PWNED);", "n`touch PWNED`", "n;touch PWNED;x", "Node", "-n", "n x"}) {
    const auto r = run_fmsim({"topology", "k8s", "--cluster", "p5.48xlarge:2", "--node-prefix", prefix}, in_dir);
    EXPECT_EQ(r.exit_code, 2) << prefix;
    EXPECT_THAT(r.err, HasSubstr("--node-prefix: '" + prefix +
                                 "' is not a node-name prefix; allowed: 1 to 50 of "
                                 "a-z, 0-9, '-' and '.', starting with a letter"));
  }
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "PWNED"));
  const auto ok = run_fmsim({"topology", "k8s", "--cluster", "p5.48xlarge:2", "--node-prefix", "gpu-a.p5-"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("gpu-a.p5-1"));
}

// --metrics-out sizes the OpenMetrics text before writing it: above --metrics-max-size it is
// refused with the size and the ways to a smaller file, and nothing is left in the folder (per-GPU
// series of 64 p5 nodes for a day were 650 MiB, written without a word).
TEST(Robustness, MetricsTextAboveItsLimitIsRefusedBeforeWriting) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "robust_metrics_size";
  std::filesystem::remove_all(dir);
  const std::vector<std::string> run = {"run",        "--model", "llama3.1-8b",   "--cluster", "p5.48xlarge:2",
                                        "--duration", "1d",      "--metrics-out", dir.string()};
  auto limited = run;
  limited.insert(limited.end(), {"--metrics-max-size", "1MiB"});
  const auto refused = run_fmsim(limited);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("--metrics-max-size: the OpenMetrics text would take "));
  EXPECT_THAT(refused.err, HasSubstr("above the limit of 1.00 MiB; write a Prometheus TSDB block instead"));
  EXPECT_TRUE(!std::filesystem::exists(dir / "run.om"));
  const auto written = run_fmsim(run);  // the default limit, 10 GiB
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_GT(std::filesystem::file_size(dir / "run.om"), 1024u * 1024u);
  const auto bad = run_fmsim({"run", "--metrics-max-size", "lots"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--metrics-max-size: "));
}

// Jobs that failures requeue faster than they run (a node failure a day on 128 nodes) kept the
// cluster twin going for ever with no --days: without a horizon it stops after ten simulated
// years, the jobs still unfinished reported as such.
TEST(Robustness, ClusterWithoutHorizonStopsAfterTenYears) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_fmsim({"cluster", "--node-failure-rate", "1000", "--json"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), hang_guard_s(20.0));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"unfinished\""));
  const auto text = run_fmsim({"cluster", "--node-failure-rate", "1000"});
  EXPECT_THAT(text.out, HasSubstr("span (first submit to last event)                3652.50 d"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("jobs unfinished at the end +[1-9]"));
}

// `metrics load` waited forever on a promtool that never ended: a child process has a time limit,
// after which it and what it started are killed (exit 124, as timeout(1) reports it).
TEST(Robustness, ChildProcessStopsAtItsTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = cli::run_process({"sh", "-c", "echo started; sleep 30 & sleep 30"}, 1.0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_THAT(r.output, HasSubstr("started"));
  EXPECT_THAT(r.output, HasSubstr("sh stopped: no end after 1 s"));
  EXPECT_LT(seconds, 5.0);
  const auto quick = cli::run_process({"sh", "-c", "echo done"}, 10.0);
  EXPECT_EQ(quick.exit_code, 0);
  EXPECT_EQ(quick.output, "done\n");
}

// Input files that crashed (SIGSEGV), ran out of memory or were taken as valid (issue 43): each is
// refused with exit 2 naming the file, the line and what is allowed.
TEST(Robustness, MalformedInputFilesAreRefused) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "robust_in";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  };
  constexpr int kDeep = 100000;
  const std::string nested = std::string(kDeep, '[') + std::string(kDeep, ']');
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      // nlohmann::json's dump() of the value recursed once per level.
      {{"serve", "--requests", write("deep.jsonl", "{\"arrival_s\": " + nested + "}\n")},
       "deep.jsonl:1: JSON nested deeper than 256 levels (arrays and objects); allowed: at most 256"},
      // Every simulated minute of a 1e12 s job became a sample.
      {{"cluster", "--trace", write("long.csv", "id,submit,nodes,duration\n1,0,1,1e12\n")},
       "long.csv:2: duration: '1e12' is out of range; allowed: 0 to 3.15576e+08 s (10 years)"},
      {{"cluster", "--trace", write("spread.csv", "id,submit,nodes,duration\n1,0,1,60\n2,1e11,1,60\n")},
       "job 2 is submitted 1e+11 s after the first; allowed: at most 3.15576e+08 s (10 years)"},
      {{"serve", "--requests", write("late.csv", "arrival_s,input_tokens,output_tokens\n1e12,10,10\n")},
       "late.csv:2: arrival_s: 1e+12 s is out of range; allowed: 0 to 10 years"},
      // yaml-cpp read a quote left open to the end of the file as the value.
      {{"serve", "--job", write("quote.yaml", "model: \"llama3.1-8b\nisl: 100\n")},
       "quote.yaml:1: malformed YAML: the quote (\") opened here is never closed"},
      // A 1 MB value aliased 2,000 times grew to 6.2 GB.
      {{"serve", "--job",
        write(
            "alias.yaml", "model: llama3.1-8b\nx: &a \"" + std::string(1 << 20, 'x') + "\"\ny: [" +
                              [] {
                                std::string refs;
                                for (int i = 0; i < 2000; ++i) refs += i ? ",*a" : "*a";
                                return refs;
                              }() +
                              "]\n")},
       "aliases expand the document past"},
      {{"serve", "--job",
        write("laughs.yaml",
              [] {
                std::string text = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
                for (int i = 1; i < 10; ++i) {
                  text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
                  for (int k = 0; k < 10; ++k) text += (k ? ",*a" : "*a") + std::to_string(i - 1);
                  text += "]\n";
                }
                return text;
              }())},
       "more than 1000000 values with aliases expanded; allowed: at most 1000000"},
  };
  for (const auto& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_fmsim(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args.back() << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args.back();
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), hang_guard_s(10.0));
  }
}

}  // namespace
}  // namespace fmsim::testing
