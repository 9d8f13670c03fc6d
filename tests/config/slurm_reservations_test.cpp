// Advance reservations and AWS Capacity Blocks in scontrol's syntax (config/slurm_reservations.hpp).
#include "config/slurm_reservations.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace fmsim::config {
namespace {

TEST(Reservation, ReadsScontrolSyntax) {
  auto layout = orchestration::flat_layout(8);
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
  auto layout = orchestration::flat_layout(4);
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

}  // namespace
}  // namespace fmsim::config
