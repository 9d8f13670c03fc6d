// Optimizer offload (Megatron-Core --optimizer-cpu-offload --optimizer-offload-fraction, DeepSpeed
// ZeRO-Offload): the time the host link adds to a step and the memory it moves to the host.
#include <gtest/gtest.h>

#include "test_fixtures.hpp"
#include "training/step_model.hpp"

namespace fmsim::training {
namespace {

using testing::free_network;
using testing::test_calibration;
using testing::test_job;

// With f of the optimizer offloaded, the rank's f x P parameters cross the host link twice per step
// after the last backward (the fp32 gradient shard to the host, the updated fp32 parameters back:
// 4 + 4 bytes each), exposed; the GPU steps the remaining (1 - f); f of the optimizer states (12 B
// per parameter) and of the step's fp32 gradient copy (4 B) sit in host memory.
TEST(OptimizerOffload, TimeIsTheHostLinkTrafficOfTheOffloadedShare) {
  const auto cal = test_calibration();
  parallelism::Layout l;
  l.micro_batch = 1;
  l.global_batch = 8;
  l.recompute = parallelism::Recompute::None;
  auto job = test_job(1, l);
  job.cluster.gpu.host_link_bandwidth = core::BytesPerSecond(1e9);
  const auto base = estimate_step(job, cal, free_network());
  ASSERT_TRUE(base.feasible) << base.reason;
  job.layout.optimizer_offload_fraction = 0.5;
  const auto off = estimate_step(job, cal, free_network());
  // The distributed optimizer shards the states over dp: each rank steps P / dp parameters.
  const double p = off.memory.params_on_gpu / job.layout.dp;
  ASSERT_FALSE(base.memory.optimizer_step_peak);
  EXPECT_NEAR(off.breakdown.offload.value() - base.breakdown.offload.value(), 0.5 * p * 8.0 / 1e9,
              1e-6 * p * 8.0 / 1e9);
  EXPECT_NEAR(off.breakdown.optimizer.value(), 0.5 * base.breakdown.optimizer.value(), 1e-12);
  EXPECT_NEAR(off.memory.host.value(), 0.5 * (base.memory.optimizer.value() + base.memory.step_grad.value()),
              1e-6 * base.memory.optimizer.value());
  EXPECT_NEAR(off.memory.optimizer.value(), 0.5 * base.memory.optimizer.value(), 1e-6 * base.memory.optimizer.value());
}

}  // namespace
}  // namespace fmsim::training
