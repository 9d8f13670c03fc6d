// `fmsim sweep --slurm` against a real slurmctld and three `slurmd -N` nodes on loopback: the
// chunks run as one `sbatch --array` job, the results equal a local run's byte for byte, and a
// second submission after a lost chunk runs only that chunk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../golden/run_cli.hpp"
#include "support/slurm_loopback.hpp"

namespace fmsim::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(SweepSlurm, JobArrayOnLoopbackGathersTheSameResultsAndResumes) {
  FMSIM_SKIP_WITHOUT_SLURM();
  SlurmLoopbackOptions options;
  options.nodes = 3;
  options.exclusive_partition = false;  // array tasks share nodes, as on a CPU partition
  SlurmLoopback slurm(options);
  const fs::path dir = fs::path(::testing::TempDir()) / "sweep_slurm";
  fs::create_directories(dir);
  // 2 clusters x 4 tensor-parallel sizes x 3 sequence lengths = 24 points in 6 chunks of 4.
  std::ofstream(dir / "grid.yaml") << "kind: Sweep\ncommand: train\n"
                                      "fixed: {model: llama3.1-8b, gbs: 128}\n"
                                      "grid:\n  cluster: [\"p5.48xlarge:2\", \"p5en.48xlarge:2\"]\n"
                                      "  tp: [1, 2, 4, 8]\n  seq: [2048, 4096, 8192]\n"
                                      "columns: [step_time_s, mfu, fits_memory]\nchunk: 4\n";
  RunOptions env;
  for (const auto& [k, v] : slurm.env()) env.env.emplace_back(k, v);
  const auto out = dir / "slurm";
  const std::vector<std::string> args{
      "sweep", (dir / "grid.yaml").string(), "--out", out.string(), "--slurm", "--poll", "0.2", "--json"};
  const auto r = run_fmsim(args, env);
  ASSERT_EQ(r.exit_code, 0) << r.err << slurm.slurmctld_log_tail();
  EXPECT_THAT(r.err, HasSubstr("(array 0-5, 6 tasks)"));
  EXPECT_THAT(r.err, HasSubstr("sweep: 6/6 chunks, 24/24 points"));
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["runner"], "slurm");
  EXPECT_EQ(summary["errors"], 0);
  ASSERT_TRUE(slurm.wait_until_all_done(std::chrono::seconds(30)));
  // Every array task ran on one of the loopback nodes and completed.
  const auto jobs = slurm.completed_jobs();
  ASSERT_EQ(jobs.size(), 6u) << slurm.slurmctld_log_tail();
  for (const auto& job : jobs) {
    EXPECT_EQ(job.state, "COMPLETED") << job.job_id;
    EXPECT_EQ(job.name, "fmsim-sweep");
  }

  // The same sweep on this machine gives the same bytes.
  const auto local =
      run_fmsim({"sweep", (dir / "grid.yaml").string(), "--out", (dir / "local").string(), "--jobs", "2"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(slurp(out / "results.csv"), slurp(dir / "local" / "results.csv"));
  EXPECT_EQ(slurp(out / "results.jsonl"), slurp(dir / "local" / "results.jsonl"));
  const std::string gathered = slurp(out / "results.csv");
  EXPECT_EQ(std::count(gathered.begin(), gathered.end(), '\n'), 25);  // header + 24 points

  // A lost chunk: the next submission is an array of that one task.
  const std::string csv = slurp(out / "results.csv");
  fs::remove(out / "chunks" / "000003.jsonl");
  const auto again = run_fmsim(args, env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("(array 3, 1 tasks)"));
  EXPECT_EQ(nlohmann::json::parse(again.out)["chunks_reused"], 5);
  EXPECT_EQ(slurp(out / "results.csv"), csv);
}

}  // namespace
}  // namespace fmsim::testing
