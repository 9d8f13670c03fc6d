// Golden tests of `fmsim run`: sections and JSON keys, agreement with `goodput` and `checkpoint`
// for the same job, the token and GPU-hour arithmetic, determinism and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;
using fmsim::testing::with;
using ::testing::HasSubstr;

// Llama 3.1 70B on 16 p5.48xlarge (128 H100), tp 8 x pp 2, checkpoints on 120 TiB of FSx.
const std::vector<std::string> kRunJob{
    "--model",   "llama3.1-70b",         "--cluster",  "p5.48xlarge:16", "--tp", "8", "--pp", "2",
    "--storage", "fsx-persistent2-1000", "--capacity", "120TiB"};

nlohmann::json run_json(const std::vector<std::string>& args) {
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(RunCli, DefaultRunOnP5PrintsEverySection) {
  const auto r = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--replications", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* section : {"fmsim run: llama3.1-8b on 2 x p5.48xlarge",
                              "for 30.0 d",
                              "layout      tp1",
                              "Step: ",
                              "tokens/s/GPU",
                              "MFU",
                              ": fits",
                              "Storage: s3 (s3)",
                              "bottleneck:",
                              "Failures: llama3-405b",
                              "job MTBF",
                              "Checkpoint (sync): stall",
                              "Interval: Young",
                              "Daly",
                              "Data loading:",
                              "monte carlo (200 runs)",
                              "ETTR",
                              "tokens trained",
                              "effective tokens/s",
                              "lost GPU-hours",
                              "lost work",
                              "waiting for nodes",
                              "Cost: 2 x p5.48xlarge at $55.04/h"}) {
    EXPECT_THAT(r.out, HasSubstr(section));
  }
}

TEST(RunCli, JsonHasEveryKeyAndRepeats) {
  const std::vector<std::string> args{"run",           "--model",        "llama3.1-8b", "--cluster",
                                      "p5.48xlarge:2", "--replications", "200",         "--json"};
  const auto a = run_fmsim(args);
  const auto b = run_fmsim(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // same seed, same bytes
  const auto j = nlohmann::json::parse(a.out);
  for (const char* key :
       {"model", "system", "gpus", "nodes", "layout", "step", "checkpoint", "failure_model", "mtbf_s", "strategy",
        "recovery", "duration_s", "gpu_hours", "analytic", "monte_carlo", "cost", "data_loading"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"step_time_s", "tokens_per_s_per_gpu", "mfu", "fits_memory"}) {
    EXPECT_TRUE(j["step"].contains(key)) << key;
  }
  for (const char* key : {"tier", "blocking_s", "load_s", "fits", "interval_s", "young_interval_s", "daly_interval_s",
                          "optimal_interval_s"}) {
    EXPECT_TRUE(j["checkpoint"].contains(key)) << key;
  }
  for (const char* key : {"size_bytes", "save_s", "save_bottleneck", "load_s"}) {
    EXPECT_TRUE(j["checkpoint"]["io"].contains(key)) << key;
  }
  for (const char* part : {"analytic", "monte_carlo"}) {
    for (const char* key : {"ettr", "interruptions", "tokens", "tokens_per_s", "lost_gpu_hours", "lost_usd", "split"}) {
      EXPECT_TRUE(j[part].contains(key)) << part << "." << key;
    }
  }
  EXPECT_EQ(j["checkpoint"]["tier"], "s3");
  EXPECT_EQ(j["checkpoint"]["tier_kind"], "s3");
  EXPECT_EQ(j["monte_carlo"]["replications"].get<int>(), 200);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 30.0 * 86400.0);
}

TEST(RunCli, EttrEqualsGoodputForTheSameJob) {
  // run derives the checkpoint layout (128 ranks on 16 nodes, tp 8, dp = 128 / (8 x 2) = 8, zero1 ->
  // optimizer sharding) from the training layout; goodput given the same layout by flags builds the
  // same scenario, so ETTR_run = ETTR_goodput exactly, analytic and Monte Carlo (same seed).
  const auto run = run_json(with({"run"}, with(kRunJob, {"--strategy", "async", "--replications", "300", "--json"})));
  const std::string step = fmt::format("{:.9f}s", run["step"]["step_time_s"].get<double>());
  const auto goodput =
      run_json(with({"goodput"}, with(kRunJob, {"--sharding", "optimizer", "--strategy", "async", "--step-time", step,
                                                "--replications", "300", "--json"})));
  EXPECT_DOUBLE_EQ(run["mtbf_s"].get<double>(), goodput["mtbf_s"].get<double>());
  EXPECT_DOUBLE_EQ(run["checkpoint"]["blocking_s"].get<double>(), goodput["checkpoint"]["blocking_s"].get<double>());
  EXPECT_DOUBLE_EQ(run["checkpoint"]["interval_s"].get<double>(), goodput["checkpoint"]["interval_s"].get<double>());
  EXPECT_DOUBLE_EQ(run["analytic"]["ettr"].get<double>(), goodput["analytic"]["ettr"].get<double>());
  EXPECT_DOUBLE_EQ(run["monte_carlo"]["ettr"].get<double>(), goodput["monte_carlo"]["ettr"].get<double>());
}

TEST(RunCli, CheckpointEqualsCheckpointCommandForTheSameLayout) {
  // A sync save of the same 70B checkpoint (params x 14 B) laid out as tp 8 x pp 2 on 16 nodes
  // takes what `fmsim checkpoint` reports: save_run = save_checkpoint, load_run = load_checkpoint.
  const auto run = run_json(with({"run"}, with(kRunJob, {"--replications", "0", "--json"})));
  const auto ckpt = run_json(with({"checkpoint"}, with(kRunJob, {"--json"})));
  EXPECT_DOUBLE_EQ(run["checkpoint"]["io"]["size_bytes"].get<double>(), ckpt["size_bytes"].get<double>());
  EXPECT_DOUBLE_EQ(run["checkpoint"]["io"]["save_s"].get<double>(), ckpt["save"]["total_s"].get<double>());
  EXPECT_DOUBLE_EQ(run["checkpoint"]["io"]["load_s"].get<double>(), ckpt["load"]["total_s"].get<double>());
  EXPECT_DOUBLE_EQ(run["checkpoint"]["blocking_s"].get<double>(), ckpt["blocking_s"].get<double>());
  EXPECT_EQ(run["checkpoint"]["fits"].get<bool>(), ckpt["fits"].get<bool>());
  EXPECT_FALSE(run.contains("monte_carlo"));  // --replications 0: analytic only
}

TEST(RunCli, TokensAndLostGpuHoursFollowFromEttr) {
  // tokens = duration x tokens/s/GPU x GPUs x ETTR; effective tokens/s = tokens / duration;
  // lost GPU-hours = GPU-hours x (1 - ETTR) = checkpoint + restart + lost work + waiting;
  // lost USD = lost GPU-hours x price per unit-hour / GPUs per unit ($55.04 / 8 for p5.48xlarge);
  // run USD = units x price x duration in hours.
  const auto j = run_json(with({"run"}, with(kRunJob, {"--duration", "72h", "--replications", "200", "--json"})));
  const double duration = 72.0 * 3600.0;
  const double gpus = 128.0;
  const double per_gpu = j["step"]["tokens_per_s_per_gpu"].get<double>();
  for (const char* part : {"analytic", "monte_carlo"}) {
    const auto& p = j[part];
    const double ettr = p["ettr"].get<double>();
    EXPECT_NEAR(p["tokens"].get<double>() / (duration * per_gpu * gpus * ettr), 1.0, 1e-9) << part;
    EXPECT_NEAR(p["tokens_per_s"].get<double>() * duration / p["tokens"].get<double>(), 1.0, 1e-9) << part;
    const auto& split = p["split"];
    const double lost = split["checkpoint_gpu_hours"].get<double>() + split["restart_gpu_hours"].get<double>() +
                        split["lost_work_gpu_hours"].get<double>() + split["waiting_gpu_hours"].get<double>();
    EXPECT_NEAR(p["lost_gpu_hours"].get<double>(), lost, 1e-6 * lost) << part;
    EXPECT_NEAR(p["lost_gpu_hours"].get<double>(), gpus * 72.0 * (1.0 - ettr), 1e-6 * lost) << part;
    EXPECT_NEAR(p["lost_usd"].get<double>(), p["lost_gpu_hours"].get<double>() * 55.04 / 8.0, 1e-6) << part;
  }
  EXPECT_NEAR(j["cost"]["run_usd"].get<double>(), 16 * 55.04 * 72.0, 1e-6);
}

TEST(RunCli, JobFileAndFsxExport) {
  // The README example: the job file's layout, async checkpoints on FSx exported to S3.
  const auto r =
      run_fmsim({"run", "--job", source_path("examples/llama70b_job.yaml"), "--storage", "fsx-persistent2-1000",
                 "--capacity", "120TiB", "--strategy", "async", "--s3", "s3", "--duration", "30d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("llama3.1-70b on 64 x p5.48xlarge"));
  EXPECT_THAT(r.out, HasSubstr("tp8 pp4 vp5"));
  EXPECT_THAT(r.out, HasSubstr("Checkpoint (async)"));
  EXPECT_THAT(r.out, HasSubstr("Export to s3:"));
  EXPECT_THAT(r.out, HasSubstr("keeps up"));
}

TEST(RunCli, BadInputExitsTwoNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;  ///< names the flag or field and what is allowed
  };
  const std::vector<Case> cases{
      {{"--duration", "thirty days"},
       "--duration: 'thirty days' is not a duration; expected a number and a unit (ns, us"},
      {{"--duration", "0s"}, "--duration: must be greater than zero"},
      {{"--model", "lama3.1-8b"}, "--model: unknown model 'lama3.1-8b'; did you mean"},
      {{"--tp", "3"}, "layout: tp*pp*cp = 3 does not divide 8 GPUs"},
      {{"--s3", "s3"}, "--s3: a data repository association links an FSx for Lustre tier to S3"},
      {{"--storage", "fsx-persistent9"}, "--storage: unknown storage 'fsx-persistent9'"},
      {{"--strategy", "lazy"},
       "--strategy: unknown checkpoint strategy 'lazy'; allowed: sync, async, in-memory (memory), peer"},
  };
  for (const auto& c : cases) {
    const auto r = run_fmsim(with({"run"}, c.args));
    EXPECT_EQ(r.exit_code, 2) << c.args.front();
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
}

}  // namespace
