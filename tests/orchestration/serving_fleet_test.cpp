// The shared fleet's arithmetic: replicas the autoscaler wants, its delays, replica units as jobs,
// and the served rate and SLO attainment from offered rate and ready replicas.
#include "orchestration/serving_fleet.hpp"

#include <gtest/gtest.h>

#include "orchestration/cluster_layout.hpp"
#include "sim_fixtures.hpp"

namespace fmsim::orchestration {
namespace {

ServingDeployment deployment(std::vector<Step> offered) {
  ServingDeployment d;
  d.name = "chat";
  d.replica.rate_rps = 10;
  d.replica.output_tokens = 100;
  d.replica.cold_start_s = 30;
  d.replica.gpus = 8;
  d.autoscaling = {.target_utilisation = 0.5,
                   .scale_up_delay_s = 60,
                   .scale_down_delay_s = 600,
                   .min_replicas = 1,
                   .max_replicas = 6};
  d.offered = std::move(offered);
  return d;
}

// desired = clamp(ceil(rate / (capacity x target)), min, max): 10 req/s at 10 x 0.5 = 5 per
// replica is 2 replicas; 11 req/s is 3; 0 is the minimum 1; 100 is the maximum 6.
TEST(ServingFleet, DesiredReplicasIsTheCeilingWithinBounds) {
  const auto d = deployment({{0, 0}});
  EXPECT_EQ(desired_replicas(10, d.replica, d.autoscaling), 2);
  EXPECT_EQ(desired_replicas(11, d.replica, d.autoscaling), 3);
  EXPECT_EQ(desired_replicas(0, d.replica, d.autoscaling), 1);
  EXPECT_EQ(desired_replicas(100, d.replica, d.autoscaling), 6);
}

// Whole nodes: tp 2 on 8-GPU nodes is 4 replicas a node; tp 16 is one replica on 2 nodes.
TEST(ServingFleet, ReplicaUnitsAreWholeNodes) {
  EXPECT_EQ(replica_unit(2, 8).nodes, 1);
  EXPECT_EQ(replica_unit(2, 8).replicas, 4);
  EXPECT_EQ(replica_unit(16, 8).nodes, 2);
  EXPECT_EQ(replica_unit(16, 8).replicas, 1);
}

// A rise at 1000 s takes effect scale_up_delay (60 s) later; the fall at 5000 s takes effect
// scale_down_delay (600 s) later: requested = max of desired over [t - 600, t - 60].
TEST(ServingFleet, AutoscalerRisesAfterTheUpDelayAndFallsAfterTheDownDelay) {
  const auto d = deployment({{0, 10}, {1000, 30}, {5000, 10}});
  const auto r = requested_replicas(d, 10000);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].start_s, 0);
  EXPECT_DOUBLE_EQ(r[0].value, 2);
  EXPECT_DOUBLE_EQ(r[1].start_s, 1060);
  EXPECT_DOUBLE_EQ(r[1].value, 6);
  EXPECT_DOUBLE_EQ(r[2].start_s, 5600);
  EXPECT_DOUBLE_EQ(r[2].value, 2);
}

// A dip shorter than the stabilisation window (600 s) does not scale down at all.
TEST(ServingFleet, ShortDipsDoNotScaleDown) {
  const auto d = deployment({{0, 30}, {1000, 10}, {1300, 30}});
  const auto r = requested_replicas(d, 5000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].value, 6);
}

// Units of 1 node hold 1 replica (8 GPUs): 2 units from 0 to the horizon and 4 more from 1060 s
// to 5600 s, the last ones up leaving first.
TEST(ServingFleet, ReplicaJobsFollowTheRequestedReplicas) {
  const auto d = deployment({{0, 10}, {1000, 30}, {5000, 10}});
  const auto jobs = replica_jobs(d, 3, "serving", 8, 10000, 100);
  ASSERT_EQ(jobs.size(), 6u);
  int long_lived = 0, burst = 0;
  for (const auto& j : jobs) {
    EXPECT_EQ(j.deployment, 3);
    EXPECT_EQ(j.partition, "serving");
    EXPECT_EQ(j.request.nodes, 1);
    if (j.submit_s == 0 && j.run_s == 10000) ++long_lived;
    if (j.submit_s == 1060 && j.run_s == 5600 - 1060) ++burst;
  }
  EXPECT_EQ(long_lived, 2);
  EXPECT_EQ(burst, 4);
  EXPECT_EQ(jobs.front().id, 100);
}

// served = min(offered, min(requested, ready) x 10 req/s); SLO met where offered <= capacity.
// Over [0, 100): 15 req/s offered, 2 replicas requested, 1 ready until 40 then 2:
// [0, 40) capacity 10 < 15: serves 10, SLO missed; [40, 100) capacity 20: serves 15, SLO met.
TEST(ServingFleet, ServedIsTheSmallerOfOfferedAndReadyCapacity) {
  const auto t = serve({{0, 15}}, {{0, 2}}, {{0, 1}, {40, 2}}, 10, 100);
  EXPECT_DOUBLE_EQ(t.offered_requests, 15 * 100);
  EXPECT_DOUBLE_EQ(t.served_requests, 10 * 40 + 15 * 60);
  EXPECT_DOUBLE_EQ(t.requests_within_slo, 15 * 60);
  EXPECT_DOUBLE_EQ(t.seconds_within_slo, 60);
  EXPECT_DOUBLE_EQ(t.replica_seconds, 1 * 40 + 2 * 60);
  EXPECT_DOUBLE_EQ(t.peak_replicas, 2);
  // Ready replicas beyond those requested serve nothing.
  const auto capped = serve({{0, 15}}, {{0, 1}}, {{0, 3}}, 10, 100);
  EXPECT_DOUBLE_EQ(capped.served_requests, 10 * 100);
  EXPECT_DOUBLE_EQ(capped.requests_within_slo, 0);
}

// One deployment alone on a 2-node cluster under the scheduler: its unit starts at once, is ready
// after the 30 s cold start, and then serves all of the constant 10 req/s (2 replicas of 10 at
// target 0.5): served = 10 x (3600 - 30), tokens = served x 100, GPU-hours = 1 node x 8 GPUs x 1 h.
TEST(ServingFleet, DeploymentAloneServesItsOfferedRateAfterTheColdStart) {
  auto d = deployment({{0, 10}});
  d.replica.gpus = 4;  // 2 replicas a node: one unit
  const auto layout = flat_layout(2);
  auto specs = replica_jobs(d, 0, "", 8, 3600, 1);
  ASSERT_EQ(specs.size(), 1u);
  SimulationOptions options;
  options.horizon_s = 3600;
  const auto result = simulate_slurm(layout, testing::fast_backfill(), specs, options);
  const auto o = summarise_deployment(d, 0, specs, result, 8, 3600, 98.32, 600);
  EXPECT_DOUBLE_EQ(o.totals.offered_requests, 10 * 3600);
  EXPECT_NEAR(o.totals.served_requests, 10 * (3600 - 30), 1e-6);
  EXPECT_NEAR(o.slo_attainment, (3600 - 30) / 3600.0, 1e-9);
  EXPECT_NEAR(o.output_tokens, 100 * o.totals.served_requests, 1e-6);
  EXPECT_NEAR(o.gpu_hours, 8, 1e-6);
  EXPECT_NEAR(o.cost_usd, 98.32, 1e-6);
  EXPECT_NEAR(o.cost_per_million_output_tokens, 98.32 / o.output_tokens * 1e6, 1e-9);
  ASSERT_EQ(o.served.size(), 6u);
  EXPECT_NEAR(o.served[0], 10 * (600 - 30) / 600.0, 1e-9);
  EXPECT_NEAR(o.served[5], 10, 1e-9);
  const auto use = fleet_use(specs, result, 2, 8);
  EXPECT_NEAR(use.serving_gpu_hours, 8, 1e-6);
  EXPECT_NEAR(use.serving_gpu_hours + use.training_gpu_hours + use.idle_gpu_hours, 16, 1e-6);
}

// A serving unit in a higher PriorityTier partition preempts (requeues) the training job that
// holds the only node: one preemption, counted against training.
TEST(ServingFleet, ServingPreemptsTraining) {
  auto c = testing::fast_backfill();
  c.preempt_type = PreemptType::PartitionPrio;
  c.preempt_mode = PreemptMode::Requeue;
  PartitionConfig batch;
  batch.name = "batch";
  batch.is_default = true;
  PartitionConfig serving;
  serving.name = "serving";
  serving.priority_tier = 2;
  serving.preempt_mode = PreemptMode::Off;
  c.partitions = {batch, serving};
  auto d = deployment({{0, 0}, {100, 10}});
  d.autoscaling.min_replicas = 0;
  d.autoscaling.scale_up_delay_s = 0;
  auto specs = std::vector<JobSpec>{testing::job(1, 0, 1, 5000, 6000)};
  for (const auto& j : replica_jobs(d, 0, "serving", 8, 2000, 2)) specs.push_back(j);
  SimulationOptions options;
  options.horizon_s = 2000;
  const auto result = simulate_slurm(flat_layout(1), c, specs, options);
  EXPECT_EQ(result.preemptions, 1);
  const auto use = fleet_use(specs, result, 1, 8);
  EXPECT_EQ(use.training_jobs, 1);
  EXPECT_EQ(use.training_requeues, 1);
  EXPECT_NEAR(use.serving_gpu_hours, 8 * 1900 / 3600.0, 1e-6);
}

}  // namespace
}  // namespace fmsim::orchestration
