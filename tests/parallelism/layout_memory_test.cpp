// Layout validity rules and the memory model's formulas.
#include <gtest/gtest.h>

#include "parallelism/layout.hpp"
#include "parallelism/memory.hpp"

namespace fmsim::parallelism {
namespace {

workload::ModelSpec model() {
  workload::ModelSpec m;
  m.name = "m";
  m.num_layers = 32;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab = 128256;
  return m;
}

Layout make(int tp, int pp, int dp_gpus, Sharding s = Sharding::DistributedOptimizer) {
  Layout l;
  l.tp = tp;
  l.pp = pp;
  l.sharding = s;
  l.global_batch = 1024;
  return with_dp(l, dp_gpus);
}

// dp = gpus / (tp * pp * cp); micro-batches = gbs / (mbs * dp).
TEST(Layout, DerivesDataParallelism) {
  const Layout l = make(8, 4, 512);
  EXPECT_EQ(l.dp, 16);
  EXPECT_EQ(l.micro_batches(), 64);
}

TEST(Layout, RejectsWithReasons) {
  EXPECT_NE(why_invalid(model(), make(3, 1, 48), 48, 4096)->find("attention heads"), std::string::npos);
  EXPECT_NE(why_invalid(model(), make(8, 1, 60), 60, 4096)->find("does not divide 60 GPUs"), std::string::npos);
  Layout ep = make(1, 1, 8);
  ep.ep = 2;
  EXPECT_NE(why_invalid(model(), ep, 8, 4096)->find("mixture-of-experts"), std::string::npos);
  Layout cp = make(1, 1, 8);
  cp.cp = 3;
  EXPECT_TRUE(why_invalid(model(), with_dp(cp, 9), 9, 4096).has_value());
  EXPECT_FALSE(why_invalid(model(), make(8, 4, 512), 512, 4096).has_value());
}

// Mixed-precision Adam: ZeRO-1 keeps 2 B weights + 4 B gradients per parameter and shards the
// 12 B optimizer states over dp; ZeRO-3 also shards weights and gradients.
TEST(Memory, ShardingDividesStatesByDp) {
  const auto one = estimate_memory(model(), make(1, 1, 1), 4096);
  const auto dist = estimate_memory(model(), make(1, 1, 8), 4096);
  const auto fsdp = estimate_memory(model(), make(1, 1, 8, Sharding::Zero3), 4096);
  const double p = one.params_on_gpu;
  EXPECT_NEAR(one.weights.value(), 2.0 * p, 1.0);
  EXPECT_NEAR(one.optimizer.value(), 12.0 * p, 1.0);
  EXPECT_NEAR(dist.optimizer.value(), 12.0 * p / 8.0, 1.0);
  EXPECT_NEAR(dist.gradients.value(), 4.0 * p, 1.0);
  EXPECT_NEAR(fsdp.weights.value(), 2.0 * p / 8.0, 1.0);
  EXPECT_NEAR(fsdp.gradients.value(), 4.0 * p / 8.0, 1.0);
}

// Full recompute keeps only each layer's input (2 bytes x tokens x hidden / tp with SP) and is
// far smaller than keeping everything.
TEST(Memory, RecomputeShrinksActivations) {
  Layout none = make(1, 1, 8);
  none.recompute = Recompute::None;
  Layout full = none;
  full.recompute = Recompute::Full;
  const auto a = estimate_memory(model(), none, 4096);
  const auto b = estimate_memory(model(), full, 4096);
  EXPECT_LT(b.activations.value(), a.activations.value() / 5.0);
  EXPECT_GE(b.activations.value(), 32 * 2.0 * 4096 * 4096);
}

// Pipeline stage 0 of 1F1B holds pp micro-batches of its layers: the same per-GPU activation
// total as pp = 1 with all layers (pp x layers/pp).
TEST(Memory, PipelineInFlightMicroBatches) {
  Layout flat = make(1, 1, 8);
  flat.recompute = Recompute::Selective;
  Layout piped = make(1, 4, 8);
  piped.recompute = Recompute::Selective;
  const auto a = estimate_memory(model(), flat, 4096);
  const auto b = estimate_memory(model(), piped, 4096);
  EXPECT_NEAR(b.activations.value(), a.activations.value(), 0.01 * a.activations.value());
}

}  // namespace
}  // namespace fmsim::parallelism
