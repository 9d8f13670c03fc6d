// The training job resolved from flag values and a --job file (shared by train, run, compare).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "jobspec/training.hpp"

namespace fmsim::jobspec {
namespace {

using fmsim::testing::shipped_catalog;

const FlagGiven kNoFlags = [](std::string_view) { return false; };

// A --job file fills every setting whose flag was not given; a given flag keeps its value
// (examples/llama70b_job.yaml: 70B on p5.48xlarge:64, tp 8, pp 4, vp 5, gbs 512, fp8).
TEST(ResolveTrainingJob, JobFileFillsWhatTheFlagsDidNotGive) {
  TrainingJobFlags f;
  f.job_file = std::string(FMSIM_SOURCE_DIR) + "/examples/llama70b_job.yaml";
  f.tp = 4;  // as if --tp 4 were on the command line
  const FlagGiven tp_given = [](std::string_view flag) { return flag == "--tp"; };
  const TrainingSetup s = resolve_training_job(f, shipped_catalog(), tp_given);
  EXPECT_EQ(s.job.model.name, "llama3.1-70b");
  EXPECT_EQ(s.job.cluster.gpus(), 512);
  EXPECT_EQ(s.job.layout.tp, 4);
  EXPECT_EQ(s.job.layout.pp, 4);
  EXPECT_EQ(s.job.layout.vp, 5);
  // dp = GPUs / (tp x pp x cp) = 512 / 16 = 32.
  EXPECT_EQ(s.job.layout.dp, 32);
  EXPECT_EQ(s.job.layout.global_batch, 512);
  EXPECT_EQ(s.job.seq_len, 8192);
  EXPECT_EQ(s.job.layout.precision, core::Precision::FP8);
  EXPECT_TRUE(s.calibration.stacks.count(s.job.stack));
}

// Without --gbs the global batch is one micro-batch per data-parallel rank: p5.48xlarge:1 is
// 8 GPUs, tp 1 gives dp 8, so gbs = mbs x dp = 8.
TEST(ResolveTrainingJob, DefaultGlobalBatchIsMicroBatchTimesDp) {
  TrainingJobFlags f;
  const TrainingSetup s = resolve_training_job(f, shipped_catalog(), kNoFlags);
  EXPECT_EQ(s.job.layout.dp, 8);
  EXPECT_EQ(s.job.layout.global_batch, 8);
}

// --vp with --pp 1: Megatron interleaves nothing, so the job runs vp 1, and the resolution says so
// in its warnings (the library prints nothing; the command prints them).
TEST(ResolveTrainingJob, VirtualStagesWithoutPipelineAreAWarning) {
  TrainingJobFlags f;
  f.vp = 3;
  const TrainingSetup s = resolve_training_job(f, shipped_catalog(), kNoFlags);
  EXPECT_EQ(s.job.layout.vp, 1);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0], "--vp 3 with --pp 1 has no pipeline to interleave; running vp 1");
  EXPECT_TRUE(resolve_training_job(TrainingJobFlags{}, shipped_catalog(), kNoFlags).warnings.empty());
}

// An unknown word is refused naming its flag: --sharding zero7.
TEST(ResolveTrainingJob, UnknownWordNamesItsFlag) {
  TrainingJobFlags f;
  f.sharding = "zero7";
  try {
    resolve_training_job(f, shipped_catalog(), kNoFlags);
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--sharding"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fmsim::jobspec
