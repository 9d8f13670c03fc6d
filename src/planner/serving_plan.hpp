// The serving plan search (`fmsim plan-serve`): for a model, a load and an SLO, search systems and
// layouts (TP, EP, attention DP), aggregated or disaggregated prefill/decode, and the replica
// count; the largest rate one replica sustains under the SLO; the throughput-vs-interactivity
// Pareto front. Plans rank by cost (planner/ranking.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/comm_cost.hpp"
#include "planner/ranking.hpp"
#include "serving/iteration_model.hpp"
#include "serving/serving_mode.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::planner {

/// One candidate deployment: a replica layout on one system.
struct ServingCandidate {
  serving::Deployment deployment;
  double price_per_gpu_hour = 0;  ///< USD
};

/// What the search is asked.
struct ServingPlanRequest {
  serving::WorkloadSpec workload;  ///< lengths and samples; arrival is set by the planner
  double target_rate = 0;          ///< requests/s the fleet must serve (0: report per-replica figures only)
  serving::Slo slo;                ///< on p99 TTFT and p99 TPOT (0 = unbounded)
  int requests_per_probe = 300;    ///< requests simulated per rate probe
  int max_replicas = 100000;
  bool disaggregated = true;  ///< also cost disaggregated prefill/decode pools
  /// Pareto sweep: closed-loop concurrencies 1, 2, 4, ... up to this.
  int pareto_max_concurrency = 512;
};

/// Result of one candidate.
struct ServingPlanResult {
  std::string system;
  std::string layout;  ///< "tp8 ep8 dep"
  serving::ServingMode mode = serving::ServingMode::Aggregated;
  int gpus_per_replica = 0;
  bool feasible = false;
  std::string reason;                      ///< why not (does not fit, misses the SLO at any rate)
  double max_rate = 0;                     ///< requests/s one replica sustains under the SLO
  double output_tokens_per_s_per_gpu = 0;  ///< at max_rate
  double ttft_p99 = 0, tpot_p99 = 0;       ///< at max_rate (s)
  int replicas = 0;                        ///< for target_rate
  int gpus = 0;                            ///< replicas x gpus_per_replica (prefill + decode GPUs when disaggregated)
  int prefill_gpus = 0, decode_gpus = 0;   ///< disaggregated pools
  double cost_per_hour = 0;                ///< USD for target_rate
  double cost_per_million_output_tokens = 0;  ///< USD at max_rate (fully loaded replicas)
};

/// One point of the throughput-vs-interactivity trade-off.
struct ParetoPoint {
  std::string system, layout;
  int concurrency = 0;
  double tokens_per_s_per_gpu = 0;   ///< output tokens/s per GPU
  double tokens_per_s_per_user = 0;  ///< 1 / mean TPOT
};

/// Largest Poisson rate (requests/s) one replica serves with p99 TTFT and TPOT within `slo` and no
/// growing queue; 0 when even a trickle misses it. Bisection over simulated probes.
double max_rate_under_slo(const serving::IterationModel& model, const serving::WorkloadSpec& workload,
                          const serving::Slo& slo, int requests, serving::ServeSummary* at_max = nullptr);

/// Evaluates one candidate for the request (aggregated; and disaggregated when asked and the
/// model fits a prefill and a decode replica).
std::vector<ServingPlanResult> evaluate_serving(const ServingCandidate& c, const ServingPlanRequest& r,
                                                const collectives::CommCostFn& comm);

/// Closed-loop concurrency sweep of one candidate.
std::vector<ParetoPoint> pareto_sweep(const ServingCandidate& c, const ServingPlanRequest& r,
                                      const collectives::CommCostFn& comm);

/// Where a plan ranks (objective Cost): feasible first, then cost per hour at the request's
/// target rate (with none, cost per million output tokens), ties by cost per million output tokens.
RankKey rank_key(const ServingPlanResult& plan, const ServingPlanRequest& request);

/// Sorts `plans` best first by rank_key (stable: equal plans keep the search's order).
void rank_plans(std::vector<ServingPlanResult>& plans, const ServingPlanRequest& request);

/// The points no other point beats on both axes, by tokens/s/user ascending.
std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points);

/// "tp8 ep8 dep" for a deployment.
std::string layout_label(const serving::Deployment& d);

/// Layouts worth trying for `model` on a system with `domain_gpus` GPUs per NVLink domain:
/// TP (and EP = TP, with or without attention DP for MoE) over powers of two up to the domain
/// (and 72 on NVL72); only those why_invalid() accepts.
std::vector<serving::Deployment> candidate_deployments(const serving::Deployment& base);

}  // namespace fmsim::planner
