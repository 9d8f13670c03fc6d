// `fmsim plan`'s flags resolved into the planner's request (jobspec/plan.hpp): the software
// stack's conventions shape every candidate, as they shape `fmsim train`'s job.
#include <gtest/gtest.h>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "config/training_calibration.hpp"
#include "jobspec/plan.hpp"
#include "planner/search_space.hpp"

namespace fmsim::jobspec {
namespace {

using fmsim::testing::shipped_catalog;

planner::PlanRequest request(const std::string& stack, const std::string& sharding = "") {
  PlanFlags f;
  f.model = "megatron-sc21-gpt-1.7b";
  f.gpus = 32;
  f.seq = 2048;
  f.gbs = 512;
  f.systems = "dgx-a100";
  f.stack = stack;
  f.sharding = sharding;
  return make_plan_request(f, shipped_catalog(), config::load_training_calibration(""));
}

// megatron-legacy (Megatron-LM of 2021-2022, parallelism::StackConventions): no sequence
// parallelism, plain DDP unless --sharding pins others, FP16 gradients reduced in 16 bits. The
// megatron stack keeps the planner's defaults (every sharding, SP with TP, 32-bit reduction).
TEST(MakePlanRequest, LegacyStackConventionsShapeEveryCandidate) {
  const auto legacy = request("megatron-legacy");
  ASSERT_EQ(legacy.space.sharding.size(), 1u);
  EXPECT_EQ(legacy.space.sharding[0], parallelism::Sharding::None);
  EXPECT_FALSE(legacy.framework.sequence_parallel);
  const planner::Shape shape{.tp = 2, .pp = 1, .vp = 1, .cp = 1, .ep = 1, .etp = 1, .dp = 16};
  const planner::Variant fp16{.sharding = parallelism::Sharding::None,
                              .micro_batch = 1,
                              .recompute = parallelism::Recompute::Full,
                              .precision = core::Precision::FP16};
  const auto l = planner::make_layout(shape, fp16, 512, legacy.framework);
  EXPECT_FALSE(l.sequence_parallel);
  EXPECT_TRUE(l.bf16_grad_reduce);
  auto bf16 = fp16;
  bf16.precision = core::Precision::BF16;
  EXPECT_FALSE(planner::make_layout(shape, bf16, 512, legacy.framework).bf16_grad_reduce);

  EXPECT_EQ(request("megatron-legacy", "zero1").space.sharding,
            std::vector<parallelism::Sharding>{parallelism::Sharding::DistributedOptimizer});
  const auto today = request("megatron");
  EXPECT_TRUE(today.space.sharding.empty());  // the planner's default set
  EXPECT_TRUE(today.framework.sequence_parallel);
  EXPECT_TRUE(planner::make_layout(shape, fp16, 512, today.framework).sequence_parallel);
  EXPECT_FALSE(planner::make_layout(shape, fp16, 512, today.framework).bf16_grad_reduce);
}

}  // namespace
}  // namespace fmsim::jobspec
