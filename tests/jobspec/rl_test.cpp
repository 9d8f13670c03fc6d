// The RL job resolved from `fmsim rl`'s flag values.
#include <gtest/gtest.h>

#include <string>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "jobspec/rl.hpp"

namespace fmsim::jobspec {
namespace {

using fmsim::testing::shipped_catalog;

// The defaults describe GRPO, colocated and on-policy, on p5en.48xlarge:2 (16 GPUs); without
// --response-lengths the lengths are lognormal with a mean of a quarter of --max-response (8k:
// 8192 / 4 = 2048 tokens) capped at 8192.
TEST(MakeRlJob, DefaultsAreGrpoColocatedOnPolicy) {
  const rl::RlJob j = make_rl_job(RlFlags{}, shipped_catalog());
  EXPECT_EQ(j.algorithm, rl::Algorithm::Grpo);
  EXPECT_EQ(j.placement, rl::Placement::Colocated);
  EXPECT_EQ(j.synchrony, rl::Synchrony::OnPolicy);
  EXPECT_EQ(j.cluster.gpus(), 16);
  EXPECT_EQ(j.lengths.law, rl::LengthLaw::Lognormal);
  EXPECT_EQ(j.lengths.cap, 8192);
  EXPECT_DOUBLE_EQ(j.lengths.mean, 2048.0);
}

// Words go through the shared vocabularies: --sharding distopt is ZeRO-1 as for `fmsim train`;
// an unknown --sync word is refused naming the flag.
TEST(MakeRlJob, WordsThroughTheVocabularies) {
  RlFlags f;
  f.sharding = "distopt";
  EXPECT_EQ(make_rl_job(f, shipped_catalog()).train_layout.sharding, parallelism::Sharding::DistributedOptimizer);
  f.synchrony = "offpolicy-ish";
  try {
    make_rl_job(f, shipped_catalog());
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--sync"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fmsim::jobspec
