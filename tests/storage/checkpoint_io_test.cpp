// Checkpoint size, sharding over ranks and nodes, and save/load pipeline times.
#include "storage/checkpoint_io.hpp"

#include <gtest/gtest.h>

namespace fmsim::storage {
namespace {

using core::gb;
using core::gb_per_s;

TEST(CheckpointContents, FourteenBytesPerParameter) {
  // 176e9 x 14 B = 2.464e12 B = 2294.8 GiB (bigscience tr11 README: 2294.77 "GB" = GiB, du: 2.3T).
  const auto c = checkpoint_contents(176e9);
  EXPECT_DOUBLE_EQ(c.total().value(), 176e9 * 14.0);
  EXPECT_DOUBLE_EQ(c.weights().value(), 176e9 * 2.0);
  EXPECT_NEAR(c.total() / core::gib(1), 2294.77, 0.01);
}

TEST(PlanShards, OptimizerShardedLikeBloom) {
  // 384 ranks, 48 nodes, TP 4 innermost, DP 8: data-parallel rank 0 writes weights/48 + optimizer/384,
  // the others optimizer/384; a node holds TP x 2 replicas = 4 lead ranks and 4 others.
  const auto c = checkpoint_contents(176e9);
  const CheckpointLayout layout{
      .ranks = 384, .nodes = 48, .data_parallel = 8, .tensor_parallel = 4, .sharding = Sharding::DistributedOptimizer};
  const auto p = plan_shards(c, layout);
  const double lead = 176e9 * 2.0 / 48.0 + 176e9 * 12.0 / 384.0;
  const double other = 176e9 * 12.0 / 384.0;
  EXPECT_EQ(p.writers, 384);
  EXPECT_NEAR(p.max_writer_bytes.value(), lead, 1.0);
  EXPECT_NEAR(p.max_node_bytes.value(), 4 * lead + 4 * other, 1.0);
  // Loading: every replica reads its weights, so weights are read 8 times.
  EXPECT_NEAR(p.load_total.value(), 176e9 * 2.0 * 8 + 176e9 * 12.0, 1e3);
}

TEST(PlanShards, FullShardingSpreadsEverything) {
  // FSDP over 64 ranks on 8 nodes: each rank writes total/64, each node total/8.
  const auto c = checkpoint_contents(70e9);
  const auto p = plan_shards(c, {.ranks = 64, .nodes = 8, .data_parallel = 64, .sharding = Sharding::Zero3});
  EXPECT_NEAR(p.max_writer_bytes.value(), 70e9 * 14 / 64, 1.0);
  EXPECT_NEAR(p.max_node_bytes.value(), 70e9 * 14 / 8, 1.0);
}

TEST(PlanShards, DdpWritesFromOneReplica) {
  // Plain DDP, TP 8 = one node per replica: the first node writes everything, 1/8 per rank.
  const auto c = checkpoint_contents(8e9);
  const auto p =
      plan_shards(c, {.ranks = 32, .nodes = 4, .data_parallel = 4, .tensor_parallel = 8, .sharding = Sharding::None});
  EXPECT_EQ(p.writers, 8);
  EXPECT_NEAR(p.max_node_bytes.value(), 8e9 * 14, 1.0);
}

TEST(EstimateCheckpoint, SlowestStageWins) {
  // 1e12 B over 8 nodes of 8 ranks (full sharding): 15.625 GB per rank, 125 GB per node.
  // Synchronous: rank stream = pageable copy 15.625/5 = 3.125 s + writer 15.625/1 = 15.625 s
  // = 18.75 s; node 125/100 = 1.25 s; tier 1000/20 = 50 s. The slowest concurrent stage wins.
  const auto c = checkpoint_contents(1e12 / 14.0);
  const CheckpointLayout layout{.ranks = 64, .nodes = 8, .data_parallel = 64, .sharding = Sharding::Zero3};
  const auto tier = custom_tier("test", gb_per_s(20), {});
  const CheckpointEngine engine{
      .device_to_host = gb_per_s(50), .pageable_copy = gb_per_s(5), .writer_throughput = gb_per_s(1)};
  const auto e = estimate_checkpoint(c, layout, tier, engine, gb_per_s(100));
  EXPECT_NEAR(e.save.device_copy.value(), 3.125, 1e-9);
  EXPECT_NEAR(e.save.writer_stream.value(), 15.625, 1e-9);
  EXPECT_NEAR(e.save.rank_stream.value(), 18.75, 1e-9);
  EXPECT_NEAR(e.save.node_network.value(), 1.25, 1e-9);
  EXPECT_NEAR(e.save.tier_bandwidth.value(), 50.0, 1e-9);
  EXPECT_NEAR(e.save.total.value(), 50.0, 1e-9);
  EXPECT_EQ(e.save.bottleneck, IoLimit::TierBandwidth);
  EXPECT_DOUBLE_EQ(e.blocking.value(), e.save.total.value());
}

TEST(EstimateCheckpoint, CopyThenWriteIsSerialPerRank) {
  // A rank copies its shard off the GPU, then serialises and writes it: the stream is the sum.
  // Unbounded tier: 15.625 GB / 1.25 GB/s + 15.625 GB / 0.625 GB/s = 12.5 + 25 = 37.5 s.
  const auto c = checkpoint_contents(1e12 / 14.0);
  const CheckpointLayout layout{.ranks = 64, .nodes = 8, .data_parallel = 64, .sharding = Sharding::Zero3};
  const CheckpointEngine engine{.pageable_copy = gb_per_s(1.25), .writer_throughput = gb_per_s(0.625)};
  const auto e = estimate_checkpoint(c, layout, custom_tier("t", {}, {}), engine, {});
  EXPECT_NEAR(e.save.total.value(), 37.5, 1e-9);
  EXPECT_EQ(e.save.bottleneck, IoLimit::RankStream);
}

TEST(EstimateCheckpoint, AsyncBlocksOnlyForTheStagingCopy) {
  // Asynchronous: the stall is the copy into pinned memory (15.625 GB / 50 GB/s = 0.3125 s), not
  // the pageable one (3.125 s); persist = the whole save (tier 50 s).
  const auto c = checkpoint_contents(1e12 / 14.0);
  const CheckpointLayout layout{.ranks = 64, .nodes = 8, .data_parallel = 64, .sharding = Sharding::Zero3};
  const CheckpointEngine engine{.device_to_host = gb_per_s(50), .pageable_copy = gb_per_s(5), .asynchronous = true};
  const auto e = estimate_checkpoint(c, layout, custom_tier("t", gb_per_s(20), {}), engine, gb_per_s(100));
  EXPECT_NEAR(e.blocking.value(), 0.3125, 1e-9);
  EXPECT_NEAR(e.save.device_copy.value(), 0.3125, 1e-9);
  EXPECT_NEAR(e.persist.value(), 50.0, 1e-9);
}

TEST(EstimateCheckpoint, CapacityCheck) {
  // Two retained 1 TB checkpoints do not fit in 1.5 TB.
  const auto c = checkpoint_contents(1e12 / 14.0);
  const auto e = estimate_checkpoint(c, {.ranks = 8, .nodes = 1, .data_parallel = 8, .sharding = Sharding::Zero3},
                                     custom_tier("t", gb_per_s(20), {}, core::tb(1.5)), {}, gb_per_s(100), 2);
  EXPECT_FALSE(e.fits);
}

TEST(PeerTransfer, CopiesOverTheNodeNetwork) {
  // 100 GB to 2 peers at 50 GB/s = 4 s.
  EXPECT_DOUBLE_EQ(peer_transfer_time(gb(100), 2, gb_per_s(50)).value(), 4.0);
}

}  // namespace
}  // namespace fmsim::storage
