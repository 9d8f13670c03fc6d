// `fmsim cluster` flag values into the cluster, scheduler configurations and workload it simulates.
#include "jobspec/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "config/cluster_loader.hpp"
#include "config/csv.hpp"
#include "config/deployments.hpp"
#include "config/flag_values.hpp"
#include "config/job_trace.hpp"
#include "config/kueue_scenario.hpp"
#include "config/reliability_loader.hpp"
#include "config/sacctmgr_dump.hpp"
#include "config/slurm_conf.hpp"
#include "config/slurm_reservations.hpp"
#include "config/topology_conf.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "jobspec/cluster_fleet.hpp"
#include "jobspec/training.hpp"

namespace fmsim::jobspec {
namespace {

namespace orch = fmsim::orchestration;

/// The training jobs of `jobs` attached to one step model over the layout; sets the run time and
/// time limit of those that have none from their ideal step time.
std::shared_ptr<const PlacedTraining> attach_training(std::vector<orch::JobSpec>& jobs,
                                                      const orch::ClusterLayout& layout,
                                                      const hardware::ClusterSpec& spec, const ClusterFlags& f,
                                                      const hardware::Catalog& catalog) {
  auto p = std::make_shared<PlacedTraining>();
  p->handle.assign(jobs.size(), -1);
  std::map<std::string, int> by_key;
  std::vector<long long> batch_tokens;  // per handle: gbs x seq
  std::optional<training::Calibration> calibration;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto& j = jobs[i];
    const auto& w = j.training;
    if (w.model.empty()) continue;
    if (!p->model) {
      p->layout = layout;
      p->model = std::make_unique<orch::PlacedStepModel>(p->layout, spec);
    }
    if (!calibration) calibration = load_stack_calibration("", "megatron");
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", w.model, w.tp, w.pp, w.cp, w.ep, w.gbs, w.seq, j.request.nodes);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      TrainingJobFlags t;  // `fmsim train`'s defaults but for these
      t.model = w.model;
      t.cluster = f.cluster;
      t.gpus = j.request.nodes * layout.gpus_per_node;
      std::tie(t.tp, t.pp, t.cp, t.ep, t.gbs, t.seq) = std::tie(w.tp, w.pp, w.cp, w.ep, w.gbs, w.seq);
      training::TrainingJob job;
      try {
        job = make_training_job(t, catalog);
      } catch (const core::InputError& e) {
        throw core::InputError::flag(
            f.trace.empty() ? "--job-trace" : f.trace,
            fmt::format("job {} ({} on {} nodes): {}: {}", j.id, w.model, j.request.nodes, e.field(), e.message()));
      }
      const int h = p->model->add_job(job, *calibration);
      const double ideal = p->model->ideal_step_time(h);
      if (ideal <= 0)
        throw core::InputError::flag(
            f.trace, fmt::format("job {}: {} with tp {} pp {} cp {} ep {} on {} nodes has no feasible step", j.id,
                                 w.model, w.tp, w.pp, w.cp, w.ep, j.request.nodes));
      p->ideal_step.push_back(ideal);
      p->label.push_back(fmt::format("{} tp{} pp{}{}{} gbs {}", w.model, w.tp, w.pp,
                                     w.cp > 1 ? fmt::format(" cp{}", w.cp) : "",
                                     w.ep > 1 ? fmt::format(" ep{}", w.ep) : "", job.layout.global_batch));
      batch_tokens.push_back(job.layout.global_batch * job.seq_len);
      it = by_key.emplace(key, h).first;
    }
    const int h = it->second;
    p->handle[i] = h;
    const double steps = std::ceil(w.tokens / static_cast<double>(batch_tokens[static_cast<std::size_t>(h)]));
    if (j.run_s <= 0) j.run_s = std::max(1.0, steps * p->ideal_step[static_cast<std::size_t>(h)]);
    if (j.time_limit_s <= 0) j.time_limit_s = std::ceil(j.run_s * f.limit_factor / 60.0) * 60.0;
  }
  return p;
}

/// --queues TEAM=NODES[:BORROW] entries.
orch::ClusterQueueConfig parse_cluster_queue(const std::string& q) {
  const auto eq = q.find('=');
  orch::ClusterQueueConfig c;
  try {
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("");
    c.name = q.substr(0, eq);
    const std::string rest = q.substr(eq + 1);
    const auto colon = rest.find(':');
    std::size_t used = 0;
    c.nominal_nodes = std::stoi(rest.substr(0, colon), &used);
    if (used != rest.substr(0, colon).size() || c.nominal_nodes < 0) throw std::invalid_argument("");
    if (colon != std::string::npos) {
      c.borrowing_limit = std::stoi(rest.substr(colon + 1), &used);
      if (used != rest.size() - colon - 1 || c.borrowing_limit < 0) throw std::invalid_argument("");
    }
  } catch (const std::exception&) {
    throw core::InputError::flag("--queues",
                                 fmt::format("'{}' is not TEAM=NODES or TEAM=NODES:BORROW (whole numbers)", q));
  }
  return c;
}

void check_block_placement(orch::Placement placement, const orch::ClusterLayout& layout, const std::string& flag,
                           const std::string& why) {
  if (placement == orch::Placement::Block && layout.block_size == 0) throw core::InputError::flag(flag, why);
}

}  // namespace

ClusterPolicy apply_compare_entry(ClusterPolicy v, const std::string& entry, const orch::ClusterLayout& layout) {
  v.name = entry;
  const auto eq = entry.find('=');
  auto refuse = [&] {
    throw core::InputError::flag("--compare",
                                 fmt::format("'{}' is not a policy; use fifo, backfill, basic, multifactor, "
                                             "consecutive, tree, block, spares=N, bf_window=MIN, "
                                             "bf_max_job_test=N or bf_interval=S",
                                             entry));
  };
  if (eq == std::string::npos) {
    if (const auto type = orch::kSchedulerTypeWords.parse(entry)) {
      v.config.backfill = *type == orch::SchedulerType::Backfill;
    } else if (const auto priority = orch::kPriorityTypeWords.parse(entry)) {
      v.config.multifactor = *priority == orch::PriorityType::Multifactor;
    } else if (const auto placement = orch::kPlacementWords.parse(entry)) {
      v.config.placement = *placement;
      check_block_placement(v.config.placement, layout, "--compare",
                            "block placement needs NVLink blocks (an UltraServer cluster)");
    } else {
      refuse();
    }
    return v;
  }
  const auto knob = kCompareKnobWords.parse(entry.substr(0, eq));
  if (!knob) refuse();
  const std::string key = entry.substr(0, eq);
  const std::string value = entry.substr(eq + 1);
  auto int_value = [&](int lo, int hi) {
    try {
      std::size_t used = 0;
      const int n = std::stoi(value, &used);
      if (used == value.size() && n >= lo && n <= hi) return n;
    } catch (const std::exception&) {}
    throw core::InputError::flag(
        "--compare",
        fmt::format("{}: '{}' is out of range; allowed: a whole number from {} to {}", key, value, lo, hi));
  };
  constexpr int kYearMinutes = 525'960;
  switch (*knob) {
    case CompareKnob::Spares:
      v.spares = int_value(0, layout.nodes());
      v.options.failures.spares = v.spares;
      break;
    case CompareKnob::BfWindow: v.config.bf_window_s = int_value(1, kYearMinutes) * 60.0; break;
    case CompareKnob::BfMaxJobTest: v.config.bf_max_job_test = int_value(1, orch::kMaxTraceJobs); break;
    case CompareKnob::BfInterval: v.config.bf_interval_s = int_value(1, kYearMinutes * 60); break;
  }
  return v;
}

ClusterJob resolve_cluster_job(const ClusterFlags& f, const hardware::Catalog& catalog) {
  ClusterJob c;
  c.k8s = config::word_flag(orch::kSchedulerKindWords, f.scheduler, "--scheduler") == orch::SchedulerKind::Kueue;
  if (!c.k8s && !f.queues.empty()) throw core::InputError::flag("--queues", "applies to --scheduler k8s only");
  c.spec = config::parse_cluster(catalog, f.cluster);
  // A Kueue performance-test scenario brings its ClusterQueues, its workloads and its cluster: one
  // node per CPU of quota (Kueue's test has no nodes; quota alone admits), of --cluster's system.
  std::optional<config::KueueScenario> scenario;
  if (!f.kueue_scenario.empty()) {
    if (!c.k8s) throw core::InputError::flag("--kueue-scenario", "applies to --scheduler k8s only");
    if (!f.queues.empty()) throw core::InputError::flag("--queues", "give --queues or --kueue-scenario, not both");
    if (!f.trace.empty() || f.synthetic > 0)
      throw core::InputError::flag("--kueue-scenario", "brings its own workloads: give no --job-trace or --synthetic");
    if (c.spec.system.nodes != 1)
      throw core::InputError::flag("--cluster", fmt::format("--kueue-scenario needs a system of single nodes; {} is "
                                                            "{} nodes a unit",
                                                            c.spec.system.name, c.spec.system.nodes));
    scenario = config::load_kueue_scenario(f.kueue_scenario);
    c.spec.count = scenario->nodes;
  }
  // Node selection looks at every node for every job it places: 10,000 nodes simulate in 2 s,
  // 50,000 in 30 s, 500,000 ran out of memory. Checked before the layout is built.
  // A Kueue scenario places consecutively (its test has no topology), which looks at far fewer nodes.
  const int kMaxNodes = scenario ? 100'000 : 20'000;
  if (c.spec.nodes() > kMaxNodes)
    throw core::InputError::flag("--cluster",
                                 fmt::format("{} is {} nodes; allowed: at most {} nodes in the cluster twin", f.cluster,
                                             c.spec.nodes(), core::format_thousands(kMaxNodes)));
  auto& layout = c.layout;
  layout = orch::layout_from_cluster(c.spec);
  orch::SlurmConfig base;
  base.placement = layout.block_size > 0 ? orch::Placement::Block : orch::Placement::Tree;
  c.conf_note = "Slurm 22.05 defaults";
  if (!f.slurm_conf.empty()) {
    const auto file = config::parse_slurm_conf(config::read_text_file(f.slurm_conf, "--slurm-conf"), f.slurm_conf);
    base = file.config;
    c.conf_note = f.slurm_conf;
    if (!file.node_names.empty()) {
      if (static_cast<int>(file.node_names.size()) != layout.nodes())
        throw core::InputError::flag("--slurm-conf",
                                     fmt::format("{} defines {} nodes but --cluster {} has {}", f.slurm_conf,
                                                 file.node_names.size(), f.cluster, layout.nodes()));
      layout.node_names = file.node_names;  // the catalog's switches and blocks, the file's names
    }
    if (file.topology_plugin.empty()) base.placement = orch::Placement::Consecutive;
  }
  if (!f.topology_conf.empty())
    config::apply_topology_conf(layout, config::read_text_file(f.topology_conf, "--topology-conf"), f.topology_conf);
  if (!f.associations.empty())
    base.associations =
        config::parse_sacctmgr_dump(config::read_text_file(f.associations, "--associations"), f.associations);
  // Reservations (Capacity Blocks add their nodes to the layout, so before the workload).
  const int cluster_nodes = layout.nodes();  // without Capacity Blocks: what synthetic jobs are sized to
  {
    std::string text =
        f.reservations_file.empty() ? std::string() : config::read_text_file(f.reservations_file, "--reservations");
    const std::string source = f.reservations_file.empty() ? std::string("--reservation") : f.reservations_file;
    if (!text.empty() && text.back() != '\n') text += '\n';
    for (const auto& line : f.reservations) text += line + "\n";
    if (!text.empty()) base.reservations = config::parse_reservations(text, source, layout);
  }
  if (scenario) base.placement = orch::Placement::Consecutive;  // quota alone admits in Kueue's test
  if (!f.placement.empty()) base.placement = config::word_flag(orch::kPlacementWords, f.placement, "--placement");
  check_block_placement(base.placement, layout, "--placement",
                        "block placement needs NVLink blocks (an UltraServer cluster or BlockName lines)");
  if (!f.policy.empty())
    base.backfill = config::word_flag(orch::kSchedulerTypeWords, f.policy, "--policy") == orch::SchedulerType::Backfill;

  // Serving deployments: their partitions before the workload (reserved nodes shrink the batch one).
  std::vector<config::DeploymentEntry> entries;
  if (!f.deployments_file.empty()) entries = config::load_deployments_file(f.deployments_file);
  for (const auto& d : f.deployments) entries.push_back(config::parse_deployment_flag(d));
  const std::string fleet_source = f.deployments_file.empty() ? "--deployment" : "--deployments";
  std::vector<std::string> serving_partitions;
  int batch_nodes = cluster_nodes;
  c.training_alone = base;
  if (!entries.empty()) {
    if (c.k8s) throw core::InputError::flag(fleet_source, "serving deployments run under --scheduler slurm only");
    config::checked_real(f.days, 0, 3652.5, "--days", "days");
    if (f.days <= 0)
      throw core::InputError::flag("--days", "serving deployments need a horizon: --days N (e.g. 1, 30)");
    c.fleet_horizon_s = f.days * 86400.0;
    c.deployments = resolve_deployments(entries, c.spec, catalog, c.fleet_horizon_s);
    serving_partitions = add_serving_partitions(base, c.deployments, layout, fleet_source);
    for (const auto& d : c.deployments)
      if (d.share == orch::FleetShare::Reserved) batch_nodes -= d.reserved_nodes;
  }

  // The workload.
  auto& jobs = c.jobs;
  config::checked_real(f.limit_factor, 1, 1000, "--limit-factor", "x the run time");
  config::checked_whole(f.synthetic, 0, orch::kMaxTraceJobs, "--synthetic", "jobs (0: the default 1,000)");
  if (!f.trace.empty() && f.synthetic > 0)
    throw core::InputError::flag("--synthetic", "give --trace or --synthetic, not both");
  // Words of a mode are checked whether or not the mode is on: `--queueing nan` without
  // --scheduler k8s and `--trace-map nan` without --job-trace ran (exit 0), ignored.
  const auto queueing = config::word_flag(orch::kKueueQueueingWords, f.queueing, "--queueing");
  if (f.trace.empty() && !f.trace_map.empty())
    throw core::InputError::flag("--trace-map", "maps the columns of --job-trace FILE; give --job-trace");
  if (scenario) {
    jobs = scenario->jobs;
    c.workload_note = fmt::format("{} workloads of Kueue's scheduler performance test ({}), {} ClusterQueues",
                                  jobs.size(), f.kueue_scenario, scenario->queues.size());
  } else if (!f.trace.empty()) {
    config::TraceOptions topt;
    topt.gpus_per_node = layout.gpus_per_node;
    topt.limit_factor = f.limit_factor;
    topt.max_nodes = layout.nodes();
    const int part = base.partition_index("");
    if (part >= 0) topt.max_limit_s = base.partitions[static_cast<std::size_t>(part)].max_time_s;
    for (const auto& m : f.trace_map) {
      const auto eq = m.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
        throw core::InputError::flag("--trace-map", fmt::format("'{}' is not FIELD=COLUMN", m));
      topt.column_for[m.substr(0, eq)] = m.substr(eq + 1);
    }
    jobs = config::parse_trace_csv(config::read_text_file(f.trace, "--job-trace"), f.trace, topt);
    c.workload_note = fmt::format("{} jobs from {}", jobs.size(), f.trace);
  } else if (!entries.empty() && f.synthetic == 0) {
    c.workload_note = "no batch jobs";
  } else {
    orch::SyntheticWorkloadSpec w;
    w.jobs = f.synthetic > 0 ? f.synthetic : 1000;
    w.mean_interarrival_s = config::parse_duration_flag(f.arrival, "--arrival").value();
    if (w.mean_interarrival_s <= 0) throw core::InputError::flag("--arrival", "must be more than 0");
    w.seed = f.seed;
    jobs = orch::generate_workload(w, batch_nodes);
    c.workload_note = fmt::format(
        "{} synthetic jobs (pre-training 10%, fine-tuning 30%, evaluation 60%), one every {} on "
        "average, seed {}",
        w.jobs, f.arrival, f.seed);
  }
  if (!f.checkpoint.empty()) {
    const double s = config::parse_duration_flag(f.checkpoint, "--checkpoint-interval").value();
    for (auto& j : jobs)
      if (j.checkpoint_interval_s <= 0) j.checkpoint_interval_s = s;
  }
  c.batch_jobs = jobs.size();
  if (!c.deployments.empty()) {
    int next_id = 0;
    for (const auto& j : jobs) next_id = std::max(next_id, j.id);
    for (std::size_t i = 0; i < c.deployments.size(); ++i) {
      const auto units = orch::replica_jobs(c.deployments[i], static_cast<int>(i), serving_partitions[i],
                                            layout.gpus_per_node, c.fleet_horizon_s, next_id + 1);
      next_id += static_cast<int>(units.size());
      jobs.insert(jobs.end(), units.begin(), units.end());
    }
    c.workload_note += fmt::format("; {} serving deployment{} ({} replica-unit jobs)", c.deployments.size(),
                                   c.deployments.size() == 1 ? "" : "s", jobs.size() - c.batch_jobs);
  }
  c.placed = attach_training(jobs, layout, c.spec, f, catalog);
  if (!f.sigterm_checkpoint.empty()) {
    const double s = config::parse_duration_flag(f.sigterm_checkpoint, "--sigterm-checkpoint").value();
    for (auto& j : jobs) j.sigterm_checkpoint_s = s;
  }

  ClusterPolicy first;
  first.name = base.backfill ? "backfill" : "fifo";
  first.config = base;
  auto& o = first.options;
  config::checked_real(f.days, 0, 3652.5, "--days", "days (10 years; 0: until every job ends)");
  o.horizon_s = f.days > 0 ? f.days * 86400.0 : 0.0;
  if (!f.node_failure_rate.empty()) {
    const auto data = config::load_failure_data();
    o.failures.rate_per_node_hour = config::parse_node_failure_rate(data, f.node_failure_rate, "--node-failure-rate");
  }
  config::checked_whole(f.spares, 0, cluster_nodes, "--spares", fmt::format("nodes (the cluster's {})", f.cluster));
  o.failures.spares = f.spares;
  first.spares = f.spares;
  o.failures.detect_s = config::parse_duration_flag(f.detect, "--detect").value();
  o.failures.repair_s = config::parse_duration_flag(f.repair, "--repair").value();
  o.failures.replace_s = config::parse_duration_flag(f.replace, "--replace").value();
  o.failures.restart_s = config::parse_duration_flag(f.restart, "--restart").value();
  o.failures.seed = f.seed;
  if (c.k8s) {
    auto& kq = o.kueue;
    kq.enabled = true;
    kq.strict_fifo = queueing == orch::KueueQueueing::StrictFifo;
    kq.reclaim_within_cohort = kq.within_cluster_queue = !f.no_preemption;
    for (const auto& q : f.queues) kq.queues.push_back(parse_cluster_queue(q));
    if (scenario) {
      kq.queues = scenario->queues;
      // An evicted workload runs again at once (the test's runner restarts its pod's clock), unless
      // --restart says otherwise.
      if (f.restart == ClusterFlags{}.restart) o.failures.restart_s = 0;
    }
    first.name = "kueue";
  }
  o.utilisation_bucket_s = std::max(60.0, (o.horizon_s > 0 ? o.horizon_s : 30 * 86400.0) / 720.0);
  if (c.placed->model) {
    std::shared_ptr<const PlacedTraining> placed = c.placed;
    o.slowdown = [placed](int job, const std::vector<int>& nodes) {
      const int h = placed->handle[static_cast<std::size_t>(job)];
      if (h < 0) return 1.0;
      const double t = placed->model->step_time(h, nodes);
      return t > 0 ? t / placed->ideal_step[static_cast<std::size_t>(h)] : 1.0;
    };
  }
  c.policies.push_back(first);
  for (const auto& entry : f.compare) c.policies.push_back(apply_compare_entry(first, entry, layout));
  // Jobs that could never run are the input's fault, named by the flag that gave them.
  for (const auto& v : c.policies)
    if (const auto problem = orch::find_workload_problem(layout, v.config, jobs, v.options)) {
      switch (problem->input) {
        case orch::WorkloadInput::Cluster: throw core::InputError::flag("--cluster", problem->message);
        case orch::WorkloadInput::Jobs: throw core::InputError::flag("--trace", problem->message);
        case orch::WorkloadInput::Queues: throw core::InputError::flag("--queues", problem->message);
      }
    }
  return c;
}

}  // namespace fmsim::jobspec
