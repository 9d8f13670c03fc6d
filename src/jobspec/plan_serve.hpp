// `fmsim plan-serve` from its flag values: the serving deployment's flags (their --cluster
// replaced by each family's), the families to search and the search's own settings, resolved and
// searched into plans ranked cheapest first and the throughput-interactivity Pareto front.
#pragma once

#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "jobspec/flags.hpp"
#include "jobspec/serving.hpp"
#include "planner/serving_plan.hpp"

namespace fmsim::jobspec {

/// Raw flag values; the defaults are those of `fmsim plan-serve`.
struct PlanServeFlags {
  ServingFlags serving;  ///< --tp, --ep and --dep fix the layout only when given (FlagGiven)
  std::string families = "p5.48xlarge,p5en.48xlarge,p6-b200.48xlarge,u-p6e-gb200x72";
  int top = 10;
  bool no_disagg = false;
  int probe_requests = 300;
};

/// What the search found.
struct ServingPlan {
  planner::ServingPlanRequest request;
  std::vector<planner::ServingPlanResult> results;  ///< best first (planner::rank_plans: feasible, then cheapest)
  std::vector<planner::ParetoPoint> points;         ///< every closed-loop point of every layout
  std::vector<planner::ParetoPoint> front;          ///< the Pareto front over all of them
  std::vector<std::string> skipped;                 ///< families that cannot run the deployment, and why
};

/// Resolves the flags (InputError naming the flag) and searches every family's candidate layouts:
/// aggregated and disaggregated plans, replicas for the target rate (--rate), and closed-loop
/// points for the Pareto front. A family whose GPU lacks the precision or whose domain cannot hold
/// the layout is skipped; any other bad value is the user's error.
ServingPlan plan_serving(const PlanServeFlags& flags, const FlagGiven& given, const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
