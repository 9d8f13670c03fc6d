// Kueue's scheduler performance test scenarios (validation/kueue/, Kueue's generator.yaml schema)
// read into ClusterQueues and workloads as Kueue's runner/generator/generator.go creates them.
#include "config/kueue_scenario.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace fmsim::config {
namespace {

namespace orch = fmsim::orchestration;

// The baseline: 5 cohorts x 6 ClusterQueues (nominal 20, borrowingLimit 100) x (350 small + 100
// medium + 50 large) = 15,000 workloads on 30 x 20 = 600 nodes; generator.go sleeps one
// creationIntervalMs before each workload, so a queue's k-th small one (k from 1) is created
// at k x 100 ms and its first large one at 1,200 ms.
TEST(KueueScenario, BaselineHasKueuesCountsQuotasAndCreationTimes) {
  const auto s = load_kueue_scenario(std::string(FMSIM_SOURCE_DIR) + "/validation/kueue/baseline.yaml");
  ASSERT_EQ(s.queues.size(), 30u);
  EXPECT_EQ(s.jobs.size(), 15000u);
  EXPECT_EQ(s.nodes, 600);
  const auto& q = s.queues.front();
  EXPECT_EQ(q.name, "cq-0-0-cohort-0");
  EXPECT_EQ(q.cohort, "cohort-0");
  EXPECT_EQ(q.nominal_nodes, 20);
  EXPECT_EQ(q.borrowing_limit, 100);
  EXPECT_EQ(q.lending_limit, -1);
  EXPECT_EQ(q.reclaim_within_cohort, orch::ReclaimWithinCohort::Any);
  EXPECT_EQ(q.within_cluster_queue, orch::WithinClusterQueue::LowerPriority);
  EXPECT_EQ(s.queues.back().cohort, "cohort-4");
  // The first queue's workloads: 350 small, then 100 medium, then 50 large.
  EXPECT_EQ(s.jobs[0].account, "cq-0-0-cohort-0");
  EXPECT_DOUBLE_EQ(s.jobs[0].submit_s, 0.1);
  EXPECT_DOUBLE_EQ(s.jobs[349].submit_s, 35.0);
  EXPECT_EQ(s.jobs[349].kind, "small");
  EXPECT_EQ(s.jobs[350].kind, "medium");
  EXPECT_EQ(s.jobs[350].request.nodes, 5);
  EXPECT_EQ(s.jobs[450].kind, "large");
  EXPECT_DOUBLE_EQ(s.jobs[450].submit_s, 1.2);
  EXPECT_DOUBLE_EQ(s.jobs[450].run_s, 1.0);
  EXPECT_EQ(s.jobs[450].priority_class, 200);
  EXPECT_EQ(s.jobs[450].request.nodes, 20);
  EXPECT_EQ(s.jobs[500].account, "cq-0-1-cohort-0");
}

TEST(KueueScenario, LargeScaleHasTwoThousandQueuesAndSixtyThousandWorkloads) {
  const auto s = load_kueue_scenario(std::string(FMSIM_SOURCE_DIR) + "/validation/kueue/large_scale.yaml");
  EXPECT_EQ(s.queues.size(), 2000u);
  EXPECT_EQ(s.jobs.size(), 60000u);
  EXPECT_EQ(s.nodes, 40000);
}

/// The InputError's text for a scenario, or "" when it loads.
std::string scenario_error(const std::string& text) {
  try {
    (void)parse_kueue_scenario(text, "s.yaml");
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kQueueSet = R"(cohorts:
- className: c
  count: 1
  queuesSets:
  - className: q
    count: 2
    nominalQuota: 4
)";
constexpr const char* kWorkloads = R"(    workloadsSets:
    - count: 2
      creationIntervalMs: 10
      workloads:
      - {className: w, runtimeMs: 5, priority: 1, request: 2}
)";

// Words and keys outside Kueue's schema are refused, naming the allowed ones; Kueue's policy
// defaults are Never; a lendingLimit above the nominal quota is refused (Kueue's validation).
TEST(KueueScenario, UnknownKeysAndWordsAreErrorsListingTheAllowedOnes) {
  const std::string base = kQueueSet;
  EXPECT_EQ(scenario_error(base + kWorkloads), "");
  const auto s = parse_kueue_scenario(base + kWorkloads, "s.yaml");
  EXPECT_EQ(s.jobs.size(), 4u);
  EXPECT_EQ(s.queues[0].reclaim_within_cohort, orch::ReclaimWithinCohort::Never);
  EXPECT_EQ(s.queues[0].within_cluster_queue, orch::WithinClusterQueue::Never);
  const std::string word = scenario_error(base + "    reclaimWithinCohort: Sometimes\n" + kWorkloads);
  EXPECT_NE(word.find("Never, LowerPriority, Any"), std::string::npos) << word;
  const std::string within = scenario_error(base + "    withinClusterQueue: Higher\n" + kWorkloads);
  EXPECT_NE(within.find("LowerOrNewerEqualPriority"), std::string::npos) << within;
  const std::string key = scenario_error(base + "    nominalQuotas: 3\n" + kWorkloads);
  EXPECT_NE(key.find("nominalQuotas"), std::string::npos) << key;
  const std::string lending = scenario_error(base + "    lendingLimit: 5\n" + kWorkloads);
  EXPECT_NE(lending.find("lendingLimit 5 is more than nominalQuota 4"), std::string::npos) << lending;
  // A 2-CPU workload in a cohort of 2 x 4 CPUs fits; a 9-CPU one never would.
  std::string big = base + kWorkloads;
  big.replace(big.find("request: 2"), 10, "request: 9");
  EXPECT_NE(scenario_error(big).find("its cohort c-0 has 8 in all"), std::string::npos) << scenario_error(big);
}

}  // namespace
}  // namespace fmsim::config
