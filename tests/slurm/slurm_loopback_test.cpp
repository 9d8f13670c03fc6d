// The loopback harness itself: a real slurmctld with emulated slurmd nodes runs a job.
#include <gtest/gtest.h>

#include "support/slurm_loopback.hpp"

namespace fmsim::testing {
namespace {

TEST(SlurmHostlist, ExpandsSlurmCompressedForm) {
  // Slurm prints node lists compressed: prefix[ranges], zero padding kept, elements comma separated.
  EXPECT_EQ(expand_slurm_hostlist("n[1-3,5],m2"), (std::vector<std::string>{"n1", "n2", "n3", "n5", "m2"}));
  EXPECT_EQ(expand_slurm_hostlist("gpu[08-10]"), (std::vector<std::string>{"gpu08", "gpu09", "gpu10"}));
  EXPECT_EQ(expand_slurm_hostlist("n4"), (std::vector<std::string>{"n4"}));
}

TEST(SlurmLoopback, TwoNodeSleepJobRunsToCompletionOnLoopback) {
  // A 2-node `sleep 1` job submitted to the real slurmctld starts on two of the emulated nodes,
  // lasts about a second and is recorded COMPLETED in jobcomp.txt.
  FMSIM_SKIP_WITHOUT_SLURM();
  SlurmLoopbackOptions options;
  options.nodes = 3;
  SlurmLoopback slurm(options);
  const std::string id = slurm.sbatch({"-N", "2", "-t", "1", "-J", "probe", "--wrap", "sleep 1"});
  ASSERT_TRUE(slurm.wait_until_all_done(std::chrono::seconds(30))) << slurm.slurmctld_log_tail();
  const auto jobs = slurm.completed_jobs();
  ASSERT_EQ(jobs.size(), 1u) << slurm.slurmctld_log_tail();
  EXPECT_EQ(jobs[0].job_id, id);
  EXPECT_EQ(jobs[0].state, "COMPLETED");
  EXPECT_EQ(jobs[0].name, "probe");
  EXPECT_EQ(jobs[0].node_count, 2);
  EXPECT_EQ(expand_slurm_hostlist(jobs[0].node_list).size(), 2u);
  EXPECT_GE(jobs[0].end_time - jobs[0].start_time, 1);
  EXPECT_LE(jobs[0].end_time - jobs[0].start_time, 5);
}

}  // namespace
}  // namespace fmsim::testing
