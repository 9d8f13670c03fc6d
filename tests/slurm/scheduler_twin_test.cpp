// The differential test of issue 16: the same synthetic workload (time scaled down, jobs as
// `sleep`) goes to a real slurmctld with emulated slurmd nodes on loopback and to fmsim's Slurm
// twin with the same slurm.conf (and topology.conf), read back from the real cluster's folder.
// Compared: start order (Kendall tau-b >= 0.9), mean wait (within 10%), and the nodes chosen for
// jobs under topology/tree (identical).
//
// The twin replays the jobs with the times they were submitted (wall clock around the sbatch call)
// and the run times slurmctld.log records for them (the sleep plus launch and completion); starts and waits
// are compared in whole seconds, as Slurm records them.
//
// Placement is also checked decision by decision: slurmctld.log (millisecond stamps) gives the
// order of every start and completion; replaying it, each multi-node start under topology/tree
// must get exactly the nodes fmsim's node selection picks from the nodes free at that moment.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "config/slurm_conf.hpp"
#include "config/topology_conf.hpp"
#include "orchestration/node_select.hpp"
#include "orchestration/slurm_config.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "support/slurm_loopback.hpp"

namespace fmsim::testing {
namespace {

namespace orch = fmsim::orchestration;

// From a job's start to slurmctld's _job_complete, beyond its sleep: 0.06-0.16 s, mean 0.09 s on an
// idle machine (slurmctld.log of one run: "_start_job: Started JobId=4" at 47.532, "_job_complete:
// JobId=4" at 56.595 for `sleep 9`; 2.156 s for `sleep 2`, 7.076 s for `sleep 7`, 8.095 s for
// `sleep 8`). Used for a job whose two lines the log lacks.
constexpr double kLaunchAndCompletion_s = 0.1;

/// A job's start or completion in slurmctld.log: its millisecond stamp as seconds of the day, the
/// job, and for a start the nodes ("_start_job: Started JobId=N in P on NODES" from the backfill
/// pass, "sched: Allocate JobId=N NodeList=NODES" from the main loop; "_job_complete: JobId=N done").
struct CtldEvent {
  double t = 0;
  bool start = false;
  std::string job, nodes;
  bool backfill = false;  ///< a start by the backfill pass ("sched/backfill: _start_job")
};

std::vector<CtldEvent> ctld_events(const SlurmLoopback& slurm) {
  std::ifstream log(slurm.slurmctld_log_path());
  const std::regex stamp_re(R"(^\[\d+-\d+-\d+T(\d+):(\d+):(\d+)\.(\d+)\])");
  const std::regex start_re(
      R"((?:_start_job: Started JobId=(\d+) in \S+ on (\S+))|(?:sched: Allocate JobId=(\d+) NodeList=(\S+)))");
  const std::regex done_re(R"(_job_complete: JobId=(\d+) done)");
  std::vector<CtldEvent> out;
  for (std::string line; std::getline(log, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, stamp_re)) continue;
    const double t = std::stod(m[1].str()) * 3600 + std::stod(m[2].str()) * 60 + std::stod(m[3].str()) +
                     std::stod("0." + m[4].str());
    if (std::regex_search(line, m, start_re)) {
      out.push_back(
          {t, true, m[1].matched ? m[1].str() : m[3].str(), m[1].matched ? m[2].str() : m[4].str(), m[1].matched});
    } else if (std::regex_search(line, m, done_re)) {
      out.push_back({t, false, m[1].str(), {}});
    }
  }
  return out;
}

/// Each job's run time as slurmctld saw it: from its start to its completion, in seconds. A job's
/// run time is an input of the twin, as in a replayed trace (0.02-0.04 s beyond the sleep on
/// average in the runs of 2026-11-25).
std::map<std::string, double> run_times(const std::vector<CtldEvent>& events) {
  std::map<std::string, double> started, out;
  for (const auto& e : events) {
    if (e.start) {
      started.emplace(e.job, e.t);
    } else if (const auto it = started.find(e.job); it != started.end() && e.t >= it->second) {
      out[e.job] = e.t - it->second;
    }
  }
  return out;
}

/// Where in each second the backfill thread runs (bf_interval=1): the fraction of the second of
/// its first "_start_job" line in slurmctld.log. A daemon's phase is a condition of the run, not
/// of the model; the twin defaults to the middle of the interval.
std::optional<double> backfill_phase(const SlurmLoopback& slurm) {
  std::ifstream log(slurm.slurmctld_log_path());
  const std::regex re(R"(^\[\d+-\d+-\d+T\d+:\d+:\d+\.(\d+)\] sched/backfill: _start_job)");
  for (std::string line; std::getline(log, line);) {
    std::smatch m;
    if (std::regex_search(line, m, re)) return std::stod("0." + m[1].str());
  }
  return std::nullopt;
}

struct TraceJob {
  double offset_s;  ///< submission time from the start of the trace
  int nodes;
  double sleep_s;
  int limit_min;
  int nice = 0;
};

/// Poisson arrivals, node counts drawn from `sizes`, sleeps uniform in [lo, hi] s plus half a
/// second, limits 1-2 min. The half second keeps completions away from the backfill pass: jobs
/// start in that pass (bf_interval=1, one phase each second), so whole-second sleeps end within
/// 0.03 s of a later pass, while the backfill thread holds the job locks, and slurmctld.log showed
/// those freed nodes taken by the next pass a second later (the twin's main loop took them at
/// once); completions half a second off the pass are taken by the main loop at once, as in the
/// twin ("sched: Allocate" lines 0.005-0.02 s after the "_job_complete" that freed the nodes).
std::vector<TraceJob> synthetic_trace(int jobs, double mean_gap_s, std::vector<int> sizes, int lo, int hi,
                                      unsigned seed, bool with_nice) {
  std::mt19937 rng(seed);
  std::exponential_distribution<double> gap(1.0 / mean_gap_s);
  std::uniform_int_distribution<std::size_t> size(0, sizes.size() - 1);
  std::uniform_int_distribution<int> sleep(lo, hi);
  std::uniform_int_distribution<int> limit(1, 2);
  std::uniform_int_distribution<int> nice(0, 3);
  std::vector<TraceJob> out;
  double t = 0;
  for (int i = 0; i < jobs; ++i) {
    if (i > 0) t += gap(rng);
    out.push_back({t, sizes[size(rng)], sleep(rng) + 0.5, limit(rng), with_nice ? nice(rng) * 100 : 0});
  }
  return out;
}

/// The multifactor workload, built so that the order cannot depend on the machine's load: a job
/// on every node (`blocker_s` long) starts first, and the others are all submitted while it runs
/// (from 1.5 s on, 0.1 s apart),
/// so every later start is decided by priority alone. Their priorities differ by design: the job
/// size factor (PriorityFavorSmall on 8 nodes of 4 CPUs, one CPU per node asked: 1000 x
/// ((8-n)/8 + (32-n)/32)/2, steps of 78 per node) separates sizes, and distinct --nice values
/// (multiples of 5, below one size step) order the jobs of one size, so no two jobs tie and
/// neither submission second nor job id ever breaks a tie.
std::vector<TraceJob> blocked_burst_trace(int jobs, double blocker_s, std::vector<int> sizes, int lo, int hi,
                                          unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> size(0, sizes.size() - 1);
  std::uniform_int_distribution<int> sleep(lo, hi);
  std::vector<int> nice(static_cast<std::size_t>(jobs));
  for (int i = 0; i < jobs; ++i) nice[static_cast<std::size_t>(i)] = 5 * i;
  std::shuffle(nice.begin(), nice.end(), rng);
  // The blocker's --nice=-1000 (root may lower nice) puts it first even if a scheduling pass sees
  // it together with the first jobs of the burst.
  std::vector<TraceJob> out{{0.0, 8, blocker_s, 1, -1000}};
  for (int i = 0; i < jobs; ++i)
    out.push_back(
        {1.5 + 0.1 * i, sizes[size(rng)], static_cast<double>(sleep(rng)), 1, nice[static_cast<std::size_t>(i)]});
  return out;
}

/// One job's outcome in a run: start (whole seconds from the first submission's second), node
/// list (sorted names), and whether the backfill pass started it.
struct JobOutcome {
  double start = 0;
  std::vector<std::string> nodes;
  bool backfilled = false;
};

struct Comparison {
  std::vector<JobOutcome> real, twin;  ///< by trace index
  double tau = 0;
  double real_mean_wait = 0, twin_mean_wait = 0;
  int placement_checked = 0, placement_same = 0;  ///< end to end (informative: timing moves them)
  int decisions_checked = 0, decisions_same = 0;  ///< replayed from slurmctld.log
  std::string table;
};

/// Replays slurmctld.log's starts and completions in their order; at each start asks fmsim's
/// node selection for the job's nodes among those free then, and compares with Slurm's choice.
void replay_placements(const std::vector<CtldEvent>& events, const orch::ClusterLayout& layout,
                       orch::Placement placement, Comparison& c, std::ostringstream& table) {
  // A finished job's nodes stay COMPLETING until slurmd reports its epilog done; that message is
  // not logged at info level. Observed: nodes reused 0.05 s after "done" in one case, still
  // completing 0.07 s after it in another; all free within 0.5 s. So the nodes of a job that
  // ended less than kCompleting_s before a start may or may not be free: the check passes when
  // fmsim picks Slurm's nodes for one of those possibilities.
  constexpr double kCompleting_s = 0.5;
  std::map<std::string, std::vector<int>> busy;
  std::vector<std::pair<double, std::string>> completing;  // (time of "done", job)
  table << "decisions replayed from slurmctld.log (job: Slurm's nodes / fmsim's):";
  for (const auto& e : events) {
    const double now = e.t;
    for (auto it = completing.begin(); it != completing.end();) {
      if (it->first + kCompleting_s <= now) {
        busy.erase(it->second);
        it = completing.erase(it);
      } else {
        ++it;
      }
    }
    if (e.start) {
      const std::string& id = e.job;
      const std::string& list = e.nodes;
      std::vector<int> real;
      for (const auto& name : expand_slurm_hostlist(list)) real.push_back(layout.index_of(name));
      std::sort(real.begin(), real.end());
      const std::size_t k = std::min<std::size_t>(completing.size(), 4);
      bool same = false;
      std::vector<int> first_choice;
      for (std::size_t subset = 0; subset < (std::size_t{1} << k) && !same; ++subset) {
        orch::NodeSet available(layout.nodes(), true);
        for (const auto& [job, nodes] : busy) {
          bool freed = false;
          for (std::size_t b = 0; b < k; ++b)
            if ((subset >> b & 1) && completing[b].second == job) freed = true;
          if (!freed)
            for (int n : nodes) available.reset(n);
        }
        const auto chosen =
            orch::select_nodes(layout, placement, available, orch::NodeRequest{static_cast<int>(real.size())});
        if (subset == 0) first_choice = chosen;
        same = chosen == real;
      }
      ++c.decisions_checked;
      c.decisions_same += same;
      table << " " << id << ": " << list << (same ? "" : " / " + orch::hostlist(layout, first_choice) + " DIFFERENT");
      busy[id] = real;
    } else {
      completing.push_back({now, e.job});
    }
  }
  table << "\n";
}

/// Submits the trace to the real cluster, waits, replays it through the twin, compares.
Comparison run_both(SlurmLoopback& slurm, const std::vector<TraceJob>& trace) {
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, std::size_t> index_of_id;
  // sbatch's call on the wall clock (s since the epoch): slurmctld took the job in between. On a
  // loaded machine the call can take seconds, so the submission time is the later of the call's
  // start and the whole second slurmctld stamped.
  std::vector<double> call_start(trace.size(), 0.0), call_end(trace.size(), 0.0), submitted_at(trace.size(), 0.0);
  for (std::size_t i = 0; i < trace.size(); ++i) {
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(static_cast<long>(trace[i].offset_s * 1000)));
    std::vector<std::string> args{"-N", std::to_string(trace[i].nodes), "-t", std::to_string(trace[i].limit_min),
                                  "-J", "j" + std::to_string(i + 1),    "-o", "/dev/null"};
    if (trace[i].nice) args.push_back("--nice=" + std::to_string(trace[i].nice));
    args.push_back("--wrap");
    args.push_back(fmt::format("sleep {:g}", trace[i].sleep_s));
    auto wall = [] {
      return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    };
    call_start[i] = wall();
    index_of_id[slurm.sbatch(args)] = i;
    call_end[i] = wall();
  }
  // Priorities as slurmctld set them (for the table below).
  std::map<std::string, std::string> real_priority;
  {
    std::istringstream lines(slurm.run({"squeue", "-h", "-t", "all", "-o", "%i %Q"}).output);
    for (std::string id, prio; lines >> id >> prio;) real_priority[id] = prio;
  }
  EXPECT_TRUE(slurm.wait_until_all_done(std::chrono::seconds(240))) << slurm.slurmctld_log_tail();
  const auto real = slurm.completed_jobs();
  // This trace's jobs (the cluster may have run others before).
  EXPECT_EQ(std::count_if(real.begin(), real.end(),
                          [&](const SlurmCompletedJob& r) { return index_of_id.count(r.job_id) > 0; }),
            static_cast<long>(trace.size()))
      << slurm.slurmctld_log_tail();
  for (const auto& r : real) {
    const auto it = index_of_id.find(r.job_id);
    if (it == index_of_id.end()) continue;
    const auto i = it->second;
    const double stamped = static_cast<double>(r.submit_time);
    submitted_at[i] = std::clamp(call_start[i], stamped, std::max(stamped, std::min(call_end[i], stamped + 0.999)));
  }

  // The twin, from the very files the real controller read.
  std::ifstream conf_in(slurm.conf_path());
  std::stringstream conf_text;
  conf_text << conf_in.rdbuf();
  const auto conf = fmsim::config::parse_slurm_conf(conf_text.str(), slurm.conf_path().string());
  auto layout = orch::layout_from_names(conf.node_names);
  const auto topo_path = slurm.dir() / "topology.conf";
  if (std::filesystem::exists(topo_path)) {
    std::ifstream topo_in(topo_path);
    std::stringstream topo_text;
    topo_text << topo_in.rdbuf();
    fmsim::config::apply_topology_conf(layout, topo_text.str(), topo_path.string());
  }
  // Time zero: the whole wall-clock second of the first submission, the origin jobcomp's whole
  // seconds share. The backfill thread's phase within the second is read off the log.
  const long first_submit = static_cast<long>(std::floor(*std::min_element(submitted_at.begin(), submitted_at.end())));
  auto config = conf.config;
  if (const auto phase = backfill_phase(slurm)) config.bf_phase = *phase;
  const auto events = ctld_events(slurm);
  const auto ran = run_times(events);
  // Where slurmctld's 30 s time-limit checks fall: the completion of a job that outlived its
  // limit, on the twin's clock (slurmctld.log's seconds of the day; the machine runs on UTC).
  for (const auto& [id, i] : index_of_id) {
    if (trace[i].sleep_s <= trace[i].limit_min * 60.0) continue;
    for (const auto& e : events)
      if (!e.start && e.job == id)
        config.time_limit_phase_s = std::fmod(e.t - static_cast<double>(first_submit % 86400) + 86400.0, 30.0);
  }
  double overhead_sum = 0;
  std::vector<orch::JobSpec> jobs;
  std::vector<const SlurmCompletedJob*> real_by_job(trace.size(), nullptr);
  for (const auto& r : real) {
    const auto it = index_of_id.find(r.job_id);
    if (it == index_of_id.end()) continue;
    const auto& t = trace[it->second];
    real_by_job[it->second] = &r;
    orch::JobSpec j;
    j.id = std::stoi(r.job_id);
    j.submit_s = submitted_at[it->second] - static_cast<double>(first_submit);
    j.request.nodes = t.nodes;
    j.time_limit_s = t.limit_min * 60.0;
    const auto seen = ran.find(r.job_id);
    j.run_s = seen != ran.end() ? seen->second : t.sleep_s + kLaunchAndCompletion_s;
    overhead_sum += j.run_s - t.sleep_s;
    j.nice = t.nice;
    jobs.push_back(j);
  }
  const auto twin = orch::simulate_slurm(layout, config, jobs);
  std::set<int> backfilled_by_ctld;
  for (const auto& e : events)
    if (e.start && e.backfill) backfilled_by_ctld.insert(std::stoi(e.job));

  Comparison c;
  std::vector<double> real_start, twin_start;
  std::ostringstream table;
  table << "job nodes sleep limit nice | real: priority submit start nodes | twin: priority start nodes\n";
  for (std::size_t k = 0; k < twin.jobs.size(); ++k) {
    const auto& tj = twin.jobs[k];
    const auto it = index_of_id.find(std::to_string(tj.id));
    const auto* r = real_by_job[it->second];
    const auto& t = trace[it->second];
    const double rs = static_cast<double>(r->start_time - first_submit);
    // Compared as Slurm records them: whole seconds.
    const double ts = std::floor(tj.start_s);
    real_start.push_back(rs);
    twin_start.push_back(ts);
    c.real_mean_wait += static_cast<double>(r->start_time - r->submit_time);
    c.twin_mean_wait += ts - std::floor(tj.submit_s);
    const std::string twin_nodes = orch::hostlist(layout, tj.nodes);
    table << tj.id << " " << t.nodes << " " << t.sleep_s << " " << t.limit_min << " " << t.nice << " | "
          << real_priority[std::to_string(tj.id)] << " " << r->submit_time - first_submit << " " << rs << " "
          << r->node_list << " | " << tj.priority << " " << ts << " " << twin_nodes << (tj.backfilled ? " (bf)" : "")
          << "\n";
    if (c.real.empty()) {
      c.real.resize(trace.size());
      c.twin.resize(trace.size());
    }
    auto& ro = c.real[it->second];
    ro.start = rs;
    ro.nodes = expand_slurm_hostlist(r->node_list);
    std::sort(ro.nodes.begin(), ro.nodes.end());
    ro.backfilled = backfilled_by_ctld.count(tj.id) > 0;
    auto& to = c.twin[it->second];
    to.start = ts;
    for (int n : tj.nodes) to.nodes.push_back(layout.node_names[static_cast<std::size_t>(n)]);
    std::sort(to.nodes.begin(), to.nodes.end());
    to.backfilled = tj.backfilled;
    if (t.nodes > 1) {
      ++c.placement_checked;
      auto real_nodes = expand_slurm_hostlist(r->node_list);
      std::vector<std::string> twin_names;
      for (int n : tj.nodes) twin_names.push_back(layout.node_names[static_cast<std::size_t>(n)]);
      std::sort(real_nodes.begin(), real_nodes.end());
      std::sort(twin_names.begin(), twin_names.end());
      c.placement_same += real_nodes == twin_names;
    }
  }
  if (!twin.jobs.empty()) {
    c.real_mean_wait /= static_cast<double>(twin.jobs.size());
    c.twin_mean_wait /= static_cast<double>(twin.jobs.size());
  }
  c.tau = orch::kendall_tau(real_start, twin_start);
  // This run's starts and completions only (a cluster may have replayed other traces before).
  std::vector<CtldEvent> own;
  for (const auto& e : events)
    if (index_of_id.count(e.job)) own.push_back(e);
  replay_placements(own, layout, conf.config.placement, c, table);
  table << "launch and completion beyond the sleep (slurmctld.log), mean over jobs: "
        << (jobs.empty() ? 0.0 : overhead_sum / static_cast<double>(jobs.size())) << " s\n";
  c.table = table.str();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << c.table << "Kendall tau-b " << c.tau << "; mean wait real " << c.real_mean_wait << " s, twin "
            << c.twin_mean_wait << " s; same nodes end to end " << c.placement_same << "/" << c.placement_checked
            << ", decision by decision " << c.decisions_same << "/" << c.decisions_checked << "; wall " << wall
            << " s\n";
  return c;
}

void expect_agreement(const Comparison& c) {
  EXPECT_GE(c.tau, 0.9) << c.table;
  EXPECT_GT(c.real_mean_wait, 5.0) << "the workload should queue; it does not test the scheduler otherwise";
  EXPECT_LE(std::abs(c.twin_mean_wait - c.real_mean_wait), 0.10 * c.real_mean_wait) << c.table;
  EXPECT_GT(c.decisions_checked, 0) << c.table;
  EXPECT_EQ(c.decisions_same, c.decisions_checked) << c.table;
}

// --- The differential harness (issue 40) ------------------------------------------------------

/// A seeded random trace for a cluster of `nodes` nodes: sizes from 1 node to the whole cluster,
/// sleeps in tenths of a second (so that some completions fall on a backfill pass's second and
/// some do not), limits of 1-3 min (above the sleeps; with `timeouts`, one job in eight, of 1 or
/// 2 nodes, sleeps past a 1 min limit and ends TIMEOUT), nice 0-300 on a third of the jobs, and
/// bursts: a quarter of the submissions follow the previous one by 0.05 s.
std::vector<TraceJob> random_trace(unsigned seed, int jobs, int nodes, double mean_gap_s, double lo_s, double hi_s,
                                   bool timeouts) {
  std::mt19937 rng(seed);
  std::vector<int> sizes;
  for (int n = 1; n <= nodes; n = n < 4 ? n + 1 : n + n / 2) sizes.push_back(n);
  if (sizes.back() != nodes) sizes.push_back(nodes);
  std::uniform_int_distribution<std::size_t> size(0, sizes.size() - 1);
  std::exponential_distribution<double> gap(1.0 / mean_gap_s);
  std::uniform_int_distribution<int> tenths(static_cast<int>(lo_s * 10), static_cast<int>(hi_s * 10));
  std::uniform_int_distribution<int> limit(1, 3), nice(1, 3), one_in(0, 23);
  std::vector<TraceJob> out;
  double t = 0;
  for (int i = 0; i < jobs; ++i) {
    const int draw = one_in(rng);
    if (i > 0) t += draw < 6 ? 0.05 : gap(rng);
    TraceJob j{t, sizes[size(rng)], tenths(rng) / 10.0, limit(rng), draw % 3 == 0 ? nice(rng) * 100 : 0};
    if (timeouts && draw % 8 == 1) {
      j.sleep_s = 62 + tenths(rng) % 30 / 10.0;
      j.limit_min = 1;
      j.nodes = 1 + draw % 2;
    }
    out.push_back(j);
  }
  return out;
}

/// Two runs of one trace compared decision by decision: the order of the starts (every pair of
/// jobs ordered alike, ties alike), the node lists, who was backfilled, and start times.
struct DecisionDiff {
  int jobs = 0, same_nodes = 0, same_backfill = 0;
  bool same_order = true;
  double median_start_s = 0, max_start_s = 0;
  [[nodiscard]] bool identical() const { return same_order && same_nodes == jobs && same_backfill == jobs; }
};

DecisionDiff diff(const std::vector<JobOutcome>& a, const std::vector<JobOutcome>& b) {
  DecisionDiff d;
  d.jobs = static_cast<int>(a.size());
  std::vector<double> gaps;
  auto sign = [](double v) { return (v > 0) - (v < 0); };
  for (std::size_t i = 0; i < a.size(); ++i) {
    d.same_nodes += a[i].nodes == b[i].nodes;
    d.same_backfill += a[i].backfilled == b[i].backfilled;
    gaps.push_back(std::abs(a[i].start - b[i].start));
    for (std::size_t k = i + 1; k < a.size(); ++k)
      if (sign(a[i].start - a[k].start) != sign(b[i].start - b[k].start)) d.same_order = false;
  }
  if (!gaps.empty()) {
    std::sort(gaps.begin(), gaps.end());
    d.median_start_s = gaps[gaps.size() / 2];
    d.max_start_s = gaps.back();
  }
  return d;
}

std::string describe(const std::string& name, const DecisionDiff& d) {
  return fmt::format("{}: {} order, nodes {}/{}, backfilled {}/{}, start diff median {:g} s max {:g} s{}", name,
                     d.same_order ? "same" : "different", d.same_nodes, d.jobs, d.same_backfill, d.jobs,
                     d.median_start_s, d.max_start_s, d.identical() ? " (identical decisions)" : "");
}

/// Real Slurm twice and the twin, on one trace: the twin against each real run, and the real
/// runs against each other (their spread).
struct Differential {
  DecisionDiff real_a_b, twin_a, twin_b;
  int placements_checked = 0, placements_same = 0;  ///< node selection replayed from slurmctld.log
};

Differential differential(const SlurmLoopbackOptions& options, const std::vector<TraceJob>& trace) {
  Differential out;
  SlurmLoopback slurm(options);
  const auto a = run_both(slurm, trace);
  const auto b = run_both(slurm, trace);
  out.real_a_b = diff(a.real, b.real);
  out.twin_a = diff(a.twin, a.real);
  out.twin_b = diff(b.twin, b.real);
  out.placements_checked = a.decisions_checked + b.decisions_checked;
  out.placements_same = a.decisions_same + b.decisions_same;
  std::cout << describe("real run 1 vs real run 2", out.real_a_b) << "\n"
            << describe("twin vs real run 1", out.twin_a) << "\n"
            << describe("twin vs real run 2", out.twin_b) << "\n";
  return out;
}

/// The issue's criterion for one trace: where real Slurm repeats itself, the twin's decisions
/// are identical to a real run's with start times within 2 s at the median and 5 s at most;
/// where it does not, the twin is as close to each real run as the runs are to each other.
void expect_within_real_spread(const Differential& d) {
  if (d.real_a_b.identical()) {
    EXPECT_TRUE(d.twin_a.identical()) << describe("twin vs real run 1", d.twin_a);
    EXPECT_LE(d.twin_a.median_start_s, 2.0);
    EXPECT_LE(d.twin_a.max_start_s, 5.0);
    return;
  }
  for (const auto* t : {&d.twin_a, &d.twin_b}) {
    EXPECT_GE(t->same_nodes, d.real_a_b.same_nodes);
    EXPECT_GE(t->same_backfill, d.real_a_b.same_backfill);
    EXPECT_LE(t->median_start_s, std::max(2.0, d.real_a_b.median_start_s));
  }
}

SlurmLoopbackOptions two_leaf_cluster() {
  SlurmLoopbackOptions options;
  options.nodes = 8;
  options.topology_conf =
      "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=leaf2 Nodes=n[5-8]\nSwitchName=spine Switches=leaf[1-2]\n";
  return options;
}

// The small differential run (CI, about 80 s): one seeded random trace of 12 jobs on 8 nodes
// under two leaves, replayed twice on the real slurmctld and once on the twin per run; prints the
// three diffs. Asserted here: both real runs complete every job (run_both), the harness sees
// every start, and every start gets the nodes the twin's selection picks from the nodes free at
// that moment in slurmctld.log. The issue's criterion (expect_within_real_spread) is asserted by
// the long run: on this trace the twin is not yet within real Slurm's spread (see
// docs/models/orchestration.md, "Differences from real Slurm").
TEST(SchedulerTwinDifferential, RandomTraceAgainstTwoRealRuns) {
  FMSIM_SKIP_WITHOUT_SLURM();
  const auto trace = random_trace(40, 12, 8, 1.0, 1.0, 6.0, false);
  const auto d = differential(two_leaf_cluster(), trace);
  EXPECT_EQ(d.real_a_b.jobs, static_cast<int>(trace.size()));
  EXPECT_EQ(d.twin_a.jobs, static_cast<int>(trace.size()));
  EXPECT_EQ(d.placements_checked, 2 * static_cast<int>(trace.size()));
  EXPECT_EQ(d.placements_same, d.placements_checked);
}

// The long run (`make test-slurm-long`, FMSIM_SLURM_LONG=<traces>): that many seeded traces of
// 20 jobs, with time-outs, each replayed twice (about 4 min a trace); prints the figures over all
// traces.
TEST(SchedulerTwinDifferential, ManyRandomTraces) {
  FMSIM_SKIP_WITHOUT_SLURM();
  const char* env = std::getenv("FMSIM_SLURM_LONG");
  if (env == nullptr) GTEST_SKIP() << "set FMSIM_SLURM_LONG=<traces> (make test-slurm-long)";
  const int traces = std::max(1, std::atoi(env));
  int repeatable = 0, twin_identical = 0;
  std::vector<double> medians, maxima;
  for (int k = 0; k < traces; ++k) {
    const auto d =
        differential(two_leaf_cluster(), random_trace(1000 + static_cast<unsigned>(k), 20, 8, 1.5, 1.0, 8.0, true));
    repeatable += d.real_a_b.identical();
    twin_identical += d.twin_a.identical();
    medians.push_back(d.twin_a.median_start_s);
    maxima.push_back(d.twin_a.max_start_s);
    expect_within_real_spread(d);
  }
  std::sort(medians.begin(), medians.end());
  std::cout << fmt::format(
      "{} traces: real Slurm repeated itself on {}; twin identical to real run 1 on {}; twin start diff "
      "median of medians {:g} s, largest {:g} s\n",
      traces, repeatable, twin_identical, medians[medians.size() / 2], *std::max_element(maxima.begin(), maxima.end()));
}

// Workload 1: FIFO priority (priority/basic) with backfill on 8 flat nodes: 18 jobs of 1-8 nodes.
TEST(SchedulerTwin, BackfillBasicPriorityMatchesRealSlurm) {
  FMSIM_SKIP_WITHOUT_SLURM();
  SlurmLoopbackOptions options;
  options.nodes = 8;
  SlurmLoopback slurm(options);
  expect_agreement(run_both(slurm, synthetic_trace(18, 0.8, {1, 2, 4, 8, 3}, 2, 9, 11, false)));
}

// Workload 2: priority/multifactor (job size weight, PriorityFavorSmall=YES) and --nice, on a
// workload whose order is fixed by priorities alone (blocked_burst_trace): submitted while a job
// holds every node, priorities all distinct. PriorityWeightAge stays 0: the age factor moves by
// the second and is recomputed on slurmctld's own clock, so it would bring the load back in;
// fair-share and QOS factors need slurmdbd (not started here), and are unit-tested instead
// (tests/orchestration/fair_share_test.cpp).
TEST(SchedulerTwin, MultifactorPriorityMatchesRealSlurm) {
  FMSIM_SKIP_WITHOUT_SLURM();
  SlurmLoopbackOptions options;
  options.nodes = 8;
  options.priority_type = "priority/multifactor";
  options.extra_conf_lines = {"PriorityWeightJobSize=1000", "PriorityWeightAge=0", "PriorityFavorSmall=YES",
                              "PriorityCalcPeriod=1"};
  SlurmLoopback slurm(options);
  // A 36 s blocker: waits of about 40 s. Whether slurmctld starts the jobs freed by a completion
  // from its main loop at once or from the next backfill pass (up to bf_interval later) varies
  // with the machine's load: the real mean wait moved by up to 2.7 s over runs of this workload
  // (16 s blocker: 21.0-22.3 s real, 22.6-24.0 s twin), a few percent of a 40 s wait.
  const auto trace = blocked_burst_trace(12, 36, {1, 2, 3, 4}, 3, 9, 23);
  // The premise: every job's priority differs (size step 78 > largest nice 65).
  std::set<int> priorities;
  for (std::size_t i = 1; i < trace.size(); ++i) {
    const double n = trace[i].nodes;
    priorities.insert(static_cast<int>(std::floor(1000.0 * ((8 - n) / 8 + (32 - n) / 32) / 2)) - trace[i].nice);
  }
  ASSERT_EQ(priorities.size(), trace.size() - 1);
  expect_agreement(run_both(slurm, trace));
}

// Workload 3: topology/tree, 12 nodes under 3 leaf switches of 4: every start gets the nodes
// fmsim's tree selection picks (the check every workload makes, here with switches).
TEST(SchedulerTwin, TreeTopologyPlacementMatchesRealSlurm) {
  FMSIM_SKIP_WITHOUT_SLURM();
  SlurmLoopbackOptions options;
  options.nodes = 12;
  options.topology_conf =
      "SwitchName=leaf1 Nodes=n[1-4]\nSwitchName=leaf2 Nodes=n[5-8]\nSwitchName=leaf3 Nodes=n[9-12]\n"
      "SwitchName=spine Switches=leaf[1-3]\n";
  SlurmLoopback slurm(options);
  expect_agreement(run_both(slurm, synthetic_trace(20, 0.5, {2, 3, 4, 6, 8}, 2, 9, 37, false)));
}

}  // namespace
}  // namespace fmsim::testing
