// Serving deployments on the shared cluster, from the serving model's steady state. Over a
// cluster's horizon (days to months) a deployment is not simulated request by request: the
// serving model gives, once per deployment, the largest rate one replica sustains under its SLO
// and its latency there (planner's max_rate_under_slo, what `fmsim serve` reports at steady
// state), and the cluster replays the deployment as a piecewise-constant offered rate, an
// autoscaler and replica units the scheduler places like any job. Within each interval between
// rate changes and scale events:
//   capacity = ready replicas x per-replica rate; while offered <= capacity and no request waits,
//   everything offered is served at the replicas' steady-state latency (within the SLO).
// When offered passes capacity the excess waits at the router in a FIFO queue (a fluid, followed
// by its frontier: see FluidRouter in serving_fleet.cpp), is served later, and a request that
// has waited the client's timeout gives up. A request served after a wait W is within the SLO
// while W <= the TTFT bound - the replica's p99 TTFT (its wait budget).
#pragma once

#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"

namespace fmsim::orchestration {

/// One replica as the serving model measured it at steady state (a typed value computed by
/// jobspec from the serving model, so orchestration does not link serving).
struct ReplicaCapacity {
  double rate_rps = 0;       ///< requests/s one replica sustains within its SLO (> 0)
  double ttft_p99_s = 0;     ///< at that rate
  double tpot_p99_s = 0;     ///< at that rate
  double input_tokens = 0;   ///< mean per request
  double output_tokens = 0;  ///< mean per request
  double cold_start_s = 0;   ///< the replica's weights from the storage tier onto its GPUs
  double ttft_slo_s = 0;     ///< the TTFT bound of its SLO; 0 = none (no wait is within it)
  int gpus = 1;              ///< per replica
};

/// The router's queue in front of a deployment's replicas.
struct RouterQueue {
  double timeout_s = 0;      ///< a request that has waited this long gives up; 0 = the excess is dropped
  double wait_budget_s = 0;  ///< a wait up to this keeps a request within the SLO
};

/// The autoscaler's settings.
struct Autoscaling {
  double target_utilisation = 0.7;  ///< of a replica's SLO rate, in (0, 1]
  double scale_up_delay_s = 60;
  double scale_down_delay_s = 600;  ///< >= scale_up_delay_s
  int min_replicas = 1;
  int max_replicas = 1;
};

/// Where a deployment's replicas run.
enum class FleetShare {
  Preempt,   ///< anywhere, in a partition of higher PriorityTier that preempts (requeues) training
  Reserved,  ///< only on nodes reserved for it, which training never gets
};
inline constexpr core::Word<FleetShare> kFleetShareWordList[] = {
    {FleetShare::Preempt, "preempt"},
    {FleetShare::Reserved, "reserved"},
};
inline constexpr core::Vocabulary<FleetShare> kFleetShareWords{"share", kFleetShareWordList};

/// A value of a piecewise-constant function of time, from `start_s` to the next step.
struct Step {
  double start_s = 0;
  double value = 0;
};

/// One serving deployment on the cluster.
struct ServingDeployment {
  std::string name;
  std::string label;  ///< model, engine, layout
  ReplicaCapacity replica;
  Autoscaling autoscaling;
  std::vector<Step> offered;  ///< requests/s; first step at 0, ascending start times
  FleetShare share = FleetShare::Preempt;
  int reserved_nodes = 0;      ///< Reserved: nodes set aside for it
  double queue_timeout_s = 0;  ///< RouterQueue::timeout_s
};

/// The router queue of `d`: its timeout, and the wait budget max(0, TTFT bound - p99 TTFT).
RouterQueue router_queue(const ServingDeployment& d);

/// How replicas map onto whole nodes.
struct ReplicaUnit {
  int nodes = 1;     ///< nodes per unit
  int replicas = 1;  ///< replicas per unit
};
/// gpus <= gpus_per_node: one node of gpus_per_node / gpus replicas; else one replica on
/// ceil(gpus / gpus_per_node) nodes.
ReplicaUnit replica_unit(int gpus, int gpus_per_node);

/// Replicas the autoscaler wants at offered rate `rate`: ceil(rate / (capacity x target)) within
/// [min, max].
int desired_replicas(double rate, const ReplicaCapacity& replica, const Autoscaling& scaling);

/// The replicas asked for over time (see the header comment), as steps from 0 to `horizon_s`.
std::vector<Step> requested_replicas(const ServingDeployment& d, double horizon_s);

/// The replica units of `d` as jobs in `partition` (ids from `first_id`), each marked with
/// `deployment` and kept for the run's (start, end) times.
std::vector<JobSpec> replica_jobs(const ServingDeployment& d, int deployment, const std::string& partition,
                                  int gpus_per_node, double horizon_s, int first_id);

/// The value of a step function at `t` (the first step's before it).
double step_value(const std::vector<Step>& steps, double t);

/// Offered and served over [0, horizon) from the offered rate, the replicas asked for and the
/// replicas ready (each a step function).
struct ServedTotals {
  double offered_requests = 0, served_requests = 0;
  double requests_within_slo = 0;  ///< served with no wait, or a wait within the budget
  double seconds_within_slo = 0;   ///< time over which an arrival would be within the SLO
  double queued_requests = 0;      ///< requests that waited: served after a wait, gave up, or waiting at the end
  double waited_served = 0;        ///< served after a wait
  double dropped_requests = 0;     ///< gave up after the queue timeout
  double backlog_at_end = 0;       ///< still waiting at the horizon
  double peak_backlog = 0;
  double wait_request_seconds = 0;  ///< the waits of the requests served after one, summed
  double replica_seconds = 0;       ///< ready replicas x time
  double peak_replicas = 0;
};
/// Offered against capacity = min(requested, ready) x per-replica rate in each interval, through
/// the router queue (the header comment). Served amounts per interval go to `served_in` (start,
/// seconds, requests) when given.
struct ServedInterval {
  double start_s = 0, seconds = 0, served = 0;
};
ServedTotals serve(const std::vector<Step>& offered, const std::vector<Step>& requested, const std::vector<Step>& ready,
                   double replica_rate_rps, double horizon_s, const RouterQueue& queue,
                   std::vector<ServedInterval>* served_in = nullptr);

/// What a deployment did over the replay.
struct DeploymentOutcome {
  std::string name, label;
  ServedTotals totals;
  double slo_attainment = 1;  ///< requests_within_slo / offered_requests
  double mean_wait_s = 0;     ///< of the requests served after a wait
  double output_tokens = 0;   ///< served x output tokens per request
  double gpu_hours = 0;       ///< nodes held by its units (cold starts included) x GPUs per node
  double cost_usd = 0;
  double cost_per_million_output_tokens = 0;
  double mean_replicas = 0;
  int scale_events = 0;          ///< changes of the replicas asked for
  int unit_starts = 0;           ///< starts of replica units (cold starts), restarts included
  std::vector<double> offered;   ///< mean requests/s per bucket
  std::vector<double> served;    ///< mean requests/s per bucket
  std::vector<double> replicas;  ///< mean ready replicas per bucket
};

/// Summarises deployment `index` of a replay whose jobs carry JobSpec::deployment.
DeploymentOutcome summarise_deployment(const ServingDeployment& d, int index, const std::vector<JobSpec>& specs,
                                       const SimulationResult& result, int gpus_per_node, double horizon_s,
                                       double price_per_node_hour, double bucket_s);

/// GPU-hours of the cluster by use over [0, span), and training's share of the work.
struct FleetUse {
  double serving_gpu_hours = 0, training_gpu_hours = 0, idle_gpu_hours = 0, down_gpu_hours = 0;
  double training_useful_gpu_hours = 0;
  double training_goodput = 0;  ///< training's useful node-seconds / scheduled node-seconds
  double training_tokens = 0;   ///< tokens of training jobs' kept work (jobs with a token count)
  int training_jobs = 0, training_completed = 0, training_requeues = 0;
  int preemptions = 0;  ///< jobs preempted (only training jobs are preemptable)
};
FleetUse fleet_use(const std::vector<JobSpec>& specs, const SimulationResult& result, int nodes, int gpus_per_node);

}  // namespace fmsim::orchestration
