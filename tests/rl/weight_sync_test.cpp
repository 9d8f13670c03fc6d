// Weight synchronisation trainer -> generators (src/rl/weight_sync.hpp).
#include "rl/weight_sync.hpp"

#include <gtest/gtest.h>

#include "../training/test_fixtures.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::rl {
namespace {

WeightSyncJob job(SyncMethod method, int trainer, int gens, int gen_tp) {
  WeightSyncJob j;
  j.model = testing::test_model();
  j.cluster = testing::test_cluster(2);
  j.trainer_gpus = trainer;
  j.generator_gpus = gens;
  j.generator_tp = gen_tp;
  j.method = method;
  return j;
}

// A dense HF checkpoint names per layer q, k, v, o, two norms and three FFN matrices (9), plus
// the embedding, the final norm and the head: 16 x 9 + 3 = 147 tensors.
TEST(WeightSync, CheckpointTensorsOfADenseModel) { EXPECT_EQ(checkpoint_tensors(testing::test_model()), 147); }

// Per-tensor NCCL pays the per-tensor cost on every named tensor; bucketing removes most of it:
// the difference is tensors x (0.8 ms - 0.03 ms), everything else equal.
TEST(WeightSync, PerTensorCallsCostPerTensor) {
  const RlCalibration cal;
  const auto comm = testing::free_network();
  const auto per = estimate_weight_sync(job(SyncMethod::NcclPerTensor, 4, 4, 1), cal, comm);
  const auto bucket = estimate_weight_sync(job(SyncMethod::NcclBucketed, 4, 4, 1), cal, comm);
  EXPECT_NEAR((per.total - bucket.total).value(),
              147 * (cal.per_tensor_overhead - cal.per_tensor_overhead_bucketed).value(), 1e-9);
}

// Broadcast methods hand every generator GPU the full tensors; P2P only its 1/TP shard, so its
// engine load is a quarter at TP4. The model's bytes are parameters x 2 (BF16).
TEST(WeightSync, P2pMovesShardsBroadcastMovesFullTensors) {
  const RlCalibration cal;
  const auto comm = testing::free_network();
  const auto full = estimate_weight_sync(job(SyncMethod::NcclBucketed, 4, 4, 4), cal, comm);
  const auto shard = estimate_weight_sync(job(SyncMethod::P2pRdma, 4, 4, 4), cal, comm);
  const double bytes = 2.0 * static_cast<double>(workload::count_parameters(testing::test_model()).total);
  EXPECT_DOUBLE_EQ(full.bytes.value(), bytes);
  EXPECT_NEAR(full.load.value(), bytes / cal.engine_load_bandwidth.value(), 1e-12);
  EXPECT_NEAR(shard.load.value(), bytes / 4.0 / cal.engine_load_bandwidth.value(), 1e-12);
  EXPECT_GT(full.transfer.value(), 0.0);
  EXPECT_EQ(full.path, "NVLink");
}

// A natively FP8 checkpoint (trainer and generators both FP8) moves one byte per parameter:
// half the bytes of BF16, and nothing is requantised.
TEST(WeightSync, Fp8CheckpointHalvesTheBytes) {
  const RlCalibration cal;
  auto j = job(SyncMethod::NcclBucketed, 4, 4, 1);
  const auto bf16 = estimate_weight_sync(j, cal, testing::free_network());
  j.generator_precision = core::Precision::FP8;
  j.trainer_precision = core::Precision::FP8;
  const auto fp8 = estimate_weight_sync(j, cal, testing::free_network());
  EXPECT_DOUBLE_EQ(fp8.bytes.value(), bf16.bytes.value() / 2.0);
  EXPECT_DOUBLE_EQ(fp8.requantize.value(), 0.0);
}

// A BF16 trainer feeding FP8 generators sends BF16 (2 bytes per parameter) and each generator GPU
// quantises what it keeps in load_weights: tensors x requant_per_tensor + an HBM pass reading 2
// and writing 1 byte per parameter of its 1/TP shard. The requantisation is part of the load.
TEST(WeightSync, BfSixteenToFp8IsQuantisedOnReceive) {
  const RlCalibration cal;
  auto j = job(SyncMethod::NcclBucketed, 4, 4, 2);
  const auto bf16 = estimate_weight_sync(j, cal, testing::free_network());
  j.generator_precision = core::Precision::FP8;
  const auto fp8 = estimate_weight_sync(j, cal, testing::free_network());
  const double params = static_cast<double>(workload::count_parameters(testing::test_model()).total);
  EXPECT_DOUBLE_EQ(fp8.bytes.value(), bf16.bytes.value());
  EXPECT_NEAR(fp8.requantize.value(), 147 * cal.requant_per_tensor.value() + params / 2.0 * 3.0 / 3e12, 1e-12);
  EXPECT_NEAR(fp8.load.value(), bf16.load.value() + fp8.requantize.value(), 1e-12);
  EXPECT_NEAR(fp8.total.value(), (fp8.fixed + fp8.gather + std::max(fp8.transfer, fp8.load) + fp8.per_tensor).value(),
              1e-12);
}

// Colocated: a CUDA IPC device-to-device copy reads and writes HBM once per byte:
// 2 x bytes / (HBM bandwidth x efficiency), pipelined with the engine load.
TEST(WeightSync, ColocatedIsAnHbmCopy) {
  const RlCalibration cal;
  auto j = job(SyncMethod::NcclBucketed, 8, 8, 1);
  j.colocated = true;
  const auto r = estimate_weight_sync(j, cal, testing::free_network());
  EXPECT_EQ(r.path, "CUDA IPC");
  EXPECT_NEAR(r.transfer.value(), 2.0 * r.bytes.value() / (3e12 * cal.sync_bandwidth_efficiency), 1e-9);
  EXPECT_NEAR(r.total.value(), (r.fixed + r.gather + std::max(r.transfer, r.load) + r.per_tensor).value(), 1e-12);
}

}  // namespace
}  // namespace fmsim::rl
