// Serving plan search: Pareto front, rate under an SLO, layout enumeration, ranking.
#include <gtest/gtest.h>

#include "../support/model_fixtures.hpp"
#include "planner/serving_plan.hpp"

namespace fmsim::planner {
namespace {

using serving::Deployment;
using serving::IterationModel;
using serving::WorkloadSpec;

Deployment small_deployment() {
  Deployment d;
  d.model = fmsim::testing::test_model();
  d.cluster = fmsim::testing::test_cluster(1);
  d.engine.name = "test";
  d.engine.iteration_overhead = core::ms(1);
  d.engine.max_num_seqs = 64;
  d.engine.max_num_batched_tokens = 4096;
  return d;
}

collectives::CommCostFn cheap_comm() {
  return
      [](collectives::Op, collectives::CommGroup, core::Bytes b) { return core::Seconds(10e-6 + b.value() / 100e9); };
}

TEST(ServingPlan, ParetoFrontKeepsOnlyUndominatedPoints) {
  // (user, GPU) pairs: (100, 10) (50, 30) (40, 20) (10, 50): (40, 20) is beaten by (50, 30) on both axes.
  std::vector<ParetoPoint> pts{
      {"s", "a", 1, 10, 100}, {"s", "a", 2, 30, 50}, {"s", "b", 4, 20, 40}, {"s", "a", 8, 50, 10}};
  const auto f = pareto_front(pts);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_DOUBLE_EQ(f[0].tokens_per_s_per_user, 10);
  EXPECT_DOUBLE_EQ(f[1].tokens_per_s_per_user, 50);
  EXPECT_DOUBLE_EQ(f[2].tokens_per_s_per_user, 100);
}

TEST(ServingPlan, TighterSloNeverRaisesTheSustainableRate) {
  // The rate that meets a TTFT bound can only fall when the bound tightens.
  const IterationModel m(small_deployment(), cheap_comm());
  WorkloadSpec w;
  w.input.mean = 1024;
  w.output.mean = 64;
  const double loose = max_rate_under_slo(m, w, {core::Seconds(2.0), core::Seconds{}}, 100);
  const double tight = max_rate_under_slo(m, w, {core::Seconds(0.2), core::Seconds{}}, 100);
  EXPECT_GT(loose, 0.0);
  EXPECT_LE(tight, loose);
}

TEST(ServingPlan, ImpossibleSloHasNoRate) {
  // A TPOT bound below one decode step cannot be met at any rate.
  const IterationModel m(small_deployment(), cheap_comm());
  WorkloadSpec w;
  w.input.mean = 128;
  w.output.mean = 32;
  EXPECT_EQ(max_rate_under_slo(m, w, {core::Seconds{}, core::Seconds(1e-6)}, 50), 0.0);
}

TEST(ServingPlan, LayoutsArePowersOfTwoUpToTheNvlinkDomainAndValid) {
  // 32 heads, 8 GPUs per domain: tp 1, 2, 4, 8 (a dense model has no EP variants).
  const auto layouts = candidate_deployments(small_deployment());
  ASSERT_EQ(layouts.size(), 4u);
  for (const auto& d : layouts) EXPECT_TRUE(serving::why_invalid(d).empty());
  EXPECT_EQ(layouts.back().tp, 8);
}

TEST(ServingPlan, CostPerMillionTokensFollowsFromRateAndPrice) {
  // $/M output tokens = price/GPU-hour x GPUs / (requests/s x output tokens x 3600) x 1e6.
  ServingCandidate c{small_deployment(), 4.0};
  ServingPlanRequest r;
  r.workload.input.mean = 512;
  r.workload.output.mean = 128;
  r.slo = {core::Seconds(1.0), core::Seconds(0.1)};
  r.requests_per_probe = 80;
  r.disaggregated = false;
  const auto res = evaluate_serving(c, r, cheap_comm());
  ASSERT_EQ(res.size(), 1u);
  ASSERT_TRUE(res[0].feasible) << res[0].reason;
  EXPECT_NEAR(res[0].cost_per_million_output_tokens, 4.0 * 1 / (res[0].max_rate * 128 * 3600) * 1e6, 1e-9);
}

TEST(ServingPlan, RanksFeasibleFirstThenCheapestPerHourThenPerMillionTokens) {
  // With a target rate the key is USD per hour, ties broken by USD per million output tokens;
  // without one, USD per million output tokens; an infeasible plan ranks after every feasible one
  // however cheap; equal plans keep the search's order.
  auto plan = [](std::string name, bool feasible, double per_hour, double per_million) {
    ServingPlanResult p;
    p.system = std::move(name);
    p.feasible = feasible;
    p.cost_per_hour = per_hour;
    p.cost_per_million_output_tokens = per_million;
    return p;
  };
  const std::vector<ServingPlanResult> found{plan("a", true, 20, 1.0), plan("b", false, 1, 0.1),
                                             plan("c", true, 10, 3.0), plan("d", true, 10, 2.0),
                                             plan("e", true, 10, 2.0)};
  auto names = [](const std::vector<ServingPlanResult>& v) {
    std::string s;
    for (const auto& p : v) s += p.system;
    return s;
  };
  ServingPlanRequest with_rate;
  with_rate.target_rate = 5;
  auto ranked = found;
  rank_plans(ranked, with_rate);
  EXPECT_EQ(names(ranked), "decab");
  ranked = found;
  rank_plans(ranked, ServingPlanRequest{});
  EXPECT_EQ(names(ranked), "adecb");
}

}  // namespace
}  // namespace fmsim::planner
