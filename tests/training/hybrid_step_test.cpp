// The training-step model on hybrid (Mamba-2 / attention) models.
#include <gtest/gtest.h>

#include "test_fixtures.hpp"
#include "training/step_model.hpp"
#include "workload/model_flops.hpp"

namespace fmsim::training {
namespace {

using testing::fixed_network;
using testing::free_network;
using testing::test_calibration;
using testing::test_job;

parallelism::Layout hybrid_layout(int tp, std::int64_t gbs) {
  parallelism::Layout l;
  l.tp = tp;
  l.micro_batch = 1;
  l.global_batch = gbs;
  l.recompute = parallelism::Recompute::None;
  l.sharding = parallelism::Sharding::None;
  l.overlap_dp_comm = false;
  l.sequence_parallel = true;
  return l;
}

// The test model's 16 layers as Nemotron-H blocks: Mamba-2 mixers and MLPs alternating.
workload::ModelSpec mamba_model() {
  workload::ModelSpec m = testing::test_model();
  for (int i = 0; i < m.num_layers; ++i) {
    m.layers.push_back(i % 2 == 0 ? workload::LayerSpec{workload::MixerKind::Mamba, workload::FfnKind::None}
                                  : workload::LayerSpec{workload::MixerKind::None, workload::FfnKind::Dense});
  }
  m.ssm = testing::test_mamba2();
  return m;
}

// A Mamba layer's work is linear in the sequence: at a fixed number of tokens per step, going from
// 4K to 32K tokens per sequence leaves the step time of an all-Mamba model within 1%, while the
// attention model's grows with the s^2 score matmuls.
TEST(HybridStep, MambaCostIsLinearInSequenceLength) {
  const auto cal = test_calibration();
  auto job = [&](bool hybrid, std::int64_t seq) {
    auto j = test_job(1, hybrid_layout(1, 8 * 32768 / seq), seq);
    if (hybrid) j.model = mamba_model();
    return estimate_step(j, cal, free_network());
  };
  const double mamba_short = job(true, 4096).breakdown.compute.value();
  const double mamba_long = job(true, 32768).breakdown.compute.value();
  EXPECT_NEAR(mamba_long / mamba_short, 1.0, 0.01);
  const double attn_short = job(false, 4096).breakdown.compute.value();
  const double attn_long = job(false, 32768).breakdown.compute.value();
  EXPECT_GT(attn_long / attn_short, 1.3);
}

// Tensor parallelism splits each block (mixer or FFN) once: a Nemotron-H layer holds one block, so
// with a fixed 1 ms per collective its 16 layers expose 16 x (AG + RS) x 2 directions, half the
// 16 x 2 blocks of the attention + MLP model.
TEST(HybridStep, OneTensorParallelPairPerBlock) {
  const auto cal = test_calibration();
  auto j = test_job(1, hybrid_layout(2, 4));
  const double dense = estimate_step(j, cal, fixed_network(1e-3)).breakdown.tp_comm.value();
  j.model = mamba_model();
  const double hybrid = estimate_step(j, cal, fixed_network(1e-3)).breakdown.tp_comm.value();
  EXPECT_NEAR(dense, 16 * 8 * 1e-3, 1e-9);
  EXPECT_NEAR(hybrid, 16 * 4 * 1e-3, 1e-9);
}

// The SSD scan costs the slower of its matmul FLOPs at ssm_scan_efficiency and its bytes at the
// memory roofline: a lower efficiency can only slow the step.
TEST(HybridStep, ScanEfficiencyBoundsTheScan) {
  auto cal = test_calibration();
  auto j = test_job(1, hybrid_layout(1, 8), 8192);
  j.model = mamba_model();
  cal.gpus[hardware::Architecture::Hopper].ssm_scan_efficiency = 0.5;
  const double fast = estimate_step(j, cal, free_network()).breakdown.compute.value();
  cal.gpus[hardware::Architecture::Hopper].ssm_scan_efficiency = 0.01;
  const double slow = estimate_step(j, cal, free_network()).breakdown.compute.value();
  EXPECT_GT(slow, fast);
  const auto r = estimate_step(j, cal, free_network());
  EXPECT_TRUE(r.feasible);
}

// DeepSeek-V3's multi-token prediction (§2.2): each module is one more transformer block, a 2h -> h
// projection and a second output head and loss, all after the main head on the last stage. On
// the 16-layer test model with one module, training it costs more than one extra layer (1/16 of
// the layers' time) and MFU counts its FLOPs as Megatron-Bridge does (include_mtp).
TEST(HybridStep, MtpModulesAddABlockAndAHeadOnTheLastStage) {
  const auto cal = test_calibration();
  auto j = test_job(1, hybrid_layout(1, 8));
  j.model.mtp_layers = 1;
  const auto off = estimate_step(j, cal, free_network());
  j.train_mtp = true;
  const auto on = estimate_step(j, cal, free_network());
  EXPECT_GT(on.breakdown.compute.value() - off.breakdown.compute.value(), off.breakdown.compute.value() / 17.0);
  workload::FlopOptions o;
  o.include_mtp = true;
  EXPECT_DOUBLE_EQ(on.model_flops_per_step, workload::model_flops_per_step(j.model, 8, j.seq_len, o).value());
  EXPECT_GT(on.model_flops_per_step, off.model_flops_per_step);
}

}  // namespace
}  // namespace fmsim::training
