// The checkpointed job and the goodput scenario resolved from flag values (shared by the
// checkpoint, goodput and run commands).
#include <gtest/gtest.h>

#include <cmath>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "jobspec/checkpoint.hpp"
#include "jobspec/goodput.hpp"

namespace fmsim::jobspec {
namespace {

using fmsim::testing::shipped_catalog;

// With --save-time S (sync), the stall and the persist time are S and the load defaults to S;
// Young's interval is sqrt(2 S M) for the job MTBF M; the interval used is the analytic optimum.
TEST(ResolveGoodputSetup, SaveTimeFlagsAndYoungInterval) {
  CheckpointJobFlags jf;
  jf.gpus = 64;
  const CheckpointJob job = resolve_checkpoint_job(jf, shipped_catalog());
  GoodputFlags f;
  f.save_time = "60s";
  f.mtbf = "4h";
  const GoodputSetup setup = resolve_goodput_setup(f, job, core::Seconds(2.0));
  const auto& t = setup.scenario.checkpoint;
  EXPECT_EQ(setup.strategy, reliability::CheckpointStrategy::SyncDisk);
  EXPECT_DOUBLE_EQ(t.blocking.value(), 60.0);
  EXPECT_DOUBLE_EQ(t.persist.value(), 60.0);
  EXPECT_DOUBLE_EQ(t.load.value(), 60.0);
  EXPECT_NEAR(setup.scenario.failures.mtbf().value(), 4.0 * 3600.0, 1e-6);
  EXPECT_NEAR(setup.young.value(), std::sqrt(2.0 * 60.0 * 4.0 * 3600.0), 1e-6);
  EXPECT_DOUBLE_EQ(t.interval.value(), setup.optimum.value());
  EXPECT_DOUBLE_EQ(setup.scenario.horizon.value(), 30.0 * 86400.0);  // default --duration 30d
  EXPECT_DOUBLE_EQ(setup.scenario.step_time.value(), 2.0);
  EXPECT_EQ(setup.scenario.gpus, 64);
  EXPECT_FALSE(setup.estimate.has_value());
}

// --async without --strategy means the async strategy: the stall is the copy into pinned host
// memory, the checkpoint is restorable once the whole save is done (persist = save time).
TEST(ResolveGoodputSetup, AsyncFlagPicksTheAsyncStrategy) {
  CheckpointJobFlags jf;
  jf.params = "70B";
  jf.gpus = 64;
  jf.tier_bandwidth = "100GB/s";
  jf.async = true;
  const CheckpointJob job = resolve_checkpoint_job(jf, shipped_catalog());
  const GoodputSetup setup = resolve_goodput_setup(GoodputFlags{}, job, core::Seconds(0.0));
  ASSERT_TRUE(setup.estimate.has_value());
  EXPECT_EQ(setup.strategy, reliability::CheckpointStrategy::AsyncDisk);
  EXPECT_DOUBLE_EQ(setup.scenario.checkpoint.blocking.value(), setup.estimate->staging_copy.value());
  EXPECT_DOUBLE_EQ(setup.scenario.checkpoint.persist.value(), setup.estimate->save.total.value());
  EXPECT_LT(setup.scenario.checkpoint.blocking.value(), setup.scenario.checkpoint.persist.value());
}

TEST(ResolveGoodputSetup, BadValuesNameTheirFlag) {
  CheckpointJobFlags jf;
  jf.gpus = 64;
  const CheckpointJob job = resolve_checkpoint_job(jf, shipped_catalog());
  auto field_of = [&](GoodputFlags f) {
    try {
      resolve_goodput_setup(f, job, core::Seconds(0.0));
    } catch (const core::InputError& e) {
      return e.field();
    }
    return std::string("no error");
  };
  GoodputFlags f;
  f.save_time = "10s";
  f.duration = "thirty days";
  EXPECT_EQ(field_of(f), "--duration");
  f.duration = "0s";
  EXPECT_EQ(field_of(f), "--duration");
  f.duration = "30d";
  f.replications = -1;
  EXPECT_EQ(field_of(f), "--replications");
  f.replications = 10;
  f.save_time = "";
  EXPECT_EQ(field_of(f), "--save-time");  // nothing to time the checkpoint with
}

// resolve_checkpoint_job = size and layout from the flags + resolve_checkpoint_storage, so the
// storage half alone, given the same cluster, layout and parameter count, resolves the same job.
TEST(ResolveCheckpointStorage, IsTheStorageHalfOfTheJob) {
  CheckpointJobFlags jf;
  jf.model = "llama3.1-8b";
  jf.cluster = "p5.48xlarge:2";
  jf.storage = "s3";
  const CheckpointJob whole = resolve_checkpoint_job(jf, shipped_catalog());
  CheckpointJob half;
  half.cluster = whole.cluster;
  half.layout = whole.layout;
  resolve_checkpoint_storage(half, whole.contents.parameters, jf, shipped_catalog());
  EXPECT_TRUE(half.has_contents);
  EXPECT_TRUE(half.has_tier);
  EXPECT_DOUBLE_EQ(half.contents.total().value(), whole.contents.total().value());
  EXPECT_DOUBLE_EQ(half.contents.total().value(), whole.contents.parameters * 14.0);  // default 14 B/param
  EXPECT_EQ(half.tier.name, whole.tier.name);
  EXPECT_DOUBLE_EQ(half.node_network.value(), whole.node_network.value());
  EXPECT_DOUBLE_EQ(half.engine.writer_throughput.value(), whole.engine.writer_throughput.value());
  EXPECT_EQ(half.keep, whole.keep);
}

}  // namespace
}  // namespace fmsim::jobspec
