// Advance reservations and AWS Capacity Blocks in the scheduler twin: reading them in scontrol's
// syntax, and what they allow (a bound job runs only on the reservation's nodes, within its window;
// other jobs keep off those nodes while it lasts, and off a Capacity Block's nodes always).
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

TEST(Reservation, ReadsScontrolSyntax) {
  auto layout = flat_layout(8);
  const auto r = parse_reservations(
      "# maintenance, then a Capacity Block\n"
      "ReservationName=maint StartTime=now+2hours Duration=90 Nodes=n[7-8] Users=ops\n"
      "ReservationName=cb1 StartTime=86400 EndTime=now+3days NodeCnt=4 CapacityBlock=YES Accounts=llm\n",
      "resv.conf", layout);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].start_s, 7200);
  EXPECT_EQ(r[0].end_s, 7200 + 90 * 60);
  EXPECT_EQ(r[0].nodes, (std::vector<int>{6, 7}));
  EXPECT_FALSE(r[0].capacity_block);
  // NodeCnt of a Capacity Block adds nodes: cb1-1..cb1-4 after the cluster's 8.
  EXPECT_EQ(layout.nodes(), 12);
  EXPECT_EQ(r[1].nodes, (std::vector<int>{8, 9, 10, 11}));
  EXPECT_EQ(layout.node_names[8], "cb1-1");
  EXPECT_EQ(r[1].start_s, 86400);
  EXPECT_EQ(r[1].end_s, 3 * 86400);
  EXPECT_EQ(r[1].accounts, (std::vector<std::string>{"llm"}));
}

TEST(Reservation, ErrorsNameTheLineAndKey) {
  auto layout = flat_layout(4);
  auto expect_error = [&](const std::string& text, int line, const std::string& key) {
    try {
      parse_reservations(text, "resv.conf", layout);
      FAIL() << "expected an error for " << text;
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.line(), line) << text;
      EXPECT_EQ(e.field(), key) << text;
    }
  };
  expect_error("ReservationName=a StartTime=soon Duration=10 NodeCnt=1\n", 1, "StartTime");
  expect_error("\nReservationName=a StartTime=now Duration=10 EndTime=now+1hours NodeCnt=1\n", 2, "EndTime");
  expect_error("ReservationName=a StartTime=now Duration=10 Nodes=n9\n", 1, "Nodes");
  expect_error("ReservationName=a StartTime=now Duration=10 NodeCnt=5\n", 1, "NodeCnt");
  expect_error("ReservationName=a StartTime=now Duration=10 Colour=red\n", 1, "Colour");
}

// 4 nodes; a reservation of n3-n4 from t=100 to t=400. Job 1 (unbound, 4 nodes, limit 200)
// submitted at 0 would overlap the window on n3-n4: it cannot start before the window ends
// (t=400). Job 2 (unbound, 2 nodes, limit 50) fits on n1-n2 at once. Job 3, bound to the
// reservation, submitted at 0, waits for the window to open and runs on n3-n4 at t=100.
TEST(Reservation, BoundJobsUseItsNodesInItsWindowAndOthersKeepOff) {
  auto layout = flat_layout(4);
  auto c = fast_backfill();
  c.reservations =
      parse_reservations("ReservationName=r StartTime=100 EndTime=400 Nodes=n[3-4]\n", "resv.conf", layout);
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
  c.reservations = parse_reservations(
      "ReservationName=cb StartTime=1000 Duration=00:16:40 NodeCnt=2 CapacityBlock=YES\n", "resv.conf", layout);
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

// A job whose time limit is longer than its reservation's window could never start: an error.
TEST(Reservation, RejectsJobsThatCanNeverFit) {
  auto layout = flat_layout(2);
  auto c = fast_backfill();
  c.reservations = parse_reservations("ReservationName=r StartTime=0 Duration=10 Nodes=n1\n", "resv.conf", layout);
  EXPECT_THROW(simulate_slurm(layout, c, {job(1, 0, 1, 100, 3600, "r")}), core::InputError);
  EXPECT_THROW(simulate_slurm(layout, c, {job(1, 0, 2, 100, 60, "r")}), core::InputError);
  EXPECT_THROW(simulate_slurm(layout, c, {job(1, 0, 1, 100, 60, "nosuch")}), core::InputError);
}

}  // namespace
}  // namespace fmsim::orchestration
