// A training job's step time on the nodes the scheduler gave it (orchestration/placed_training):
// the collectives of each group cost what the links its ranks actually span give.
#include <gtest/gtest.h>

#include "../training/test_fixtures.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/placed_training.hpp"
#include "parallelism/layout.hpp"

namespace fmsim::orchestration {
namespace {

/// Two UltraServers of 2 nodes x 8 GPUs, each one NVLink domain of 16 GPUs (NVLink 900 GB/s per
/// direction per GPU); between them EFA, one 400 Gb/s (50 GB/s) NIC per GPU.
hardware::ClusterSpec two_ultraservers() {
  auto c = fmsim::testing::test_cluster(2);
  c.gpu.sm_version = 90;
  c.gpu.nvlink_links = 18;
  c.gpu.nvlink_bandwidth = core::BytesPerSecond(1.8e12);
  c.system.kind = hardware::SystemKind::UltraServer;
  c.system.nodes = 2;
  c.system.nvlink_domain_gpus = 16;
  c.system.nvswitch = true;
  c.system.nics_per_node = 8;
  c.system.nic_bandwidth = core::BytesPerSecond(50e9);
  c.fabric.name = "efa-test";
  c.fabric.kind = hardware::FabricKind::Efa;
  c.fabric.latency = core::Seconds(20e-6);
  c.fabric.efficiency = 0.9;
  return c;
}

/// The test model on 16 GPUs (2 nodes) with tensor parallelism `tp`, the rest data parallel.
training::TrainingJob dense_job(const hardware::ClusterSpec& cluster, int tp, int global_batch) {
  training::TrainingJob job;
  job.model = fmsim::testing::test_model();
  job.cluster = cluster;
  job.gpus = 16;
  job.seq_len = 4096;
  job.stack = "test";
  job.layout.tp = tp;
  job.layout = parallelism::with_dp(job.layout, 16);
  job.layout.global_batch = global_batch;
  return job;
}

// A TP-16 job on 2 nodes: on the two nodes of one UltraServer its tensor-parallel collectives stay
// on NVLink; on one node of each (nodes 2 and 3 of 4) every TP all-reduce crosses EFA, with 1/18
// of NVLink's bandwidth per GPU, so its step is slower (by its exposed TP communication). Nodes 3-4 (the second
// UltraServer) have the same shape as nodes 1-2 and the very same step time, served from the cache without another
// step-model call.
TEST(PlacedStepModel, TensorParallelGroupSplitAcrossNvlinkDomainsRunsSlower) {
  const auto cluster = two_ultraservers();
  const auto layout = layout_from_cluster(cluster);
  ASSERT_EQ(layout.nodes(), 4);
  ASSERT_EQ(layout.block_size, 2);
  PlacedStepModel model(layout, cluster);
  const int h = model.add_job(dense_job(cluster, 16, 8), fmsim::testing::test_calibration());
  const double ideal = model.ideal_step_time(h);
  ASSERT_GT(ideal, 0);
  const double split = model.step_time(h, {1, 2});
  EXPECT_GT(split, ideal) << "ideal " << ideal << " s, split " << split << " s";
  const long calls = model.step_model_calls();
  EXPECT_DOUBLE_EQ(model.step_time(h, {2, 3}), ideal);
  EXPECT_EQ(model.step_model_calls(), calls);
}

// Data parallelism only (tp 1): the gradient all-reduce spans the job's 16 GPUs; on the 2 nodes of
// one UltraServer it stays on NVLink, on one node of each it crosses EFA: slower.
TEST(PlacedStepModel, DataParallelRingAcrossDomainsPaysTheNetwork) {
  const auto cluster = two_ultraservers();
  const auto layout = layout_from_cluster(cluster);
  PlacedStepModel model(layout, cluster);
  const int h = model.add_job(dense_job(cluster, 1, 16), fmsim::testing::test_calibration());
  const double ideal = model.ideal_step_time(h);
  const double split = model.step_time(h, {0, 3});
  EXPECT_GT(split, ideal) << "ideal " << ideal << " s, split " << split << " s";
}

}  // namespace
}  // namespace fmsim::orchestration
