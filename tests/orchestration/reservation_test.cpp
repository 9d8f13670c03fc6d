// Advance reservations and AWS Capacity Blocks in the scheduler twin: what they allow (a bound job runs only on the
// reservation's nodes, within its window; other jobs keep off those nodes while it lasts, and off a Capacity Block's
// nodes always).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "orchestration/cluster_metrics.hpp"
#include "orchestration/reservation.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "sim_fixtures.hpp"

namespace fmsim::orchestration {
namespace {

using testing::fast_backfill;
using testing::job;

Reservation window(const std::string& name, double start_s, double end_s, std::vector<int> nodes) {
  Reservation r;
  r.name = name;
  r.start_s = start_s;
  r.end_s = end_s;
  r.nodes = std::move(nodes);
  return r;
}

// 4 nodes; a reservation of n3-n4 from t=100 to t=400. Job 1 (unbound, 4 nodes, limit 200)
// submitted at 0 would overlap the window on n3-n4: it cannot start before the window ends
// (t=400). Job 2 (unbound, 2 nodes, limit 50) fits on n1-n2 at once. Job 3, bound to the
// reservation, submitted at 0, waits for the window to open and runs on n3-n4 at t=100.
TEST(Reservation, BoundJobsUseItsNodesInItsWindowAndOthersKeepOff) {
  auto layout = flat_layout(4);
  auto c = fast_backfill();
  c.reservations = {window("r", 100, 400, {2, 3})};
  const auto r = simulate_slurm(layout, c, {job(1, 0, 4, 100, 200), job(2, 1, 2, 50, 50), job(3, 0, 2, 50, 100, "r")});
  EXPECT_EQ(r.jobs[0].start_s, 400);
  EXPECT_EQ(r.jobs[1].start_s, 1);
  EXPECT_EQ(r.jobs[1].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.jobs[2].start_s, 100);
  EXPECT_EQ(r.jobs[2].nodes, (std::vector<int>{2, 3}));
}

// A Capacity Block of 2 nodes from t=1000 to t=2000 on a 2-node cluster: other jobs never use its
// nodes; its jobs start at the window's start; its nodes count (and are paid) only within the
// window: the replay ends at 1510 (job 3, 1500-1510), so they were absent for their first 1000 s and
// utilisation = allocated node-seconds / (2 x 1510 + 2 x 510).
TEST(Reservation, CapacityBlockNodesExistOnlyInTheirWindow) {
  auto layout = flat_layout(2);
  auto c = fast_backfill();
  c.reservations = {window("cb", 1000, 2000, add_capacity_block_nodes(layout, "cb", 2))};
  c.reservations[0].capacity_block = true;
  ASSERT_EQ(layout.nodes(), 4);
  const auto r =
      simulate_slurm(layout, c, {job(1, 0, 2, 1500, 1600), job(2, 0, 2, 500, 600, "cb"), job(3, 10, 1, 10, 20)});
  EXPECT_EQ(r.jobs[0].start_s, 0);
  EXPECT_EQ(r.jobs[0].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.jobs[1].start_s, 1000);
  EXPECT_EQ(r.jobs[1].nodes, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.jobs[2].start_s, 1500);  // after job 1: the block's idle nodes are not its to use
  EXPECT_EQ(r.end_s, 1510);
  EXPECT_DOUBLE_EQ(r.absent_node_s, 2 * 1000);
  const auto s = summarise(layout, r);
  const double busy = 2 * 1500 + 2 * 500 + 10;
  EXPECT_NEAR(s.utilisation, busy / (2 * 1510 + 2 * 510), 1e-9);
}

// A job whose time limit is longer than its reservation's window could never start: a workload
// problem, which the reader reports; the simulator takes only workloads without one.
TEST(Reservation, RejectsJobsThatCanNeverFit) {
  auto layout = flat_layout(2);
  auto c = fast_backfill();
  c.reservations = {window("r", 0, 600, {0})};
  auto message = [&](const JobSpec& j) {
    const auto problem = find_workload_problem(layout, c, {j});
    EXPECT_TRUE(problem && problem->input == WorkloadInput::Jobs);
    return problem ? problem->message : std::string();
  };
  EXPECT_EQ(message(job(1, 0, 1, 100, 3600, "r")),
            "job 1: its time limit (3600 s) is longer than reservation r's window (600 s); it could never start");
  EXPECT_EQ(message(job(1, 0, 2, 100, 60, "r")), "job 1 asks for 2 nodes; reservation r has 1");
  EXPECT_EQ(message(job(1, 0, 1, 100, 60, "nosuch")), "job 1: reservation 'nosuch' is not defined");
  EXPECT_FALSE(find_workload_problem(layout, c, {job(1, 0, 1, 100, 600, "r")}));
  EXPECT_THROW(simulate_slurm(layout, c, {job(1, 0, 1, 100, 3600, "r")}), core::InternalError);
}

}  // namespace
}  // namespace fmsim::orchestration
