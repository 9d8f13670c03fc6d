// `fmsim cluster`'s serving deployments resolved against the catalog and the serving model.
#include "jobspec/cluster_fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "collectives/comm_cost.hpp"
#include "core/error.hpp"
#include "jobspec/serving.hpp"
#include "planner/serving_plan.hpp"
#include "serving/iteration_model.hpp"

namespace fmsim::jobspec {
namespace {

namespace orch = fmsim::orchestration;

/// Requests per probe of the rate search (what `fmsim plan-serve` uses by default).
constexpr int kProbeRequests = 300;

[[noreturn]] void fail_entry(const config::DeploymentEntry& e, const std::string& field, const std::string& message) {
  if (e.line > 0) throw core::InputError(e.source, e.line, field, message);
  throw core::InputError::flag(e.source, field + ": " + message);
}

}  // namespace

std::vector<orch::Step> offered_rate(const config::DeploymentEntry& e, double horizon_s) {
  switch (e.shape) {
    case config::RateShape::Constant: return {{0.0, e.rate}};
    case config::RateShape::Csv: return e.rate_steps;
    case config::RateShape::Diurnal: break;
  }
  // rate(h) = peak x (trough + (1 - trough) x (1 + cos(2 pi (h - peak_hour) / 24)) / 2), h the hour of day.
  std::vector<orch::Step> steps;
  for (double t = 0; t < horizon_s; t += kDiurnalStepS) {
    const double h = std::fmod((t + kDiurnalStepS / 2) / 3600.0, 24.0);
    const double wave = (1 + std::cos(2 * std::numbers::pi * (h - e.peak_hour) / 24.0)) / 2;
    steps.push_back({t, e.rate * (e.trough + (1 - e.trough) * wave)});
  }
  if (steps.empty()) steps.push_back({0.0, e.rate});
  return steps;
}

std::vector<orch::ServingDeployment> resolve_deployments(const std::vector<config::DeploymentEntry>& entries,
                                                         const hardware::ClusterSpec& spec,
                                                         const hardware::Catalog& catalog, double horizon_s) {
  std::vector<orch::ServingDeployment> out;
  std::map<std::string, orch::ReplicaCapacity> by_key;  // one rate search per distinct replica
  std::map<std::string, int> names;
  for (const auto& e : entries) {
    if (names[e.name]++ > 0) fail_entry(e, "name", fmt::format("'{}' is given twice; names must differ", e.name));
    ServingFlags f;
    f.model = e.model;
    f.cluster = spec.system.name;
    f.tp = e.tp;
    f.engine = e.engine;
    f.precision = e.precision;
    f.isl = e.isl;
    f.osl = e.osl;
    f.slo_ttft = e.slo_ttft;
    f.slo_tpot = e.slo_tpot;
    f.num_requests = kProbeRequests;
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", e.model, e.engine, e.precision, e.tp, e.isl,
                                        e.osl, e.slo_ttft, e.slo_tpot, e.cold_start);
    orch::ServingDeployment d;
    d.name = e.name;
    d.label = fmt::format("{} {} tp{}", e.model, e.engine, e.tp);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ServingSetup s;
      ColdStart cold;
      try {
        s = make_serving_setup(f, catalog);
        cold = estimate_cold_start(e.cold_start, s.deployment, catalog);
      } catch (const core::InputError& err) {
        std::string field = err.field();
        if (field.rfind("--", 0) == 0) field = field.substr(2);
        fail_entry(e, field.empty() ? "model" : field, err.message());
      }
      const serving::IterationModel model(s.deployment, collectives::make_comm_cost(s.deployment.cluster));
      serving::ServeSummary at;
      const double rate = planner::max_rate_under_slo(model, s.workload, s.slo, kProbeRequests, &at);
      if (rate <= 0)
        fail_entry(e, e.slo_ttft.empty() && e.slo_tpot.empty() ? "tp" : "slo-ttft",
                   fmt::format("{} on {} GPUs of {} meets its SLO at no rate (does not fit, or misses it at 1% of its "
                               "saturated rate)",
                               e.model, s.deployment.gpus(), spec.system.name));
      orch::ReplicaCapacity c;
      c.rate_rps = rate;
      c.ttft_p99_s = at.ttft.p99;
      c.tpot_p99_s = at.tpot.p99;
      c.input_tokens = e.isl;
      c.output_tokens = e.osl;
      c.cold_start_s = cold.seconds;
      c.ttft_slo_s = s.slo.ttft.value();
      c.gpus = s.deployment.gpus();
      it = by_key.emplace(key, c).first;
    }
    d.replica = it->second;
    d.autoscaling = e.autoscaling;
    d.offered = offered_rate(e, horizon_s);
    d.share = e.share;
    d.reserved_nodes = e.nodes;
    d.queue_timeout_s = e.queue_timeout_s;
    if (d.replica.gpus > spec.gpus())
      fail_entry(e, "tp", fmt::format("{} GPUs a replica; the cluster has {}", d.replica.gpus, spec.gpus()));
    double peak = 0;
    for (const auto& s : d.offered) peak = std::max(peak, s.value);
    // The most replicas the nodes it may use can ever hold (whole-node units): asking for more
    // only queues units that never start.
    const auto unit = orch::replica_unit(d.replica.gpus, spec.gpus_per_node());
    const int usable_nodes =
        d.share == orch::FleetShare::Reserved ? std::min(d.reserved_nodes, spec.nodes()) : spec.nodes();
    const int room = std::max(1, usable_nodes / std::max(1, unit.nodes) * unit.replicas);
    if (d.autoscaling.min_replicas > room)
      fail_entry(e, "min-replicas",
                 fmt::format("{} replicas of {} GPUs; its {} nodes hold at most {}", d.autoscaling.min_replicas,
                             d.replica.gpus, usable_nodes, room));
    if (d.autoscaling.max_replicas <= 0) {
      const double need = std::ceil(peak / (d.replica.rate_rps * d.autoscaling.target_utilisation) - 1e-9);
      d.autoscaling.max_replicas = static_cast<int>(std::clamp(need, 1.0, static_cast<double>(room)));
      d.autoscaling.max_replicas = std::max(d.autoscaling.min_replicas, d.autoscaling.max_replicas);
    }
    d.autoscaling.max_replicas = std::min(d.autoscaling.max_replicas, room);
    out.push_back(d);
  }
  return out;
}

std::vector<std::string> add_serving_partitions(orch::SlurmConfig& config,
                                                const std::vector<orch::ServingDeployment>& deployments,
                                                const orch::ClusterLayout& layout, const std::string& source) {
  const int n = layout.nodes();
  if (config.partitions.empty()) {
    orch::PartitionConfig batch;
    batch.name = "batch";
    batch.is_default = true;
    config.partitions.push_back(batch);
  }
  int top_tier = 1;
  for (const auto& p : config.partitions) top_tier = std::max(top_tier, p.priority_tier);
  std::vector<std::string> names(deployments.size());
  std::vector<char> reserved(static_cast<std::size_t>(n), 0);
  int next = n;  // reserved nodes from the end of the cluster
  std::vector<orch::PartitionConfig> added;
  bool shared = false;
  for (std::size_t i = 0; i < deployments.size(); ++i) {
    const auto& d = deployments[i];
    if (d.share == orch::FleetShare::Preempt) {
      names[i] = "serving";
      shared = true;
      continue;
    }
    if (d.reserved_nodes > next)
      throw core::InputError::flag(source, fmt::format("{}: nodes: {} reserved nodes do not fit; {} of the cluster's "
                                                       "{} are left",
                                                       d.name, d.reserved_nodes, next, n));
    orch::PartitionConfig p;
    p.name = "serving-" + d.name;
    p.priority_tier = top_tier + 1;
    p.preempt_mode = orch::PreemptMode::Off;
    for (int k = next - d.reserved_nodes; k < next; ++k) {
      p.nodes.push_back(k);
      reserved[static_cast<std::size_t>(k)] = 1;
    }
    next -= d.reserved_nodes;
    names[i] = p.name;
    added.push_back(p);
  }
  if (next < n) {
    for (auto& p : config.partitions) {
      if (p.nodes.empty())
        for (int k = 0; k < n; ++k) p.nodes.push_back(k);
      std::erase_if(p.nodes, [&](int k) { return reserved[static_cast<std::size_t>(k)] != 0; });
      if (p.nodes.empty())
        throw core::InputError::flag(source, fmt::format("the reserved nodes leave partition {} no nodes", p.name));
    }
  }
  if (shared) {
    if (config.preempt_type == orch::PreemptType::Qos)
      throw core::InputError::flag(source,
                                   "share preempt uses preempt/partition_prio; the --slurm-conf sets "
                                   "PreemptType=preempt/qos (use share reserved, or partition_prio)");
    config.preempt_type = orch::PreemptType::PartitionPrio;
    if (config.preempt_mode == orch::PreemptMode::Off) config.preempt_mode = orch::PreemptMode::Requeue;
    orch::PartitionConfig p;
    p.name = "serving";
    p.priority_tier = top_tier + 1;
    p.preempt_mode = orch::PreemptMode::Off;
    if (next < n)
      for (int k = 0; k < next; ++k) p.nodes.push_back(k);
    added.insert(added.begin(), p);
  }
  for (auto& p : added) config.partitions.push_back(std::move(p));
  return names;
}

}  // namespace fmsim::jobspec
