// Failure rates per node-hour and job-level failure processes.
#include "reliability/failure_model.hpp"

#include <gtest/gtest.h>

namespace fmsim::reliability {
namespace {

FailureModel two_cause_model() {
  FailureModel m;
  m.name = "test";
  m.observed_nodes = 100;
  m.observed_duration = core::days(10);
  m.causes = {{.name = "gpu", .component = ComponentClass::Gpu, .count = 30, .replace_node = true},
              {.name = "software", .component = ComponentClass::Software, .count = 10, .replace_node = false},
              {.name = "maintenance", .component = ComponentClass::Maintenance, .count = 5, .planned = true}};
  return m;
}

TEST(FailureModel, RatePerNodeHour) {
  // 40 unexpected over 100 nodes x 240 h = 40 / 24,000 per node-hour; 45 with planned.
  const auto m = two_cause_model();
  EXPECT_DOUBLE_EQ(m.node_hours(), 24000.0);
  EXPECT_DOUBLE_EQ(m.rate_per_node_hour(false), 40.0 / 24000.0);
  EXPECT_DOUBLE_EQ(m.rate_per_node_hour(true), 45.0 / 24000.0);
}

TEST(FailureModel, JobMtbfScalesInverselyWithNodes) {
  // MTBF = 1 / (nodes x rate): 24,000 / 40 node-hours per failure over 100 nodes = 6 h; 3 h on 200 nodes.
  const auto m = two_cause_model();
  EXPECT_NEAR(job_mtbf(m.rate_per_node_hour(false), 100).value(), core::hours(6).value(), 1e-9);
  EXPECT_NEAR(job_mtbf(m.rate_per_node_hour(false), 200).value(), core::hours(3).value(), 1e-9);
}

TEST(FailureModel, PerThousandNodeDays) {
  // 6.5 per 1000 node-days on 2,048 nodes: 13.3 failures a day, one every 24/13.312 = 1.803 h.
  const double rate = per_node_hour_from_per_1000_node_days(6.5);
  EXPECT_NEAR(job_mtbf(rate, 2048).value() / 3600.0, 24.0 / (2048 * 6.5 / 1000.0), 1e-12);
}

TEST(FailureModel, ScalingKeepsTheMix) {
  // Doubling the unexpected rate doubles every count, planned included.
  const auto m = two_cause_model().with_unexpected_rate(2.0 * 40.0 / 24000.0);
  EXPECT_DOUBLE_EQ(m.causes[0].count, 60.0);
  EXPECT_DOUBLE_EQ(m.causes[2].count, 10.0);
}

TEST(JobFailureProcess, SharesAndRate) {
  // Unexpected only: 40 causes over 100 nodes x 240 h; on 50 nodes rate = 50 x 40/24000 per hour.
  const auto p = job_failure_process(two_cause_model(), 50, false);
  EXPECT_EQ(p.causes.size(), 2u);
  EXPECT_NEAR(p.rate_per_second * 3600.0, 50.0 * 40.0 / 24000.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.replacement_share(), 0.75);
  EXPECT_DOUBLE_EQ(p.planned_share(), 0.0);
  const auto with_planned = job_failure_process(two_cause_model(), 50, true);
  EXPECT_DOUBLE_EQ(with_planned.planned_share(), 5.0 / 45.0);
}

}  // namespace
}  // namespace fmsim::reliability
