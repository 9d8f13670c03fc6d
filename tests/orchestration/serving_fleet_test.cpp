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

// Without a queue (timeout 0) the excess is turned away: served = min(offered, min(requested,
// ready) x 10 req/s), and those served are served at once, within the SLO. Over [0, 100): 15 req/s
// offered, 2 replicas requested, 1 ready until 40 then 2: [0, 40) capacity 10 < 15 serves 10 and
// turns away 5 (the SLO not held); [40, 100) capacity 20 serves all 15.
TEST(ServingFleet, WithoutAQueueServedIsTheSmallerOfOfferedAndReadyCapacity) {
  const auto t = serve({{0, 15}}, {{0, 2}}, {{0, 1}, {40, 2}}, 10, 100, RouterQueue{});
  EXPECT_DOUBLE_EQ(t.offered_requests, 15 * 100);
  EXPECT_DOUBLE_EQ(t.served_requests, 10 * 40 + 15 * 60);
  EXPECT_DOUBLE_EQ(t.dropped_requests, 5 * 40);
  EXPECT_DOUBLE_EQ(t.requests_within_slo, 10 * 40 + 15 * 60);
  EXPECT_DOUBLE_EQ(t.seconds_within_slo, 60);
  EXPECT_DOUBLE_EQ(t.replica_seconds, 1 * 40 + 2 * 60);
  EXPECT_DOUBLE_EQ(t.peak_replicas, 2);
  // Ready replicas beyond those requested serve nothing.
  const auto capped = serve({{0, 15}}, {{0, 1}}, {{0, 3}}, 10, 100, RouterQueue{});
  EXPECT_DOUBLE_EQ(capped.served_requests, 10 * 100);
  EXPECT_DOUBLE_EQ(capped.dropped_requests, 5 * 100);
}

// The router's FIFO queue (a fluid): 15 req/s against 10 until 40 s, then 20. The frontier f (the
// arrival time served now) moves at capacity / 15: f = 2t/3 to t = 40 (a backlog of 15 x 40/3 =
// 200), then 4/3 per second, reaching t at 80. An arrival at s <= 80/3 waits s/2, one at s in
// [80/3, 80] waits 20 - s/4; everything offered is served, 1,200 after a wait (mean 20/3 s); with a
// wait budget of 5 s those served at t <= 15 (10 x 15) and at t >= 65 (20 x 15) and the 300 served
// at once after 80 are within the SLO.
TEST(ServingFleet, TheExcessWaitsInAFifoQueueAndIsServedLater) {
  const auto t = serve({{0, 15}}, {{0, 2}}, {{0, 1}, {40, 2}}, 10, 100, RouterQueue{.timeout_s = 60});
  EXPECT_DOUBLE_EQ(t.offered_requests, 1500);
  EXPECT_NEAR(t.served_requests, 1500, 1e-9);
  EXPECT_NEAR(t.dropped_requests, 0, 1e-9);
  EXPECT_NEAR(t.waited_served, 1200, 1e-9);
  EXPECT_NEAR(t.queued_requests, 1200, 1e-9);
  EXPECT_NEAR(t.wait_request_seconds / t.waited_served, 20.0 / 3, 1e-9);
  EXPECT_NEAR(t.peak_backlog, 200, 1e-9);
  EXPECT_NEAR(t.backlog_at_end, 0, 1e-9);
  EXPECT_NEAR(t.requests_within_slo, 300, 1e-9);  // no budget: only those served at once
  const auto budget =
      serve({{0, 15}}, {{0, 2}}, {{0, 1}, {40, 2}}, 10, 100, RouterQueue{.timeout_s = 60, .wait_budget_s = 5});
  EXPECT_NEAR(budget.requests_within_slo, 10 * 15 + 20 * 15 + 300, 1e-9);
}

// A request that has waited the timeout gives up: 15 req/s against 10 for 300 s with a 60 s
// timeout. The longest wait, t/3, reaches 60 at t = 180; then f = t - 60 and 15 - 10 = 5 req/s give
// up: 600 by 300 s, when the arrivals of the last 60 s (900) still wait. 3,000 + 600 + 900 = 4,500.
TEST(ServingFleet, RequestsGiveUpAfterTheTimeout) {
  const auto t = serve({{0, 15}}, {{0, 1}}, {{0, 1}}, 10, 300, RouterQueue{.timeout_s = 60});
  EXPECT_NEAR(t.served_requests, 3000, 1e-9);
  EXPECT_NEAR(t.dropped_requests, 600, 1e-9);
  EXPECT_NEAR(t.backlog_at_end, 900, 1e-9);
  EXPECT_NEAR(t.queued_requests, 4500, 1e-9);
  EXPECT_NEAR(t.seconds_within_slo, 0, 1e-9);
}

// Requests that arrive while the first replica loads wait for it: nothing is ready for 26 s,
// then 20 req/s against 10 offered; the 260 waiting drain at 10/s by t = 52 (an arrival at s waits
// 26 - s/2, 13 s on average) and none gives up within the 60 s timeout. With a 20 s timeout the
// arrivals of the first 6 s (60) give up, and those of [6, 26) wait 20 s at most.
TEST(ServingFleet, ArrivalsDuringAColdStartWaitForTheReplica) {
  const auto t = serve({{0, 10}}, {{0, 1}}, {{0, 0}, {26, 1}}, 20, 100, RouterQueue{.timeout_s = 60});
  EXPECT_NEAR(t.served_requests, 1000, 1e-9);
  EXPECT_NEAR(t.dropped_requests, 0, 1e-9);
  EXPECT_NEAR(t.waited_served, 520, 1e-9);
  EXPECT_NEAR(t.wait_request_seconds / t.waited_served, 13, 1e-9);
  const auto short_timeout = serve({{0, 10}}, {{0, 1}}, {{0, 0}, {26, 1}}, 20, 100, RouterQueue{.timeout_s = 20});
  EXPECT_NEAR(short_timeout.dropped_requests, 60, 1e-9);
  EXPECT_NEAR(short_timeout.served_requests, 940, 1e-9);
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
