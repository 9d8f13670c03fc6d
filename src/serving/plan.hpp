// Serving planner: for a model, a load and an SLO, search systems and layouts (TP, EP, attention
// DP), aggregated or disaggregated prefill/decode, and the replica count; the largest rate one
// replica sustains under the SLO; the throughput-vs-interactivity Pareto front.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "serving/simulator.hpp"

namespace fmsim::serving {

/// One candidate deployment: a replica layout on one system.
struct PlanCandidate {
  Deployment deployment;
  double price_per_gpu_hour = 0;  ///< USD
};

/// What the search is asked.
struct PlanRequest {
  WorkloadSpec workload;         ///< lengths and samples; arrival is set by the planner
  double target_rate = 0;        ///< requests/s the fleet must serve (0: report per-replica figures only)
  Slo slo;                       ///< on p99 TTFT and p99 TPOT (0 = unbounded)
  int requests_per_probe = 300;  ///< requests simulated per rate probe
  int max_replicas = 100000;
  bool disaggregated = true;  ///< also cost disaggregated prefill/decode pools
  /// Pareto sweep: closed-loop concurrencies 1, 2, 4, ... up to this.
  int pareto_max_concurrency = 512;
};

/// How a plan serves: one pool of replicas, or disaggregated prefill and decode pools.
enum class ServingMode { Aggregated, Disaggregated };
inline constexpr core::Word<ServingMode> kServingModeWordList[] = {
    {ServingMode::Aggregated, "aggregated", "agg"},
    {ServingMode::Disaggregated, "disaggregated", "disagg"},
};
inline constexpr core::Vocabulary<ServingMode> kServingModeWords{"serving mode", kServingModeWordList};

/// Result of one candidate.
struct PlanResult {
  std::string system;
  std::string layout;  ///< "tp8 ep8 dep"
  ServingMode mode = ServingMode::Aggregated;
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
double max_rate_under_slo(const IterationModel& model, const WorkloadSpec& workload, const Slo& slo, int requests,
                          ServeSummary* at_max = nullptr);

/// Evaluates one candidate for the request (aggregated; and disaggregated when asked and the
/// model fits a prefill and a decode replica).
std::vector<PlanResult> evaluate(const PlanCandidate& c, const PlanRequest& r, const collectives::CommCostFn& comm);

/// Closed-loop concurrency sweep of one candidate.
std::vector<ParetoPoint> pareto_sweep(const PlanCandidate& c, const PlanRequest& r,
                                      const collectives::CommCostFn& comm);

/// The points no other point beats on both axes, by tokens/s/user ascending.
std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points);

/// "tp8 ep8 dep" for a deployment.
std::string layout_name(const Deployment& d);

/// Layouts worth trying for `model` on a system with `domain_gpus` GPUs per NVLink domain:
/// TP (and EP = TP, with or without attention DP for MoE) over powers of two up to the domain
/// (and 72 on NVL72); only those why_invalid() accepts.
std::vector<Deployment> candidate_layouts(const Deployment& base);

}  // namespace fmsim::serving
