// fmsim cluster: many jobs on one shared cluster through fmsim's twin of Slurm's scheduler:
// queue waits, starts, ends, placements, requeues and lost GPU-hours per job; utilisation, queue
// length, wait by job size, fragmentation, goodput and cost for the cluster; policies side by side.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/text_table.hpp"
#include "config/cluster_loader.hpp"
#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "jobspec/training.hpp"
#include "orchestration/cluster_metrics.hpp"
#include "orchestration/fair_share.hpp"
#include "orchestration/placed_training.hpp"
#include "orchestration/reservation.hpp"
#include "orchestration/slurm_config.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/trace.hpp"
#include "orchestration/workload.hpp"
#include "report/document.hpp"

namespace fmsim::cli {
namespace {

namespace orch = fmsim::orchestration;
using nlohmann::json;

struct ClusterFlags {
  std::string cluster = "p5en.48xlarge:128";
  std::string scheduler = "slurm";
  std::string slurm_conf;
  std::string topology_conf;
  std::string placement;  ///< consecutive | tree | block (overrides TopologyPlugin)
  std::string policy;     ///< backfill | fifo (overrides SchedulerType)
  std::string trace;
  std::vector<std::string> trace_map;
  double limit_factor = 2.0;
  int synthetic = 0;
  std::string arrival = "5m";
  std::uint64_t seed = 1;
  double days = 0;
  std::vector<std::string> compare;
  std::string node_failure_rate;
  int spares = 0;
  std::string detect = "1m", repair = "48h", replace = "10m", restart = "3m";
  std::string checkpoint;  ///< checkpoint interval for jobs without one
  bool json = false;
  std::string report;
  std::string jobs_csv;
  std::string write_trace;
  std::vector<std::string> queues;  ///< k8s: TEAM=NODES[:BORROW]
  std::string queueing = "best-effort";
  bool no_preemption = false;
  std::string associations;               ///< sacctmgr dump (accounts, users, Fairshare=)
  std::string reservations_file;          ///< reservation lines (scontrol syntax)
  std::vector<std::string> reservations;  ///< --reservation LINE, repeatable
  std::string sigterm_checkpoint;         ///< jobs write a checkpoint on SIGTERM in this long
  MetricsFlags metrics;                   ///< --metrics-out DIR: the Slurm exporter's series
};

struct Variant {
  std::string name;
  orch::SlurmConfig config;
  orch::SimulationOptions options;
  int spares = 0;
};

std::string read_text(const std::string& path, const std::string& flag) { return read_file(path, flag); }

orch::Placement parse_placement(const std::string& text, const std::string& flag) {
  if (text == "consecutive" || text == "none") return orch::Placement::Consecutive;
  if (text == "tree") return orch::Placement::Tree;
  if (text == "block") return orch::Placement::Block;
  throw core::InputError::flag(flag, fmt::format("'{}' is not allowed; use consecutive, tree or block", text));
}

std::string placement_name(orch::Placement p) {
  switch (p) {
    case orch::Placement::Tree: return "topology/tree";
    case orch::Placement::Block: return "topology/block";
    case orch::Placement::Consecutive: break;
  }
  return "topology/none";
}

/// One --compare entry applied on top of the base: fifo, backfill, consecutive, tree, block,
/// spares=N, bf_window=MIN, bf_max_job_test=N, multifactor, basic.
Variant apply_variant(Variant v, const std::string& entry, const orch::ClusterLayout& layout) {
  v.name = entry;
  const auto eq = entry.find('=');
  const std::string key = entry.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
  auto int_value = [&](int lo) {
    try {
      std::size_t used = 0;
      const int n = std::stoi(value, &used);
      if (used == value.size() && n >= lo) return n;
    } catch (const std::exception&) {}
    throw core::InputError::flag("--compare",
                                 fmt::format("{}: '{}' is not a whole number of at least {}", key, value, lo));
  };
  if (entry == "fifo")
    v.config.backfill = false;
  else if (entry == "backfill")
    v.config.backfill = true;
  else if (entry == "basic")
    v.config.multifactor = false;
  else if (entry == "multifactor")
    v.config.multifactor = true;
  else if (entry == "consecutive" || entry == "tree" || entry == "block") {
    v.config.placement = parse_placement(entry, "--compare");
    if (v.config.placement == orch::Placement::Block && layout.block_size == 0)
      throw core::InputError::flag("--compare", "block placement needs NVLink blocks (an UltraServer cluster)");
  } else if (key == "spares") {
    v.spares = int_value(0);
    v.options.failures.spares = v.spares;
  } else if (key == "bf_window")
    v.config.bf_window_s = int_value(1) * 60.0;
  else if (key == "bf_max_job_test")
    v.config.bf_max_job_test = int_value(1);
  else if (key == "bf_interval")
    v.config.bf_interval_s = int_value(1);
  else
    throw core::InputError::flag("--compare",
                                 fmt::format("'{}' is not a policy; use fifo, backfill, basic, multifactor, "
                                             "consecutive, tree, block, spares=N, bf_window=MIN, "
                                             "bf_max_job_test=N or bf_interval=S",
                                             entry));
  return v;
}

/// Training jobs of the workload (trace rows with a model): each distinct (model, layout, batch,
/// sequence, nodes) gets one step model; its ideal step time (on the best nodes) sets the job's
/// run time, and the simulator asks for its slowdown on the nodes each start gets.
struct PlacedTraining {
  std::unique_ptr<orch::PlacedStepModel> model;
  std::vector<int> handle;         ///< per job (input order); -1 = not a training job
  std::vector<double> ideal_step;  ///< per handle, s
  std::vector<std::string> label;  ///< per handle: model and layout
};

PlacedTraining attach_training(std::vector<orch::JobSpec>& jobs, const orch::ClusterLayout& layout,
                               const hardware::ClusterSpec& spec, const ClusterFlags& f, Context& ctx) {
  PlacedTraining p;
  p.handle.assign(jobs.size(), -1);
  std::map<std::string, int> by_key;
  std::vector<long long> batch_tokens;  // per handle: gbs x seq
  std::optional<training::Calibration> calibration;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto& j = jobs[i];
    const auto& w = j.training;
    if (w.model.empty()) continue;
    if (!p.model) p.model = std::make_unique<orch::PlacedStepModel>(layout, spec);
    if (!calibration) calibration = jobspec::load_stack_calibration("", "megatron");
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", w.model, w.tp, w.pp, w.cp, w.ep, w.gbs, w.seq, j.request.nodes);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      jobspec::TrainingJobFlags t;  // `fmsim train`'s defaults but for these
      t.model = w.model;
      t.cluster = f.cluster;
      t.gpus = j.request.nodes * layout.gpus_per_node;
      std::tie(t.tp, t.pp, t.cp, t.ep, t.gbs, t.seq) = std::tie(w.tp, w.pp, w.cp, w.ep, w.gbs, w.seq);
      training::TrainingJob job;
      try {
        job = jobspec::make_training_job(t, ctx.catalog());
      } catch (const core::InputError& e) {
        throw core::InputError::flag(
            f.trace.empty() ? "--trace" : f.trace,
            fmt::format("job {} ({} on {} nodes): {}: {}", j.id, w.model, j.request.nodes, e.field(), e.message()));
      }
      const int h = p.model->add_job(job, *calibration);
      const double ideal = p.model->ideal_step_time(h);
      if (ideal <= 0)
        throw core::InputError::flag(
            f.trace, fmt::format("job {}: {} with tp {} pp {} cp {} ep {} on {} nodes has no feasible step", j.id,
                                 w.model, w.tp, w.pp, w.cp, w.ep, j.request.nodes));
      p.ideal_step.push_back(ideal);
      p.label.push_back(fmt::format("{} tp{} pp{}{}{} gbs {}", w.model, w.tp, w.pp,
                                    w.cp > 1 ? fmt::format(" cp{}", w.cp) : "",
                                    w.ep > 1 ? fmt::format(" ep{}", w.ep) : "", job.layout.global_batch));
      batch_tokens.push_back(job.layout.global_batch * job.seq_len);
      it = by_key.emplace(key, h).first;
    }
    const int h = it->second;
    p.handle[i] = h;
    const double steps = std::ceil(w.tokens / static_cast<double>(batch_tokens[static_cast<std::size_t>(h)]));
    if (j.run_s <= 0) j.run_s = std::max(1.0, steps * p.ideal_step[static_cast<std::size_t>(h)]);
    if (j.time_limit_s <= 0) j.time_limit_s = std::ceil(j.run_s * f.limit_factor / 60.0) * 60.0;
  }
  return p;
}

std::string hours(double s) {
  if (s < 60) return fmt::format("{:.0f} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 86400 * 2) return fmt::format("{:.2f} h", s / 3600);
  return fmt::format("{:.2f} d", s / 86400);
}

json summary_json(const orch::ClusterSummary& s) {
  json by_size = json::array();
  for (const auto& b : s.wait_by_size)
    if (b.jobs > 0)
      by_size.push_back(
          {{"nodes", b.label}, {"jobs", b.jobs}, {"mean_wait_s", b.mean_wait_s}, {"p95_wait_s", b.p95_wait_s}});
  return {{"jobs", s.jobs},
          {"started", s.started},
          {"completed", s.completed},
          {"timeout", s.timeout},
          {"node_fail", s.node_fail},
          {"preempted", s.preempted},
          {"unfinished", s.unfinished},
          {"backfilled", s.backfilled},
          {"requeues", s.requeues},
          {"span_s", s.span_s},
          {"utilisation", s.utilisation},
          {"goodput", s.goodput},
          {"mean_wait_s", s.mean_wait_s},
          {"median_wait_s", s.median_wait_s},
          {"p95_wait_s", s.p95_wait_s},
          {"max_wait_s", s.max_wait_s},
          {"mean_queue_length", s.mean_queue_length},
          {"mean_fragmented_nodes", s.mean_fragmented_nodes},
          {"mean_down_nodes", s.mean_down_nodes},
          {"useful_gpu_hours", s.useful_gpu_hours},
          {"lost_gpu_hours", s.lost_gpu_hours},
          {"paid_gpu_hours", s.paid_gpu_hours},
          {"cost_usd", s.cost_usd},
          {"slow_placement_gpu_hours", s.slow_placement_gpu_hours},
          {"cost_per_useful_gpu_hour_usd", s.cost_per_useful_gpu_hour},
          {"wait_by_size", by_size},
          {"node_failures", s.node_failures},
          {"spares_used", s.spares_used},
          {"preemptions", s.preemptions}};
}

json jobs_json(const orch::ClusterLayout& layout, const orch::SimulationResult& r,
               const std::vector<orch::JobSpec>& specs, const PlacedTraining& placed) {
  json jobs = json::array();
  const int gpn = layout.gpus_per_node;
  for (std::size_t k = 0; k < r.jobs.size(); ++k) {
    const auto& j = r.jobs[k];
    json o{{"id", j.id},
           {"state", orch::to_string(j.state)},
           {"submit_s", j.submit_s},
           {"requeues", j.requeues},
           {"lost_gpu_hours", j.lost_node_s * gpn / 3600.0},
           {"useful_gpu_hours", j.useful_node_s * gpn / 3600.0},
           {"priority", j.priority}};
    if (j.first_start_s >= 0) {
      o["wait_s"] = j.first_start_s - j.submit_s;
      o["start_s"] = j.first_start_s;
      o["last_start_s"] = j.start_s;
      o["nodes"] = orch::hostlist(layout, j.nodes);
      o["node_count"] = j.nodes.size();
      o["backfilled"] = j.backfilled;
    }
    if (j.end_s >= 0) o["end_s"] = j.end_s;
    if (k < specs.size() && !specs[k].reservation.empty()) o["reservation"] = specs[k].reservation;
    if (k < placed.handle.size() && placed.handle[k] >= 0) {
      const double ideal = placed.ideal_step[static_cast<std::size_t>(placed.handle[k])];
      o["training"] = {{"job", placed.label[static_cast<std::size_t>(placed.handle[k])]},
                       {"ideal_step_s", ideal},
                       {"step_s", ideal * j.slowdown},
                       {"slowdown", j.slowdown},
                       {"slow_placement_gpu_hours", j.slow_placement_node_s * gpn / 3600.0}};
    }
    jobs.push_back(o);
  }
  return jobs;
}

std::string jobs_csv(const orch::ClusterLayout& layout, const orch::SimulationResult& r) {
  std::string out = "JobID,State,Submit,Start,End,Wait,NNodes,NodeList,Requeues,Backfilled,LostGPUHours\n";
  for (const auto& j : r.jobs)
    out += fmt::format("{},{},{},{},{},{},{},\"{}\",{},{},{:.4f}\n", j.id, orch::to_string(j.state), j.submit_s,
                       j.first_start_s, j.end_s, j.first_start_s >= 0 ? j.first_start_s - j.submit_s : -1.0,
                       j.nodes.size(), orch::hostlist(layout, j.nodes), j.requeues, j.backfilled ? 1 : 0,
                       j.lost_node_s * layout.gpus_per_node / 3600.0);
  return out;
}

void print_comparison(const std::vector<Variant>& variants, const std::vector<orch::ClusterSummary>& sums) {
  std::vector<TextTable::Column> cols{{"", false}};
  for (const auto& v : variants) cols.push_back({v.name, true});
  TextTable t(cols);
  auto row = [&](const std::string& label, auto fn) {
    std::vector<std::string> cells{label};
    for (const auto& s : sums) cells.push_back(fn(s));
    t.add(cells);
  };
  using S = orch::ClusterSummary;
  row("jobs completed / timeout / failed",
      [](const S& s) { return fmt::format("{} / {} / {}", s.completed, s.timeout, s.node_fail + s.preempted); });
  row("jobs unfinished at the end", [](const S& s) { return fmt::format("{}", s.unfinished); });
  row("started by backfill", [](const S& s) { return fmt::format("{}", s.backfilled); });
  row("utilisation (allocated)", [](const S& s) { return fmt::format("{:.1f}%", 100 * s.utilisation); });
  row("goodput (useful work)", [](const S& s) { return fmt::format("{:.1f}%", 100 * s.goodput); });
  row("mean / median wait", [](const S& s) { return hours(s.mean_wait_s) + " / " + hours(s.median_wait_s); });
  row("p95 / max wait", [](const S& s) { return hours(s.p95_wait_s) + " / " + hours(s.max_wait_s); });
  row("mean queue length (jobs)", [](const S& s) { return fmt::format("{:.1f}", s.mean_queue_length); });
  row("fragmented nodes (mean)", [](const S& s) { return fmt::format("{:.1f}", s.mean_fragmented_nodes); });
  row("node failures / preemptions / requeues",
      [](const S& s) { return fmt::format("{} / {} / {}", s.node_failures, s.preemptions, s.requeues); });
  row("lost GPU-hours", [](const S& s) { return fmt::format("{:.0f}", s.lost_gpu_hours); });
  if (sums.front().slow_placement_gpu_hours > 0 || sums.back().slow_placement_gpu_hours > 0)
    row("GPU-hours added by slow placements",
        [](const S& s) { return fmt::format("{:.0f}", s.slow_placement_gpu_hours); });
  row("useful / paid GPU-hours",
      [](const S& s) { return fmt::format("{:.0f} / {:.0f}", s.useful_gpu_hours, s.paid_gpu_hours); });
  row("cost", [](const S& s) { return s.cost_usd > 0 ? fmt::format("${:.0f}", s.cost_usd) : std::string("n/a"); });
  row("cost per useful GPU-hour", [](const S& s) {
    return s.cost_per_useful_gpu_hour > 0 ? fmt::format("${:.2f}", s.cost_per_useful_gpu_hour) : std::string("n/a");
  });
  row("span (first submit to last event)", [](const S& s) { return hours(s.span_s); });
  t.print(std::cout);
  std::cout << "\nMean wait by job size (nodes):\n";
  std::vector<TextTable::Column> wcols{{"nodes", false}, {"jobs", true}};
  for (const auto& v : variants) wcols.push_back({v.name, true});
  TextTable w(wcols);
  for (std::size_t b = 0; b < sums.front().wait_by_size.size(); ++b) {
    if (sums.front().wait_by_size[b].jobs == 0) continue;
    std::vector<std::string> cells{sums.front().wait_by_size[b].label,
                                   fmt::format("{}", sums.front().wait_by_size[b].jobs)};
    for (const auto& s : sums) cells.push_back(hours(s.wait_by_size[b].mean_wait_s));
    w.add(cells);
  }
  w.print(std::cout);
}

/// Training jobs' step times on the nodes they got (the first policy), the slowest placements first.
struct TrainingRow {
  int id = 0;
  std::string job, nodes;
  double ideal = 0, step = 0, slowdown = 1;
};
std::vector<TrainingRow> training_rows(const orch::ClusterLayout& layout, const orch::SimulationResult& r,
                                       const PlacedTraining& placed) {
  std::vector<TrainingRow> rows;
  for (std::size_t k = 0; k < r.jobs.size() && k < placed.handle.size(); ++k) {
    const int h = placed.handle[k];
    if (h < 0 || r.jobs[k].first_start_s < 0) continue;
    const double ideal = placed.ideal_step[static_cast<std::size_t>(h)];
    rows.push_back({r.jobs[k].id, placed.label[static_cast<std::size_t>(h)], orch::hostlist(layout, r.jobs[k].nodes),
                    ideal, ideal * r.jobs[k].slowdown, r.jobs[k].slowdown});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TrainingRow& a, const TrainingRow& b) { return a.slowdown > b.slowdown; });
  return rows;
}

void print_training(const orch::ClusterLayout& layout, const orch::SimulationResult& r, const PlacedTraining& placed,
                    const std::string& policy) {
  const auto rows = training_rows(layout, r, placed);
  if (rows.empty()) return;
  std::cout << fmt::format(
      "\nTraining jobs on the nodes they got ({}; {} started, slowest placements first; step model "
      "run {} times for {} placements):\n",
      policy, rows.size(), placed.model->step_model_calls(), placed.model->lookups());
  TextTable t({{"job", true},
               {"training job", false},
               {"nodes", false},
               {"ideal step", true},
               {"step", true},
               {"slowdown", true}});
  for (std::size_t i = 0; i < rows.size() && i < 10; ++i)
    t.add({fmt::format("{}", rows[i].id), rows[i].job, rows[i].nodes, fmt::format("{:.3f} s", rows[i].ideal),
           fmt::format("{:.3f} s", rows[i].step), fmt::format("{:.2f}x", rows[i].slowdown)});
  t.print(std::cout);
  if (rows.size() > 10) std::cout << fmt::format("({} more in --json)\n", rows.size() - 10);
}

std::string html_report(const std::string& heading, const orch::ClusterLayout& layout,
                        const std::vector<Variant>& variants, const std::vector<orch::ClusterSummary>& sums,
                        const std::vector<orch::SimulationResult>& results, const PlacedTraining& placed,
                        const std::vector<orch::Reservation>& reservations) {
  report::Document doc;
  doc.title = "fmsim cluster";
  doc.subtitle = heading;
  report::Section overview{"Policies side by side", {}};
  report::KeyFigures kf;
  kf.items = {{"utilisation", fmt::format("{:.1f}%", 100 * sums[0].utilisation)},
              {"goodput", fmt::format("{:.1f}%", 100 * sums[0].goodput)},
              {"mean wait", hours(sums[0].mean_wait_s)},
              {"lost GPU-hours", fmt::format("{:.0f}", sums[0].lost_gpu_hours)}};
  overview.add(kf);
  report::Table t;
  t.header = {"policy",       "utilisation (%)",  "goodput (%)",    "mean wait (h)", "p95 wait (h)",
              "queue length", "fragmented nodes", "lost GPU-hours", "cost (USD)"};
  for (std::size_t i = 0; i < sums.size(); ++i) {
    const auto& s = sums[i];
    t.rows.push_back({variants[i].name, fmt::format("{:.1f}", 100 * s.utilisation),
                      fmt::format("{:.1f}", 100 * s.goodput), fmt::format("{:.2f}", s.mean_wait_s / 3600),
                      fmt::format("{:.2f}", s.p95_wait_s / 3600), fmt::format("{:.1f}", s.mean_queue_length),
                      fmt::format("{:.1f}", s.mean_fragmented_nodes), fmt::format("{:.0f}", s.lost_gpu_hours),
                      fmt::format("{:.0f}", s.cost_usd)});
  }
  overview.add(t);
  doc.sections.push_back(overview);
  report::Section over_time{"Over time", {}};
  auto line = [&](const std::string& id, const std::string& title, const std::string& y, auto pick) {
    report::LineChart c;
    c.id = id;
    c.title = title;
    c.x_label = "time (days)";
    c.y_label = y;
    for (std::size_t i = 0; i < results.size(); ++i) {
      report::LineSeries s;
      s.name = variants[i].name;
      const auto& series = results[i].series;
      const auto& v = pick(series);
      for (std::size_t k = 0; k < v.size(); ++k) {
        s.x.push_back((static_cast<double>(k) + 0.5) * series.bucket_s / 86400.0);
        s.y.push_back(v[k]);
      }
      if (!s.x.empty()) c.series.push_back(s);
    }
    if (!c.series.empty()) over_time.add(c);
  };
  const double n = layout.nodes();
  line("utilisation", "Allocated nodes", "nodes (of " + fmt::format("{:.0f}", n) + ")",
       [](const orch::TimeSeries& s) { return s.busy_nodes; });
  line("queue", "Queue length", "pending jobs", [](const orch::TimeSeries& s) { return s.queue_length; });
  line("fragmentation", "Free nodes that cannot hold the largest waiting job", "nodes",
       [](const orch::TimeSeries& s) { return s.fragmented_nodes; });
  doc.sections.push_back(over_time);
  report::Section waits{"Wait by job size", {}};
  report::GroupedBarChart g;
  g.id = "wait-by-size";
  g.title = "Mean queue wait by job size";
  for (const auto& v : variants) g.series.push_back(v.name);
  report::GroupedBarPanel panel{"mean wait", "hours", "h", {}};
  for (std::size_t b = 0; b < sums[0].wait_by_size.size(); ++b) {
    if (sums[0].wait_by_size[b].jobs == 0) continue;
    g.groups.push_back(sums[0].wait_by_size[b].label + " nodes");
    std::vector<double> row;
    for (const auto& s : sums) row.push_back(s.wait_by_size[b].mean_wait_s / 3600.0);
    panel.values.push_back(row);
  }
  g.panels.push_back(panel);
  if (!g.groups.empty()) waits.add(g);
  doc.sections.push_back(waits);
  if (const auto rows = training_rows(layout, results[0], placed); !rows.empty()) {
    report::Section training{"Training jobs on their nodes", {}};
    report::Table tt;
    tt.header = {"job", "training job", "nodes", "ideal step (s)", "step (s)", "slowdown"};
    for (const auto& row : rows)
      tt.rows.push_back({fmt::format("{}", row.id), row.job, row.nodes, fmt::format("{:.3f}", row.ideal),
                         fmt::format("{:.3f}", row.step), fmt::format("{:.2f}x", row.slowdown)});
    training.add(tt);
    doc.sections.push_back(training);
  }
  if (!reservations.empty()) {
    report::Section resv{"Reservations", {}};
    report::Table rt;
    rt.header = {"name", "kind", "nodes", "start (h)", "end (h)"};
    for (const auto& r : reservations)
      rt.rows.push_back({r.name, r.capacity_block ? "Capacity Block" : "reservation", orch::hostlist(layout, r.nodes),
                         fmt::format("{:.2f}", r.start_s / 3600), fmt::format("{:.2f}", r.end_s / 3600)});
    resv.add(rt);
    doc.sections.push_back(resv);
  }
  doc.footer = "fmsim cluster: Slurm scheduler twin (docs/models/orchestration.md)";
  return report::render_html(doc);
}

void run_cluster(const ClusterFlags& f, Context& ctx) {
  if (f.scheduler != "slurm" && f.scheduler != "k8s")
    throw core::InputError::flag("--scheduler", fmt::format("'{}' is not allowed; use slurm or k8s", f.scheduler));
  const bool k8s = f.scheduler == "k8s";
  if (!k8s && !f.queues.empty()) throw core::InputError::flag("--queues", "applies to --scheduler k8s only");
  const auto spec = config::parse_cluster(ctx.catalog(), f.cluster);
  auto layout = orch::layout_from_cluster(spec);
  orch::SlurmConfig base;
  base.placement = layout.block_size > 0 ? orch::Placement::Block : orch::Placement::Tree;
  std::string conf_note = "Slurm 22.05 defaults";
  if (!f.slurm_conf.empty()) {
    const auto file = orch::parse_slurm_conf(read_text(f.slurm_conf, "--slurm-conf"), f.slurm_conf);
    base = file.config;
    conf_note = f.slurm_conf;
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
    orch::apply_topology_conf(layout, read_text(f.topology_conf, "--topology-conf"), f.topology_conf);
  if (!f.associations.empty())
    base.associations =
        orch::FairShareTree::parse_sacctmgr_dump(read_text(f.associations, "--associations"), f.associations);
  // Reservations (Capacity Blocks add their nodes to the layout, so before the workload).
  const int cluster_nodes = layout.nodes();  // without Capacity Blocks: what synthetic jobs are sized to
  {
    std::string text = f.reservations_file.empty() ? std::string() : read_text(f.reservations_file, "--reservations");
    const std::string source = f.reservations_file.empty() ? std::string("--reservation") : f.reservations_file;
    if (!text.empty() && text.back() != '\n') text += '\n';
    for (const auto& line : f.reservations) text += line + "\n";
    if (!text.empty()) base.reservations = orch::parse_reservations(text, source, layout);
  }
  if (!f.placement.empty()) base.placement = parse_placement(f.placement, "--placement");
  if (base.placement == orch::Placement::Block && layout.block_size == 0)
    throw core::InputError::flag("--placement",
                                 "block placement needs NVLink blocks (an UltraServer cluster or BlockName lines)");
  if (!f.policy.empty()) {
    if (f.policy != "fifo" && f.policy != "backfill")
      throw core::InputError::flag("--policy", fmt::format("'{}' is not allowed; use backfill or fifo", f.policy));
    base.backfill = f.policy == "backfill";
  }

  // The workload.
  std::vector<orch::JobSpec> jobs;
  std::string workload_note;
  if (!f.trace.empty() && f.synthetic > 0)
    throw core::InputError::flag("--synthetic", "give --trace or --synthetic, not both");
  if (!f.trace.empty()) {
    orch::TraceOptions topt;
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
    jobs = orch::parse_trace_csv(read_text(f.trace, "--trace"), f.trace, topt);
    workload_note = fmt::format("{} jobs from {}", jobs.size(), f.trace);
  } else {
    orch::SyntheticWorkloadSpec w;
    w.jobs = f.synthetic > 0 ? f.synthetic : 1000;
    w.mean_interarrival_s = config::parse_duration_flag(f.arrival, "--arrival").value();
    if (w.mean_interarrival_s <= 0) throw core::InputError::flag("--arrival", "must be more than 0");
    w.seed = f.seed;
    jobs = orch::generate_workload(w, cluster_nodes);
    workload_note = fmt::format(
        "{} synthetic jobs (pre-training 10%, fine-tuning 30%, evaluation 60%), one every {} on "
        "average, seed {}",
        w.jobs, f.arrival, f.seed);
  }
  if (!f.checkpoint.empty()) {
    const double c = config::parse_duration_flag(f.checkpoint, "--checkpoint-interval").value();
    for (auto& j : jobs)
      if (j.checkpoint_interval_s <= 0) j.checkpoint_interval_s = c;
  }
  auto placed = attach_training(jobs, layout, spec, f, ctx);
  if (!f.sigterm_checkpoint.empty()) {
    const double c = config::parse_duration_flag(f.sigterm_checkpoint, "--sigterm-checkpoint").value();
    for (auto& j : jobs) j.sigterm_checkpoint_s = c;
  }
  if (!f.write_trace.empty()) write_file_atomically(f.write_trace, orch::write_trace_csv(jobs), "--write-trace");

  Variant base_variant;
  base_variant.name = base.backfill ? "backfill" : "fifo";
  base_variant.config = base;
  auto& o = base_variant.options;
  o.horizon_s = f.days > 0 ? f.days * 86400.0 : 0.0;
  if (f.days < 0) throw core::InputError::flag("--days", "must be 0 (until every job ends) or more");
  if (!f.node_failure_rate.empty()) {
    const auto data = config::load_failure_data();
    o.failures.rate_per_node_hour = config::parse_node_failure_rate(data, f.node_failure_rate, "--node-failure-rate");
  }
  if (f.spares < 0) throw core::InputError::flag("--spares", "must be 0 or more");
  o.failures.spares = f.spares;
  base_variant.spares = f.spares;
  o.failures.detect_s = config::parse_duration_flag(f.detect, "--detect").value();
  o.failures.repair_s = config::parse_duration_flag(f.repair, "--repair").value();
  o.failures.replace_s = config::parse_duration_flag(f.replace, "--replace").value();
  o.failures.restart_s = config::parse_duration_flag(f.restart, "--restart").value();
  o.failures.seed = f.seed;
  if (k8s) {
    auto& kq = o.kueue;
    kq.enabled = true;
    if (f.queueing != "best-effort" && f.queueing != "strict")
      throw core::InputError::flag("--queueing",
                                   fmt::format("'{}' is not allowed; use best-effort or strict", f.queueing));
    kq.strict_fifo = f.queueing == "strict";
    kq.reclaim_within_cohort = kq.within_cluster_queue = !f.no_preemption;
    for (const auto& q : f.queues) {
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
      kq.queues.push_back(c);
    }
    base_variant.name = "kueue";
  }
  o.utilisation_bucket_s = std::max(60.0, (o.horizon_s > 0 ? o.horizon_s : 30 * 86400.0) / 720.0);
  if (placed.model)
    o.slowdown = [&placed](int job, const std::vector<int>& nodes) {
      const int h = placed.handle[static_cast<std::size_t>(job)];
      if (h < 0) return 1.0;
      const double t = placed.model->step_time(h, nodes);
      return t > 0 ? t / placed.ideal_step[static_cast<std::size_t>(h)] : 1.0;
    };

  std::vector<Variant> variants{base_variant};
  for (const auto& c : f.compare) variants.push_back(apply_variant(base_variant, c, layout));
  std::vector<orch::SimulationResult> results;
  std::vector<orch::ClusterSummary> sums;
  std::vector<double> walls;
  for (const auto& v : variants) {
    const auto t0 = std::chrono::steady_clock::now();
    results.push_back(orch::simulate_slurm(layout, v.config, jobs, v.options));
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    sums.push_back(orch::summarise(layout, results.back(), v.spares));
  }

  const auto& c0 = variants[0].config;
  const std::string sched_text =
      k8s ? fmt::format("Kubernetes + Kueue ({}, {} ClusterQueues in one cohort{})",
                        o.kueue.strict_fifo ? "StrictFIFO" : "BestEffortFIFO",
                        o.kueue.queues.empty() ? std::string("per-team") : std::to_string(o.kueue.queues.size()),
                        o.kueue.reclaim_within_cohort ? ", reclaim and priority preemption" : "")
          : fmt::format("Slurm {} {} ({})", c0.backfill ? "sched/backfill" : "sched/builtin",
                        c0.multifactor ? "priority/multifactor" : "priority/basic", conf_note);
  const std::string heading =
      fmt::format("{} x {} ({} GPUs), {}; {}; {}", layout.nodes(), layout.instance_type,
                  layout.nodes() * layout.gpus_per_node, placement_name(c0.placement), sched_text, workload_note);
  if (!f.jobs_csv.empty()) write_file_atomically(f.jobs_csv, jobs_csv(layout, results[0]), "--jobs-csv");
  if (!f.report.empty())
    write_file_atomically(f.report, html_report(heading, layout, variants, sums, results, placed, c0.reservations),
                          "--report");
  const auto metrics = write_cluster_metrics_file(f.metrics, layout, c0, jobs, variants[0].options);

  if (f.json) {
    json out{{"cluster",
              {{"instance_type", layout.instance_type},
               {"nodes", layout.nodes()},
               {"gpus_per_node", layout.gpus_per_node},
               {"price_per_node_hour_usd", layout.price_per_node_hour},
               {"switches", layout.switches.size()},
               {"block_size", layout.block_size}}},
             {"scheduler",
              {{"type", c0.backfill ? "sched/backfill" : "sched/builtin"},
               {"priority", c0.multifactor ? "priority/multifactor" : "priority/basic"},
               {"topology", placement_name(c0.placement)},
               {"bf_interval_s", c0.bf_interval_s},
               {"bf_window_s", c0.bf_window_s},
               {"bf_max_job_test", c0.bf_max_job_test},
               {"bf_resolution_s", c0.bf_resolution_s},
               {"fair_share", c0.fair_tree ? "fair_tree" : "classic"}}},
             {"workload", workload_note}};
    json resv = json::array();
    for (const auto& r : c0.reservations)
      resv.push_back({{"name", r.name},
                      {"start_s", r.start_s},
                      {"end_s", r.end_s},
                      {"nodes", orch::hostlist(layout, r.nodes)},
                      {"node_count", r.nodes.size()},
                      {"capacity_block", r.capacity_block}});
    out["reservations"] = resv;
    json policies = json::array();
    for (std::size_t i = 0; i < variants.size(); ++i) {
      json p{{"name", variants[i].name},
             {"summary", summary_json(sums[i])},
             {"wall_s", walls[i]},
             {"series",
              {{"bucket_s", results[i].series.bucket_s},
               {"busy_nodes", results[i].series.busy_nodes},
               {"queue_length", results[i].series.queue_length},
               {"fragmented_nodes", results[i].series.fragmented_nodes},
               {"down_nodes", results[i].series.down_nodes}}}};
      if (i == 0) p["jobs"] = jobs_json(layout, results[i], jobs, placed);
      policies.push_back(p);
    }
    out["policies"] = policies;
    if (metrics) out["metrics"] = *metrics;
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << "Cluster:   " << layout.nodes() << " x " << layout.instance_type << " ("
            << layout.nodes() * layout.gpus_per_node << " GPUs), " << placement_name(c0.placement);
  if (!layout.switches.empty()) std::cout << fmt::format(", {} switches", layout.switches.size());
  if (layout.block_size > 0) std::cout << fmt::format(", NVLink blocks of {} nodes", layout.block_size);
  if (layout.price_per_node_hour > 0) std::cout << fmt::format(", ${:.2f}/node-hour", layout.price_per_node_hour);
  if (k8s)
    std::cout << "\nScheduler: " << sched_text << ", topology-aware placement from the node labels\n";
  else
    std::cout << "\nScheduler: Slurm " << (c0.backfill ? "sched/backfill" : "sched/builtin") << " ("
              << fmt::format("bf_interval {:g} s, bf_window {:g} min, bf_max_job_test {}", c0.bf_interval_s,
                             c0.bf_window_s / 60, c0.bf_max_job_test)
              << "), " << (c0.multifactor ? "priority/multifactor" : "priority/basic") << "; from " << conf_note
              << "\n";
  std::cout << "Workload:  " << workload_note;
  if (f.days > 0) std::cout << fmt::format(", {:g} days", f.days);
  std::cout << "\n";
  for (const auto& r : c0.reservations)
    std::cout << fmt::format("Reserved:  {} ({}{} nodes {}, {} to {})\n", r.name,
                             r.capacity_block ? "Capacity Block, " : "", r.nodes.size(),
                             orch::hostlist(layout, r.nodes), hours(r.start_s), hours(r.end_s));
  if (o.failures.rate_per_node_hour > 0)
    std::cout << fmt::format(
        "Failures:  {:.3g} per 1000 node-days, detect {}, repair {}, {} spares (swap {}), restart {}\n",
        o.failures.rate_per_node_hour * 24000, f.detect, f.repair, f.spares, f.replace, f.restart);
  std::cout << "\n";
  print_comparison(variants, sums);
  if (placed.model) print_training(layout, results[0], placed, variants[0].name);
  std::cout << "\nSimulated in";
  for (std::size_t i = 0; i < variants.size(); ++i)
    std::cout << fmt::format(" {:.2f} s ({})", walls[i], variants[i].name);
  std::cout << ".\n";
  if (!f.report.empty()) std::cout << "Wrote " << f.report << "\n";
  if (!f.jobs_csv.empty()) std::cout << "Wrote " << f.jobs_csv << " (per job, " << variants[0].name << ")\n";
  if (metrics) std::cout << metrics_line(*metrics);
}

/// A flag whose value is a duration ("90s", "30m", "48h", "2d").
void duration_option(CLI::App* cmd, const std::string& name, std::string& value, const std::string& help) {
  cmd->add_option(name, value, help)->type_name("DURATION");
}
/// A flag that takes a comma-separated list (and may be repeated).
template <class T>
void list_option(CLI::App* cmd, const std::string& name, std::vector<T>& values, const std::string& help) {
  cmd->add_option(name, values, help)->delimiter(',');
}

}  // namespace

void add_cluster_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<ClusterFlags>();
  auto* cmd = app.add_subcommand(
      "cluster",
      "Replay a job trace on a shared cluster through a twin of Slurm's scheduler (waits, utilisation, "
      "fragmentation, goodput, cost)");
  cmd->add_option("--cluster", f->cluster, "Cluster: SYSTEM:COUNT (default p5en.48xlarge:128)")->type_name("SPEC");
  cmd->add_option("--scheduler", f->scheduler, "slurm (default) or k8s (Kubernetes with Kueue queues)");
  list_option(cmd, "--queues", f->queues,
              "k8s: ClusterQueues TEAM=NODES[:BORROW] (nominal quota and borrowing limit "
              "in nodes; default an equal share per team, unlimited borrowing)");
  cmd->add_option("--queueing", f->queueing, "k8s: best-effort (BestEffortFIFO, default) or strict (StrictFIFO)");
  cmd->add_flag("--no-preemption", f->no_preemption, "k8s: no reclaiming within the cohort, no priority preemption");
  cmd->add_option("--slurm-conf", f->slurm_conf,
                  "slurm.conf: SchedulerType, SchedulerParameters, PriorityType and "
                  "weights, PreemptType/Mode, TopologyPlugin, NodeName and PartitionName lines")
      ->type_name("FILE");
  cmd->add_option("--topology-conf", f->topology_conf,
                  "topology.conf (SwitchName or BlockName lines); default: the "
                  "catalog layout (fmsim topology)")
      ->type_name("FILE");
  cmd->add_option("--placement", f->placement,
                  "consecutive | tree | block (default: TopologyPlugin, else block for "
                  "UltraServers and tree otherwise)");
  cmd->add_option("--policy", f->policy, "backfill | fifo (sched/builtin) (default: SchedulerType, else backfill)");
  cmd->add_option("--trace", f->trace, "Job trace CSV (fmsim, Helios/Acme, Philly or PAI columns; see --trace-map)")
      ->type_name("FILE");
  list_option(cmd, "--trace-map", f->trace_map,
              "FIELD=COLUMN: read a field from another column (fields: id, submit, "
              "nodes, gpus, duration, start, end, time_limit, partition, account, "
              "user, nice, qos, kind, state, segment, checkpoint_interval)");
  cmd->add_option("--limit-factor", f->limit_factor, "Traces without time limits: limit = duration x this (default 2)");
  cmd->add_option("--synthetic", f->synthetic, "Generate this many jobs instead of a trace (default 1000)");
  duration_option(cmd, "--arrival", f->arrival, "Synthetic: mean time between submissions (default 5m)");
  cmd->add_option("--seed", f->seed, "Synthetic workload and failure seed (default 1)");
  cmd->add_option("--days", f->days, "Stop after this many days (default: when every job has ended)");
  list_option(cmd, "--compare", f->compare,
              "Also run these policies: fifo, backfill, basic, multifactor, consecutive, "
              "tree, block, spares=N, bf_window=MIN, bf_max_job_test=N, bf_interval=S");
  cmd->add_option("--node-failure-rate", f->node_failure_rate,
                  "Node failures per 1000 node-days, or a published rate "
                  "(e.g. meta-rsc1); default none")
      ->type_name("RATE");
  cmd->add_option("--spares", f->spares, "Spare nodes that replace failed ones (HyperPod auto-resume; default 0)");
  duration_option(cmd, "--detect", f->detect, "Failure detection time (default 1m)");
  duration_option(cmd, "--repair", f->repair, "Time to repair a failed node (default 48h)");
  duration_option(cmd, "--replace", f->replace, "Time to swap a spare in (default 10m)");
  duration_option(cmd, "--restart", f->restart, "Relaunch of a requeued job before it makes progress (default 3m)");
  cmd->add_option("--associations", f->associations,
                  "sacctmgr dump of accounts and users with Fairshare= shares, for "
                  "the fair-share factor (Fair Tree; classic with PriorityFlags=NO_FAIR_TREE)")
      ->type_name("FILE");
  cmd->add_option("--reservations", f->reservations_file,
                  "Reservations and Capacity Blocks, one per line in scontrol "
                  "syntax (ReservationName= StartTime= Duration=|EndTime= "
                  "Nodes=|NodeCnt= [CapacityBlock=YES])")
      ->type_name("FILE");
  cmd->add_option("--reservation", f->reservations,
                  "One reservation line as in --reservations (repeatable); jobs use "
                  "it through the trace's reservation column")
      ->type_name("LINE");
  duration_option(cmd, "--sigterm-checkpoint", f->sigterm_checkpoint,
                  "Preempted jobs write a checkpoint on SIGTERM "
                  "taking this long (kept when within KillWait; "
                  "default: they exit without one)");
  duration_option(cmd, "--checkpoint-interval", f->checkpoint,
                  "Checkpoint interval of jobs that have none (default: "
                  "the trace's, else none: a failure loses the whole run)");
  cmd->add_flag("--json", f->json,
                "Everything as JSON: cluster, scheduler, per-policy summary and time series, per job");
  cmd->add_option("--report", f->report, "Write an offline HTML report")->type_name("FILE");
  cmd->add_option("--jobs-csv", f->jobs_csv, "Write one row per job (first policy) in sacct-like columns")
      ->type_name("FILE");
  cmd->add_option("--write-trace", f->write_trace, "Write the workload as an fmsim trace CSV")->type_name("FILE");
  cmd->footer(
      "The scheduler twin follows slurmctld 22.05: jobs ordered by partition PriorityTier, priority, submit\n"
      "time, id; the main loop starts jobs in that order and stops a partition at the first that does not\n"
      "fit; backfill (every bf_interval) plans each job at the earliest time its nodes are free for its\n"
      "whole time limit and starts it only if that delays no job ahead of it. Whole-node gang allocation,\n"
      "topology/tree and topology/block placement as select/cons_tres picks nodes. Checked against a\n"
      "real slurmctld on loopback (tests/slurm/scheduler_twin_test.cpp).\n"
      "Examples:\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --synthetic 2000 --arrival 4m --compare fifo\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --slurm-conf slurm.conf --trace jobs.csv --days 30 --json\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:8 --synthetic 500 --compare tree --report cluster.html\n"
      "  fmsim cluster --cluster p5.48xlarge:64 --trace cluster_log.csv --trace-map gpus=gpu_num \\\n"
      "      --node-failure-rate 6.5 --spares 4 --checkpoint-interval 30m --compare spares=0\n"
      "Training jobs timed on the nodes they get (trace columns model, tp, pp, cp, ep, gbs, seq, tokens):\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:2 --trace training_jobs.csv --placement consecutive --compare block\n"
      "A Capacity Block (nodes only in its window) for the jobs whose reservation column says cb1:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --trace jobs.csv \\\n"
      "      --reservation \"ReservationName=cb1 StartTime=now+2days Duration=3-00:00:00 NodeCnt=16 "
      "CapacityBlock=YES\"\n"
      "Fair Tree fair-share from slurmdbd's associations (PriorityWeightFairshare in slurm.conf):\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --synthetic 500 --slurm-conf slurm.conf --associations assoc.cfg\n"
      "Preemption with GraceTime/KillWait (slurm.conf) and jobs that checkpoint on SIGTERM in 20 s:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --trace jobs.csv --slurm-conf slurm.conf --sigterm-checkpoint 20s");
  add_metrics_flags(*cmd, f->metrics);
  cmd->callback([f, &ctx] { run_cluster(*f, ctx); });
}

}  // namespace fmsim::cli
