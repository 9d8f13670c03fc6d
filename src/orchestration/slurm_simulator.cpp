#include "orchestration/slurm_simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unordered_set>

#include "core/error.hpp"
#include "core/sim_time.hpp"
#include "engine/simulator.hpp"
#include "orchestration/tree_select.hpp"

namespace fmsim::orchestration {

std::string to_string(JobState state) {
  switch (state) {
    case JobState::Pending: return "PENDING";
    case JobState::Running: return "RUNNING";
    case JobState::Completed: return "COMPLETED";
    case JobState::Timeout: return "TIMEOUT";
    case JobState::Cancelled: return "CANCELLED";
    case JobState::NodeFail: return "NODE_FAIL";
    case JobState::Preempted: return "PREEMPTED";
  }
  return "UNKNOWN";
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  FMSIM_CHECK(a.size() == b.size(), "kendall_tau needs two rankings of the same items");
  const std::size_t n = a.size();
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
        continue;
      }
      if (db == 0) {
        ++ties_b;
        continue;
      }
      if ((da > 0) == (db > 0))
        ++concordant;
      else
        ++discordant;
    }
  const double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return denom > 0 ? (concordant - discordant) / denom : 1.0;
}

namespace {

using core::SimTime;

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
/// Later than any event: a pass not asked for, a limit not set.
constexpr SimTime kNever = SimTime::max();
/// Earlier than any event, yet far enough from the range's end that adding an interval to it
/// cannot overflow.
constexpr SimTime kLongAgo = SimTime::from_ns(std::numeric_limits<std::int64_t>::min() / 2);
/// "Not set" for a job's start, SIGTERM and kill times (simulated time starts at 0).
constexpr SimTime kUnset = SimTime::from_ns(-kNsPerSecond);

/// Seconds as given in the inputs and settings (a double) to simulated time, to the nearest
/// nanosecond: the whole seconds exactly, then the fraction, so that whole seconds plus decimal
/// phases and delays (0.5 s, 0.05 s, 2e-6 s) are exact sums whatever the magnitude.
SimTime to_time(double s) {
  // Clamped to 4e9 s (about 127 years; the inputs are bounded to 10 years before they come here),
  // so that the sum of two such times stays within int64 nanoseconds; NaN never reaches here.
  FMSIM_CHECK(!std::isnan(s), "cluster twin: a time that is not a number");
  constexpr double kMax = 4e9;
  s = std::clamp(s, -kMax, kMax);
  const double whole = std::floor(s);
  return SimTime::from_ns(static_cast<std::int64_t>(whole) * kNsPerSecond + std::llround((s - whole) * 1e9));
}

/// Simulated time in seconds for the outputs: ns / 1e9, one correctly rounded division (so a
/// time of 1722.55 s reads 1722.55), exact operands below 2^53 ns (104 days); beyond that the
/// whole seconds and the fraction are converted apart.
double to_seconds(SimTime t) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  const std::int64_t ns = t.ns();
  if (ns < kExact && ns > -kExact) return static_cast<double>(ns) / 1e9;
  return static_cast<double>(ns / kNsPerSecond) + static_cast<double>(ns % kNsPerSecond) / 1e9;
}

/// floor(a / b) and ceil(a / b) for b > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && (a < 0) ? 1 : 0); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + ((a % b != 0) && (a > 0) ? 1 : 0); }

/// The whole second at or before t (slurmctld's time_t).
SimTime floor_second(SimTime t) { return SimTime::from_ns(floor_div(t.ns(), kNsPerSecond) * kNsPerSecond); }

/// A span `d` scaled by `factor` (a placement's slowdown), to the nearest nanosecond.
SimTime scaled(SimTime d, double factor) {
  return factor == 1.0 ? d : SimTime::from_ns(std::llround(static_cast<double>(d.ns()) * factor));
}
/// A span `d` divided by `factor`, to the nearest nanosecond.
SimTime unscaled(SimTime d, double factor) {
  return factor == 1.0 ? d : SimTime::from_ns(std::llround(static_cast<double>(d.ns()) / factor));
}

/// The twin's events; their order is the engine priority of events at the same instant.
enum class EventKind {
  NodeRelease,
  NodeBack,
  JobEnd,
  PreemptKill,
  ReservationEdge,
  Stop,
  NodeFail,
  Submit,
  Recalc,
  MainSched,
  BatchSched,
  FullSched,
  Backfill
};

constexpr int kCompleting = -2;  ///< node_job_ of a node whose job ended and whose epilog runs

/// Engine priority of the end of an instant: after every event of that instant.
constexpr int kEndOfInstant = std::numeric_limits<int>::max();

/// What the events of one instant did, for the scheduling passes that follow them.
struct InstantFlags {
  bool changed = false, submitted = false, released = false, ended = false, run_main = false, run_backfill = false,
       periodic = false, full = false, stop = false;
};

/// The order Slurm sorts its job queue in (sort_job_queue2): PriorityTier, priority (higher
/// first), submit time, job id.
struct QueueKey {
  int tier;
  std::uint32_t priority;
  SimTime submit;
  int id;
  int job;
  bool operator<(const QueueKey& o) const {
    if (tier != o.tier) return tier > o.tier;
    if (priority != o.priority) return priority > o.priority;
    if (submit != o.submit) return submit < o.submit;
    return id < o.id;
  }
};

struct Job {
  JobSpec spec;
  int partition = 0;
  int qos = -1;
  SimTime submit;
  SimTime limit;     ///< effective time limit
  SimTime bf_limit;  ///< the limit rounded up to bf_resolution, as the backfill plans with it
  SimTime eligible;
  SimTime remaining;       ///< run time still to do (at full speed)
  SimTime start = kUnset;  ///< last start
  int generation = 0;
  std::uint32_t priority = 0;
  int assoc = 0;                 ///< fair-share user association
  int reservation = -1;          ///< index into SlurmConfig::reservations; -1 = none
  int running_pos = -1;          ///< index in Simulator::running_ while running
  SimTime signal = kUnset;       ///< selected for preemption: GraceTime over, SIGTERM sent at this time
  SimTime kill = kUnset;         ///< ... and its processes gone (exit or SIGKILL after KillWait) at this time
  SimTime planned_end = kUnset;  ///< while running: its end as the backfill plans it (planned_end())
  SimTime awaiting_victims_until = kUnset;  ///< a preemptor whose victims are in GraceTime/KillWait until then
  QueueKey key{};
  bool queued = false;
  long kueue_pass = -1;  ///< Kueue: the admission pass during or after which it was last queued
  int kueue_pos = -1;    ///< Kueue: index in its ClusterQueue's running list while running
  JobRecord rec;
};

/// The partition of a slurm.conf without PartitionName lines: every node, named as Slurm's examples do.
PartitionConfig default_partition() {
  PartitionConfig p;
  p.name = "batch";
  p.is_default = true;
  return p;
}

/// A job's time limit in its partition: its own, else DefaultTime, else MaxTime, capped at MaxTime.
double effective_time_limit(const PartitionConfig& part, double requested_s) {
  double limit_s = requested_s > 0 ? requested_s : (part.default_time_s > 0 ? part.default_time_s : part.max_time_s);
  if (part.max_time_s > 0 && limit_s > part.max_time_s) limit_s = part.max_time_s;  // Slurm rejects or caps; we cap
  if (limit_s <= 0) limit_s = 365 * 86400.0;  // no limit anywhere (Slurm's INFINITE): a year stands for it
  return limit_s;
}

SimTime round_up(SimTime t, SimTime res) {
  return res > SimTime::zero() ? SimTime::from_ns(ceil_div(t.ns(), res.ns()) * res.ns()) : t;
}

class Simulator {
 public:
  Simulator(const ClusterLayout& layout, const SlurmConfig& config, std::vector<JobSpec> specs,
            const SimulationOptions& options)
      : layout_(layout), config_(config), options_(options), n_(layout.nodes()) {
    if (config_.partitions.empty()) config_.partitions.push_back(default_partition());
    for (const auto& p : config_.partitions) {
      NodeSet s(n_, p.nodes.empty());
      for (int node : p.nodes) s.set(node);
      partition_nodes_.push_back(s);
      max_job_factor_ = std::max(max_job_factor_, p.priority_job_factor);
    }
    for (const auto& q : config_.qos) max_qos_priority_ = std::max(max_qos_priority_, q.priority);
    any_preemptable_ = any_preemptable_partition();
    pending_in_partition_.assign(config_.partitions.size(), 0);
    for (const auto& p : config_.partitions)
      if (p.preempt_mode.value_or(config_.preempt_mode) != PreemptMode::Off)
        lowest_preemptable_tier_ = std::min(lowest_preemptable_tier_, p.priority_tier);
    for (const auto& r : config_.reservations) {
      reservation_window_.emplace_back(to_time(r.start_s), to_time(r.end_s));
      NodeSet set(n_);
      for (int node : r.nodes) set.set(node);
      reservation_nodes_.push_back(set);
      if (r.capacity_block) {
        if (capacity_block_nodes_.size() == 0) capacity_block_nodes_ = NodeSet(n_);
        capacity_block_nodes_ |= set;
      }
    }
    free_ = NodeSet(n_, true);
    down_ = NodeSet(n_);
    completing_ = NodeSet(n_);
    node_job_.assign(static_cast<std::size_t>(n_), -1);
    spares_free_ = options_.failures.spares;
    jobs_.reserve(specs.size());
    for (auto& s : specs) {
      // find_workload_problem holds (simulate_slurm's precondition): every lookup succeeds.
      Job j;
      j.partition = config_.partition_index(s.partition);
      if (!s.qos.empty() && s.qos != "normal") j.qos = config_.qos_index(s.qos);
      const auto& part = config_.partitions[static_cast<std::size_t>(j.partition)];
      j.limit = to_time(effective_time_limit(part, s.time_limit_s));
      j.bf_limit = round_up(j.limit, bf_resolution_);
      j.remaining = to_time(s.run_s);
      j.submit = to_time(s.submit_s);
      j.eligible = j.submit;
      if (!s.reservation.empty()) {
        const auto& rs = config_.reservations;
        const auto it =
            std::find_if(rs.begin(), rs.end(), [&](const Reservation& r) { return r.name == s.reservation; });
        j.reservation = static_cast<int>(it - rs.begin());
        j.eligible = std::max(j.submit, to_time(it->start_s));
      }
      j.rec.id = s.id;
      j.rec.submit_s = s.submit_s;
      j.spec = std::move(s);
      jobs_.push_back(std::move(j));
    }
    // Submission order: Slurm assigns priorities (basic) in the order jobs arrive.
    order_.resize(jobs_.size());
    for (std::size_t i = 0; i < jobs_.size(); ++i) order_[i] = static_cast<int>(i);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      const auto& x = jobs_[static_cast<std::size_t>(a)].spec;
      const auto& y = jobs_[static_cast<std::size_t>(b)].spec;
      return std::tie(jobs_[static_cast<std::size_t>(a)].submit, x.id) <
             std::tie(jobs_[static_cast<std::size_t>(b)].submit, y.id);
    });
    if (config_.weight_fairshare > 0) {
      for (auto& j : jobs_)
        j.assoc = config_.associations.user_association(j.spec.account, j.spec.user.empty() ? "-" : j.spec.user);
      config_.associations.recompute(config_.fair_tree);
    }
    if (options_.kueue.enabled) setup_kueue();
  }

  SimulationResult run() {
    for (int j : order_) push<EventKind::Submit>(jobs_[static_cast<std::size_t>(j)].submit, j);
    if (config_.multifactor) push<EventKind::Recalc>(calc_period_);
    if (!options_.kueue.enabled && config_.sched_interval_s > 0)
      push<EventKind::FullSched>(sched_interval_ + background_phase_);
    // A reservation's start and end change who may use its nodes: both start a scheduling pass.
    for (const auto& [from, until] : reservation_window_) {
      push<EventKind::ReservationEdge>(from);
      push<EventKind::ReservationEdge>(until);
    }
    if (options_.horizon_s > 0) push<EventKind::Stop>(to_time(options_.horizon_s));
    const auto& f = options_.failures;
    if (f.rate_per_node_hour > 0) {
      rng_.seed(f.seed);
      schedule_next_failure(SimTime::zero());
    }
    series_.bucket_s = options_.utilisation_bucket_s;
    engine_.run();
    result_.end_s = to_seconds(now_);
    // Capacity Block nodes exist (and are paid for) only within their window.
    for (std::size_t i = 0; i < config_.reservations.size(); ++i)
      if (const auto& r = config_.reservations[i]; r.capacity_block) {
        const auto& [from, until] = reservation_window_[i];
        const SimTime present = std::max(SimTime::zero(), std::min(now_, until) - std::min(now_, from));
        result_.absent_node_s += static_cast<double>(r.nodes.size()) * to_seconds(now_ - present);
      }
    // Jobs left running at the horizon: their progress so far counts as useful.
    for (auto& j : jobs_)
      if (j.rec.state == JobState::Running) {
        const double ran = to_seconds(now_ - j.start) * j.spec.request.nodes;
        j.rec.useful_node_s += ran / j.rec.slowdown;
        j.rec.slow_placement_node_s += ran * (1 - 1 / j.rec.slowdown);
      }
    for (auto& j : jobs_) result_.jobs.push_back(j.rec);
    result_.series = series_;
    return result_;
  }

 private:
  /// Schedules an event of kind K on the engine; its priority orders it among the events of the
  /// same instant. The action captures 16 bytes, which std::function holds without allocating.
  template <EventKind K>
  void push(SimTime at, int a = 0, int b = 0) {
    engine_.schedule_at(
        at, [this, a, b](engine::Simulator&) { on_event(K, a, b); }, static_cast<int>(K));
  }

  /// One event. The first of an instant opens it (the series advance to it) and schedules its end
  /// after every other event of the instant, where the scheduling passes run once on what the
  /// events did: slurmctld's main and backfill loops react to the state, not to each event.
  void on_event(EventKind kind, int a, int b) {
    if (stopped_) return;
    const SimTime t = engine_.now();
    if (!instant_open_) {
      if (t > stop_at()) {  // no horizon given, and ten years simulated: see stop_at()
        stopped_ = true;
        return;
      }
      advance_to(t);
      flags_ = {};
      instant_open_ = true;
      engine_.schedule_at(
          t, [this](engine::Simulator&) { end_instant(); }, kEndOfInstant);
    }
    auto& f = flags_;
    switch (kind) {
      case EventKind::Submit:
        submit(a, t);
        f.submitted = true;
        break;
      case EventKind::JobEnd:
        if (jobs_[static_cast<std::size_t>(a)].generation == b &&
            jobs_[static_cast<std::size_t>(a)].rec.state == JobState::Running) {
          finish(a, t);
          f.ended = true;
        }
        break;
      case EventKind::PreemptKill:
        if (jobs_[static_cast<std::size_t>(a)].generation == b &&
            jobs_[static_cast<std::size_t>(a)].rec.state == JobState::Running) {
          preempt_kill(a, t);
          f.changed = true;
        }
        break;
      case EventKind::ReservationEdge: f.changed = true; break;
      case EventKind::NodeFail:
        node_fail(a, t);
        f.changed = true;
        break;
      case EventKind::NodeBack:
        node_back(a);
        f.changed = true;
        break;
      case EventKind::NodeRelease:
        node_release(a);
        f.released = true;
        break;
      case EventKind::Recalc:
        recalc_priorities(t);
        f.periodic = true;
        repeat_while_work<EventKind::Recalc>(t + calc_period_);
        break;
      case EventKind::MainSched:
        main_pending_ = kNever;
        f.run_main = true;
        break;
      case EventKind::FullSched:
        // controller.c, _slurmctld_background: every sched_interval a pass over the whole
        // queue (full_queue), which also sets last_sched_time.
        last_background_sched_ = floor_second(t);
        f.full = true;
        repeat_while_work<EventKind::FullSched>(t + sched_interval_);
        break;
      case EventKind::BatchSched:
        // controller.c, _slurmctld_background: schedule() with last_sched_time = now.
        batch_pending_ = false;
        last_background_sched_ = floor_second(t);
        if (request_main(t, std::max(t, last_main_ + sched_min_interval_))) f.run_main = true;
        break;
      case EventKind::Backfill:
        backfill_scheduled_ = false;
        f.run_backfill = true;
        break;
      case EventKind::Stop: f.stop = true; break;
    }
  }

  /// The end of an instant: the scheduling passes its events asked for.
  void end_instant() {
    instant_open_ = false;
    if (stopped_) return;
    const SimTime t = engine_.now();
    auto& f = flags_;
    if (f.stop) {
      stopped_ = true;
      return;
    }
    if (options_.kueue.enabled) {
      f.run_main = f.run_main || f.submitted || f.released || f.changed || f.ended;  // Kueue reacts at once
    } else {
      // slurmctld 22.05's main loop (job_scheduler.c, _schedule) runs when asked through
      // schedule(), at once unless sched_min_interval has not passed since the last run
      // (_sched_agent). Asked by: an epilog-complete report, whose nodes are now free
      // (proc_req.c, _slurm_rpc_epilog_complete); a batch submission, through the background
      // thread (batch_sched_pass()); a job's end only through its epilog report
      // (_slurm_rpc_complete_batch_script does not ask), unless nodes are freed at the end
      // itself (completing_s = 0); other changes (node failures and returns, preemption,
      // reservation edges) main_delay_s later.
      if (f.submitted) batch_sched_pass(t, f.run_main);
      if (f.released && request_main(t, std::max(t, last_main_ + sched_min_interval_))) f.run_main = true;
      if ((f.changed || (f.ended && config_.completing_s <= 0)) && request_main(t, t + main_delay_)) f.run_main = true;
    }
    // Job and node changes: slurmctld's last_job_update / last_node_update (whole seconds). A
    // priority recalculation changes pending jobs' priorities (priority_multifactor.c,
    // _set_priority: last_job_update = time(NULL)).
    if (f.submitted || f.released || f.changed || (f.periodic && !queue_.empty())) note_update(t);
    if (f.run_main || f.periodic || f.full) main_schedule(t, f.periodic || f.full);
    if (f.run_backfill) {
      last_pass_ = t;
      if (!queue_.empty()) {
        backfill(t);
        ++result_.backfill_passes;
      }
    }
    if (config_.backfill && !options_.kueue.enabled && !backfill_scheduled_ &&
        last_update_ >= floor_second(last_pass_)) {
      // backfill.c, _more_work(): another pass once anything changed in or after the second of
      // the last one (>= on whole seconds: a change in the pass's own second, before or after
      // it, counts, including the jobs that pass started).
      push<EventKind::Backfill>(next_backfill_check(t));
      backfill_scheduled_ = true;
    }
    update_fragmentation();
    if (active_jobs_ == 0 && submitted_ == static_cast<long>(jobs_.size()) && options_.horizon_s <= 0) stopped_ = true;
  }

  /// When the simulation stops at the latest: the horizon, or without one after ten simulated
  /// years, so that jobs that failures keep requeueing (each run longer than its nodes' time
  /// between failures) cannot keep it, and its series, going forever. Jobs unfinished then are
  /// reported as at a horizon.
  SimTime stop_at() const {
    constexpr SimTime kTenYears = SimTime::from_ns(315'576'000LL * kNsPerSecond);  // 10 x 365.25 days
    return options_.horizon_s > 0 ? to_time(options_.horizon_s) : kTenYears;
  }

  /// The backfill thread's first check at or after t that runs a pass. backfill.c, backfill_agent():
  /// after a pass the thread sleeps bf_interval (_my_sleep); a check that finds less than
  /// bf_interval whole seconds since the last pass, or no change since it (_more_work), sleeps one
  /// second (short_sleep) and checks again. So checks fall at last pass + bf_interval + k seconds,
  /// k = 0, 1, ...: within bf_interval of a pass, or within a second after an idle spell.
  SimTime next_backfill_check(SimTime t) const {
    const SimTime first = last_pass_ + bf_interval_;
    if (t <= first) return first;
    return first + SimTime::from_ns(ceil_div((t - first).ns(), kNsPerSecond) * kNsPerSecond);
  }

  /// A job or node changed at t: slurmctld's last_job_update / last_node_update = time(NULL).
  void note_update(SimTime t) { last_update_ = std::max(last_update_, floor_second(t)); }

  /// When slurmctld kills a job whose time limit runs out at `limit_end`: job_time_limit()
  /// (job_mgr.c) runs from the background thread every PERIODIC_TIMEOUT = 30 s (controller.c,
  /// _slurmctld_background) and times out jobs whose end_time (start in whole seconds + limit)
  /// is at least OverTimeLimit past; so at the first check at or after that. Kueue: at the limit.
  SimTime limit_kill_time(SimTime limit_end) const {
    if (options_.kueue.enabled) return limit_end;
    const SimTime due = floor_second(limit_end) + over_time_limit_;
    const SimTime period = time_limit_check_, phase = time_limit_phase_;
    if (period <= SimTime::zero()) return std::max(limit_end, due);
    return SimTime::from_ns(ceil_div((due - phase).ns(), period.ns()) * period.ns()) + phase;
  }

  /// A periodic event's next occurrence, while jobs are still to be submitted or to end.
  template <EventKind K>
  void repeat_while_work(SimTime at) {
    if (active_jobs_ > 0 || submitted_ < static_cast<long>(jobs_.size())) push<K>(at);
  }

  /// A main-loop pass at `at` (>= t): true when it is to run now, else queued as an event.
  bool request_main(SimTime t, SimTime at) {
    if (at <= t) return true;
    if (at < main_pending_) {
      push<EventKind::MainSched>(at);
      main_pending_ = at;
    }
    return false;
  }

  /// A batch submission's pass (queue_job_scheduler): the background thread, which wakes about
  /// once a second (controller.c, _slurmctld_background: ten 0.1 s sleeps), calls schedule() at
  /// its first wake-up at least batch_sched_delay whole seconds after the last time it did.
  /// batch_sched_delay = 0 is taken as at once (an idealisation for unit tests).
  void batch_sched_pass(SimTime t, bool& run_main) {
    if (config_.batch_sched_delay_s <= 0) {
      if (request_main(t, std::max(t, last_main_ + sched_min_interval_))) run_main = true;
      return;
    }
    if (batch_pending_) return;
    const SimTime phase = background_phase_;
    SimTime at = SimTime::from_ns(ceil_div((t - phase).ns(), kNsPerSecond) * kNsPerSecond) + phase;
    const SimTime earliest = last_background_sched_ + batch_sched_delay_;
    if (floor_second(at) < earliest) at = earliest + phase;
    push<EventKind::BatchSched>(at);
    batch_pending_ = true;
  }

  // --- time series ------------------------------------------------------------------------
  void advance_to(SimTime t) {
    if (t <= now_) return;
    const double busy = n_ - free_count() - down_count();
    const double queued = static_cast<double>(queue_.size());
    const double down = down_count();
    const double frag = fragmented_;
    SimTime a = now_;
    const std::int64_t bucket = bucket_.ns();
    while (a < t) {
      const auto k = static_cast<std::size_t>(a.ns() / bucket);
      const SimTime b = std::min(t, SimTime::from_ns((static_cast<std::int64_t>(k) + 1) * bucket));
      if (series_.busy_nodes.size() <= k) {
        series_.busy_nodes.resize(k + 1, 0.0);
        series_.queue_length.resize(k + 1, 0.0);
        series_.down_nodes.resize(k + 1, 0.0);
        series_.fragmented_nodes.resize(k + 1, 0.0);
      }
      const double w = static_cast<double>((b - a).ns()) / static_cast<double>(bucket);
      series_.busy_nodes[k] += busy * w;
      series_.queue_length[k] += queued * w;
      series_.down_nodes[k] += down * w;
      series_.fragmented_nodes[k] += frag * w;
      a = b;
    }
    now_ = t;
  }

  /// Free and failed nodes now: counted again only after a node changed (node_epoch_).
  int free_count() {
    if (free_count_epoch_ != node_epoch_) {
      free_count_ = free_.count();
      free_count_epoch_ = node_epoch_;
    }
    return free_count_;
  }
  int down_count() {
    if (down_count_epoch_ != node_epoch_) {
      down_count_ = down_.count();
      down_count_epoch_ = node_epoch_;
    }
    return down_count_;
  }

  /// Free nodes that cannot hold the largest waiting job.
  void update_fragmentation() {
    fragmented_ = 0;
    if (pending_sizes_.empty()) return;
    const int largest = *pending_sizes_.rbegin();
    if (capacity_block_nodes_.size() > 0) {
      NodeSet free = free_;  // Capacity Block nodes serve their own jobs only
      free.subtract(capacity_block_nodes_);
      const int count = free.count();
      if (count > 0 && (count < largest || !can_place(layout_, config_.placement, free, NodeRequest{largest})))
        fragmented_ = count;
      return;
    }
    const int free = free_count();
    if (free == 0) return;
    if (free < largest || !can_place(layout_, config_.placement, free_, NodeRequest{largest})) fragmented_ = free;
  }

  // --- priorities --------------------------------------------------------------------------
  std::uint32_t priority_of(const Job& j, SimTime t) {
    if (!config_.multifactor) return j.priority;
    const auto& part = config_.partitions[static_cast<std::size_t>(j.partition)];
    const double age =
        config_.max_age_s > 0 ? std::min(1.0, std::max(0.0, to_seconds(t - j.eligible)) / config_.max_age_s) : 0.0;
    double size = config_.favor_small ? static_cast<double>(n_ - j.spec.request.nodes) / n_
                                      : static_cast<double>(j.spec.request.nodes) / n_;
    if (config_.total_cpus > 0) {
      const double cpus = j.spec.cpus > 0 ? j.spec.cpus : j.spec.request.nodes;
      const double total = static_cast<double>(config_.total_cpus);
      size = (size + (config_.favor_small ? (total - cpus) / total : cpus / total)) / 2.0;
    }
    const double part_f = static_cast<double>(part.priority_job_factor) / std::max(1, max_job_factor_);
    const double qos_f =
        j.qos >= 0 && max_qos_priority_ > 0
            ? static_cast<double>(config_.qos[static_cast<std::size_t>(j.qos)].priority) / max_qos_priority_
            : 0.0;
    // Fair Tree (or classic) factor of the job's user association, as of the last recalculation.
    const double fs = config_.weight_fairshare > 0 ? config_.associations.fairshare(j.assoc) : 0.0;
    double p = config_.weight_age * age + config_.weight_fairshare * fs + config_.weight_job_size * size +
               config_.weight_partition * part_f + config_.weight_qos * qos_f;
    p = std::floor(p) - j.spec.nice;
    return static_cast<std::uint32_t>(std::clamp(p, 1.0, 4294967294.0));
  }

  void enqueue(int ji, SimTime t) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    j.priority = priority_of(j, t);
    j.key = {config_.partitions[static_cast<std::size_t>(j.partition)].priority_tier, j.priority, j.submit, j.spec.id,
             ji};
    queue_.insert(j.key);
    ++pending_in_partition_[static_cast<std::size_t>(j.partition)];
    j.queued = true;
    pending_sizes_.insert(j.spec.request.nodes);
    if (options_.kueue.enabled) {
      j.kueue_pass = kueue_pass_;
      auto& sizes = cq_pending_sizes_[static_cast<std::size_t>(cq_of_[static_cast<std::size_t>(ji)])];
      if (sizes.empty()) ++cqs_pending_;
      sizes.insert(j.spec.request.nodes);
    }
  }
  void dequeue(int ji) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    queue_.erase(j.key);
    --pending_in_partition_[static_cast<std::size_t>(j.partition)];
    j.queued = false;
    pending_sizes_.erase(pending_sizes_.find(j.spec.request.nodes));
    if (options_.kueue.enabled) {
      auto& sizes = cq_pending_sizes_[static_cast<std::size_t>(cq_of_[static_cast<std::size_t>(ji)])];
      sizes.erase(sizes.find(j.spec.request.nodes));
      if (sizes.empty()) --cqs_pending_;
    }
  }

  void recalc_priorities(SimTime t) {
    // Fair-share usage: running jobs' node-seconds since the last recalculation, then decay.
    const double dt = to_seconds(t - last_calc_);
    if (config_.weight_fairshare > 0) {
      // Usage decays by PriorityDecayHalfLife; running jobs add theirs since the last pass (jobs
      // that ended since were charged when they ended).
      auto& tree = config_.associations;
      tree.decay(config_.decay_half_life_s > 0 ? std::pow(0.5, dt / config_.decay_half_life_s) : 1.0);
      for (int ji : running_) charge_usage(jobs_[static_cast<std::size_t>(ji)], t);
      tree.recompute(config_.fair_tree);
    }
    last_calc_ = t;
    // Every pending job's new priority; the queue is rebuilt from the sorted keys in one pass
    // (the set of pending jobs, and so pending_sizes_, is unchanged).
    std::vector<QueueKey> keys;
    keys.reserve(queue_.size());
    for (const auto& k : queue_) {
      auto& j = jobs_[static_cast<std::size_t>(k.job)];
      j.priority = priority_of(j, t);
      j.key = {k.tier, j.priority, k.submit, k.id, k.job};
      keys.push_back(j.key);
    }
    std::sort(keys.begin(), keys.end());
    queue_ = std::set<QueueKey>(keys.begin(), keys.end());
  }

  /// Fair-share usage of a running job from the later of its start and the last recalculation to t
  /// (node-seconds; Slurm charges TRES-billing seconds, CPUs by default: proportional here).
  void charge_usage(const Job& j, SimTime t) {
    if (config_.weight_fairshare <= 0) return;
    const SimTime from = std::max(last_calc_, j.start);
    if (t > from) config_.associations.add_usage(j.assoc, to_seconds(t - from) * j.spec.request.nodes);
  }

  // --- job lifecycle -----------------------------------------------------------------------
  void submit(int ji, SimTime t) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    ++submitted_;
    ++active_jobs_;
    // priority/basic: each job one below the previous, less its nice value.
    basic_next_ = basic_next_ == 0 ? 0xFFFF0000u : basic_next_ - 1;
    const double p = static_cast<double>(basic_next_) - j.spec.nice;
    j.priority = static_cast<std::uint32_t>(std::clamp(p, 1.0, 4294967294.0));
    // Kueue: the WorkloadPriorityClass value (an int32), order kept in the unsigned key; equal
    // values fall to creation time, then id.
    if (options_.kueue.enabled)
      j.priority =
          static_cast<std::uint32_t>(static_cast<std::int64_t>(j.spec.priority_class) + (std::int64_t{1} << 31));
    enqueue(ji, t);
  }

  void start(int ji, const std::vector<int>& nodes, SimTime t, bool backfilled) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    dequeue(ji);
    for (int node : nodes) {
      free_.reset(node);
      node_job_[static_cast<std::size_t>(node)] = ji;
      ++node_epoch_;
    }
    if (options_.kueue.enabled) {
      const int cq = cq_of_[static_cast<std::size_t>(ji)];
      kueue_charge(cq, j.spec.request.nodes);
      auto& list = cq_running_[static_cast<std::size_t>(cq)];
      j.kueue_pos = static_cast<int>(list.size());
      list.push_back(ji);
    }
    j.awaiting_victims_until = kUnset;
    j.rec.state = JobState::Running;
    j.running_pos = static_cast<int>(running_.size());
    running_.push_back(ji);
    j.start = t;
    j.planned_end = planned_end(j);
    j.rec.start_s = to_seconds(t);
    note_update(t);  // slurmctld sets last_job_update when a job starts (backfill.c, _start_job)
    if (j.rec.first_start_s < 0) {
      j.rec.first_start_s = j.rec.start_s;
      j.rec.wait_s = to_seconds(t - j.submit);
    }
    j.rec.nodes = nodes;
    if (j.spec.deployment >= 0) j.rec.runs.emplace_back(j.rec.start_s, -1.0);
    j.rec.backfilled = backfilled;
    j.rec.priority = j.priority;
    j.rec.slowdown = options_.slowdown ? std::max(1.0, options_.slowdown(ji, nodes)) : 1.0;
    const SimTime end = std::min(t + run_time(j), limit_kill_time(t + j.limit));
    ++j.generation;
    push<EventKind::JobEnd>(end, ji, j.generation);
  }

  /// When the backfill plans a running job to free its nodes: start (in whole seconds) + time
  /// limit, or its kill time once it is selected for preemption (slurmctld moves its end time),
  /// rounded up to bf_resolution; kept with the job (it changes only at those two moments), so
  /// that a pass does not divide for every running job.
  SimTime planned_end(const Job& j) const {
    const SimTime limit_end = floor_second(j.start) + j.limit;
    const SimTime end = j.kill >= SimTime::zero() ? std::min(j.kill, limit_end) : limit_end;
    return round_up(end, bf_resolution_);
  }

  /// A requeued job's relaunch before its work resumes; none on its first start.
  SimTime restart_overhead(const Job& j) const { return j.rec.requeues > 0 ? restart_ : SimTime::zero(); }
  /// From a start to the end of the job's work if nothing stops it: the relaunch, then its
  /// remaining work at the speed of the nodes it got.
  SimTime run_time(const Job& j) const { return restart_overhead(j) + scaled(j.remaining, j.rec.slowdown); }

  /// Takes a job off the running list (swap with the last) and charges its fair-share usage.
  void stop_running(Job& j, SimTime t) {
    charge_usage(j, t);
    if (!j.rec.runs.empty()) j.rec.runs.back().second = to_seconds(t);
    const int last = running_.back();
    running_[static_cast<std::size_t>(j.running_pos)] = last;
    jobs_[static_cast<std::size_t>(last)].running_pos = j.running_pos;
    running_.pop_back();
    j.running_pos = -1;
  }

  void release_nodes(Job& j) {
    if (options_.kueue.enabled) {
      const int cq = cq_of_[static_cast<std::size_t>(&j - jobs_.data())];
      kueue_charge(cq, -j.spec.request.nodes);
      auto& list = cq_running_[static_cast<std::size_t>(cq)];
      const int last = list.back();
      list[static_cast<std::size_t>(j.kueue_pos)] = last;
      jobs_[static_cast<std::size_t>(last)].kueue_pos = j.kueue_pos;
      list.pop_back();
      j.kueue_pos = -1;
    }
    const bool completing = config_.completing_s > 0 && !options_.kueue.enabled;
    for (int node : j.rec.nodes) {
      if (completing) {
        // COMPLETING until slurmd reports the epilog done; that report starts no main-loop pass.
        node_job_[static_cast<std::size_t>(node)] = kCompleting;
        completing_.set(node);
        push<EventKind::NodeRelease>(now_ + completing_delay_, node);
        continue;
      }
      node_job_[static_cast<std::size_t>(node)] = -1;
      if (!down_.test(node)) free_.set(node);
      ++node_epoch_;
    }
  }

  void node_release(int node) {
    if (node_job_[static_cast<std::size_t>(node)] != kCompleting) return;
    node_job_[static_cast<std::size_t>(node)] = -1;
    completing_.reset(node);
    if (!down_.test(node)) free_.set(node);
    ++node_epoch_;
  }

  void finish(int ji, SimTime t) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    const double overhead = to_seconds(restart_overhead(j));
    const double slow = j.rec.slowdown;
    const int nodes = j.spec.request.nodes;
    if (t - j.start >= run_time(j)) {  // its work is done (else its time limit ran out)
      const double remaining = to_seconds(j.remaining);
      j.rec.state = JobState::Completed;
      j.rec.useful_node_s += remaining * nodes;
      j.rec.slow_placement_node_s += remaining * (slow - 1) * nodes;
      j.rec.lost_node_s += overhead * nodes;
      j.rec.run_done_s += remaining;
      j.remaining = SimTime::zero();
    } else {
      const double work = std::max(0.0, to_seconds(t - j.start) - overhead) / slow;  // at full speed
      j.rec.state = JobState::Timeout;
      // Work up to the time limit is kept (a job that checkpoints can resume it in a new job).
      j.rec.useful_node_s += work * nodes;
      j.rec.slow_placement_node_s += work * (slow - 1) * nodes;
      j.rec.lost_node_s += overhead * nodes;
      j.rec.run_done_s += work;
    }
    j.rec.end_s = to_seconds(t);
    j.signal = j.kill = kUnset;
    stop_running(j, t);
    release_nodes(j);
    --active_jobs_;
  }

  /// Stops a running job early (node failure or preemption); requeues it or ends it in `final_state`.
  /// `saved_at` >= 0: the job wrote a checkpoint of all its work up to that time (on SIGTERM).
  void interrupt(int ji, SimTime t, JobState final_state, bool requeue, SimTime saved_at = kUnset) {
    auto& j = jobs_[static_cast<std::size_t>(ji)];
    constexpr SimTime kZero = SimTime::zero();
    const SimTime overhead = restart_overhead(j);
    const SimTime work_end = j.signal >= kZero ? std::min(t, j.signal) : t;  // no progress after SIGTERM
    const SimTime work = std::max(kZero, work_end - j.start - overhead);
    const SimTime c = to_time(j.spec.checkpoint_interval_s);
    SimTime kept =
        c > kZero ? SimTime::from_ns(floor_div(work.ns(), c.ns()) * c.ns()) : kZero;  // wall time of work kept
    if (saved_at >= kZero) kept = std::max(kZero, saved_at - j.start - overhead);
    const double slow = j.rec.slowdown;
    const SimTime all = scaled(j.remaining, slow);
    kept = std::min(kept, all);
    j.signal = j.kill = kUnset;
    const int nodes = j.spec.request.nodes;
    const double kept_s = to_seconds(kept);
    j.rec.useful_node_s += kept_s / slow * nodes;
    j.rec.slow_placement_node_s += kept_s * (1 - 1 / slow) * nodes;
    j.rec.lost_node_s += to_seconds(t - j.start - kept) * nodes;
    j.rec.run_done_s += kept_s / slow;
    j.remaining = kept >= all ? kZero : std::max(kZero, j.remaining - unscaled(kept, slow));
    ++j.generation;  // its pending JobEnd event is now stale
    stop_running(j, t);
    release_nodes(j);
    if (requeue) {
      ++j.rec.requeues;
      j.rec.state = JobState::Pending;
      j.eligible = t;
      enqueue(ji, t);
    } else {
      j.rec.state = final_state;
      j.rec.end_s = to_seconds(t);
      --active_jobs_;
    }
  }

  void schedule_next_failure(SimTime t) {
    const double rate = options_.failures.rate_per_node_hour / 3600.0 * n_;
    std::exponential_distribution<double> gap(rate);
    std::uniform_int_distribution<int> pick(0, n_ - 1);
    const SimTime next = t + to_time(gap(rng_));
    if (next > stop_at()) return;
    push<EventKind::NodeFail>(next, pick(rng_));
  }

  void node_fail(int node, SimTime t) {
    const auto& f = options_.failures;
    // Keep failures going while there is work.
    if (active_jobs_ > 0 || submitted_ < static_cast<long>(jobs_.size())) schedule_next_failure(t);
    if (down_.test(node)) return;
    ++result_.node_failures;
    down_.set(node);
    free_.reset(node);
    ++node_epoch_;
    ++kueue_epoch_;  // the free nodes changed
    const int ji = node_job_[static_cast<std::size_t>(node)];
    if (ji >= 0) {
      // Health checks find it after detect_s; the job is requeued (JobRequeue) or ends NODE_FAIL.
      // Modelled at once, with the detection time added to the lost work.
      auto& j = jobs_[static_cast<std::size_t>(ji)];
      j.rec.lost_node_s += f.detect_s * j.spec.request.nodes;
      interrupt(ji, t, JobState::NodeFail, j.spec.requeue && config_.requeue_default);
    }
    while (!spare_returns_.empty() && spare_returns_.front() <= t) {
      spare_returns_.erase(spare_returns_.begin());
      ++spares_free_;
    }
    if (spares_free_ > 0) {
      // A spare takes the failed node's place (HyperPod auto-resume) after replace_s; the spare
      // pool gets the repaired node back after repair_s.
      --spares_free_;
      ++result_.spares_used;
      push<EventKind::NodeBack>(t + replace_, node);
      spare_returns_.push_back(t + repair_);
    } else {
      push<EventKind::NodeBack>(t + repair_, node);
    }
  }

  void node_back(int node) {
    while (!spare_returns_.empty() && spare_returns_.front() <= now_) {
      spare_returns_.erase(spare_returns_.begin());
      ++spares_free_;
    }
    down_.reset(node);
    if (node_job_[static_cast<std::size_t>(node)] == -1) free_.set(node);
    ++node_epoch_;
    ++kueue_epoch_;  // the free nodes changed
  }

  // --- the main scheduling loop ------------------------------------------------------------
  NodeSet usable_for(const Job& j, SimTime t) const {
    NodeSet s = free_;
    s &= partition_nodes_[static_cast<std::size_t>(j.partition)];
    apply_reservations(j, t, t + j.limit, s);
    return s;
  }

  /// Removes from `nodes` what reservations forbid job `j` over [from, until): a job bound to a
  /// reservation runs only on its nodes and only within its window; any other job may not use
  /// a reservation's nodes during its window, nor a Capacity Block's nodes ever.
  void apply_reservations(const Job& j, SimTime from, SimTime until, NodeSet& nodes) const {
    if (config_.reservations.empty()) return;
    if (j.reservation >= 0) {
      const auto& [start, end] = reservation_window_[static_cast<std::size_t>(j.reservation)];
      if (from < start || until > end)
        nodes = NodeSet(n_);
      else
        nodes &= reservation_nodes_[static_cast<std::size_t>(j.reservation)];
      return;
    }
    for (std::size_t i = 0; i < config_.reservations.size(); ++i) {
      const auto& [start, end] = reservation_window_[i];
      if (config_.reservations[i].capacity_block || (start < until && end > from))
        nodes.subtract(reservation_nodes_[i]);
    }
  }

  /// select_nodes under the configured placement (topology/tree through the flattened tree).
  /// `free`: available.count() when the caller has it (-1: unknown).
  std::vector<int> pick_nodes(const NodeSet& available, const NodeRequest& request, int free = -1) {
    if (config_.placement == Placement::Tree && !layout_.switches.empty())
      return tree_.select(available, request.nodes, free);
    return select_nodes(layout_, config_.placement, available, request);
  }

  bool can_preempt(const Job& hi, const Job& lo) const {
    if (config_.preempt_type == PreemptType::PartitionPrio)
      return config_.partitions[static_cast<std::size_t>(lo.partition)].priority_tier <
             config_.partitions[static_cast<std::size_t>(hi.partition)].priority_tier;
    if (config_.preempt_type == PreemptType::Qos && hi.qos >= 0) {
      const auto& allowed = config_.qos[static_cast<std::size_t>(hi.qos)].preempt;
      const std::string lo_qos = lo.qos >= 0 ? config_.qos[static_cast<std::size_t>(lo.qos)].name : "normal";
      return std::find(allowed.begin(), allowed.end(), lo_qos) != allowed.end();
    }
    return false;
  }

  /// The PreemptMode that applies to a job: its partition's PreemptMode= where the partition sets
  /// one, which overrides the cluster-wide mode for the jobs of that partition (slurm.conf(5)),
  /// otherwise the cluster-wide PreemptMode. A job under OFF is never preempted.
  PreemptMode preempt_mode_of(const Job& j) const {
    return config_.partitions[static_cast<std::size_t>(j.partition)].preempt_mode.value_or(config_.preempt_mode);
  }

  /// Whether any job can be preempted at all: some partition's mode (its own or the cluster's) is on.
  bool any_preemptable_partition() const {
    return std::any_of(config_.partitions.begin(), config_.partitions.end(), [&](const PartitionConfig& p) {
      return p.preempt_mode.value_or(config_.preempt_mode) != PreemptMode::Off;
    });
  }

  bool try_preempt(int ji, SimTime t) {
    if (config_.preempt_type == PreemptType::None || !any_preemptable_) return false;
    const auto& j = jobs_[static_cast<std::size_t>(ji)];
    if (t < j.awaiting_victims_until) return false;  // its victims are on their way out
    // Under partition_prio a job preempts only jobs of lower tiers: none when its own tier is at
    // most the lowest preemptable one (every node would be refused below; a long queue of
    // lowest-tier jobs beside a serving partition would test every node for each of them).
    if (config_.preempt_type == PreemptType::PartitionPrio &&
        config_.partitions[static_cast<std::size_t>(j.partition)].priority_tier <= lowest_preemptable_tier_)
      return false;
    NodeSet pool = usable_for(j, t);
    for (int node = 0; node < n_; ++node) {
      const int r = node_job_[static_cast<std::size_t>(node)];
      if (r >= 0 && !down_.test(node) && partition_nodes_[static_cast<std::size_t>(j.partition)].test(node) &&
          jobs_[static_cast<std::size_t>(r)].kill < SimTime::zero() &&
          preempt_mode_of(jobs_[static_cast<std::size_t>(r)]) != PreemptMode::Off &&
          can_preempt(j, jobs_[static_cast<std::size_t>(r)]))
        pool.set(node);
    }
    apply_reservations(j, t, t + j.limit, pool);
    const auto nodes = pick_nodes(pool, j.spec.request);
    if (nodes.empty()) return false;
    std::set<int> victims;
    for (int node : nodes)
      if (node_job_[static_cast<std::size_t>(node)] >= 0) victims.insert(node_job_[static_cast<std::size_t>(node)]);
    SimTime gone = t;
    for (int v : victims) {
      ++result_.preemptions;
      auto& victim = jobs_[static_cast<std::size_t>(v)];
      // GraceTime (the victim's partition, or its QOS under preempt/qos): the job runs on, then
      // gets SIGTERM; its processes end when it exits (after writing a checkpoint, if it does) or
      // at SIGKILL, KillWait after the SIGTERM.
      victim.signal = t + grace_time(victim);
      victim.kill = victim.signal + exit_after_sigterm(victim);
      victim.planned_end = planned_end(victim);
      if (victim.kill > t) {
        gone = std::max(gone, victim.kill);
        push<EventKind::PreemptKill>(victim.kill, v, victim.generation);
      } else {
        preempt_kill(v, t);
      }
    }
    if (gone > t) {
      // slurmctld keeps the preemptor pending until its victims' nodes are free.
      jobs_[static_cast<std::size_t>(ji)].awaiting_victims_until = gone;
      return false;
    }
    start(ji, nodes, t, false);
    return true;
  }

  SimTime grace_time(const Job& victim) const {
    if (config_.preempt_type == PreemptType::Qos)
      return victim.qos >= 0 ? to_time(config_.qos[static_cast<std::size_t>(victim.qos)].grace_time_s)
                             : SimTime::zero();
    return to_time(config_.partitions[static_cast<std::size_t>(victim.partition)].grace_time_s);
  }

  /// From SIGTERM to the job's processes being gone: the time it takes to write its checkpoint
  /// and exit, cut at KillWait by SIGKILL; at once for a job that does not handle SIGTERM.
  SimTime exit_after_sigterm(const Job& j) const {
    return j.spec.sigterm_checkpoint_s > 0 ? to_time(std::min(j.spec.sigterm_checkpoint_s, config_.kill_wait_s))
                                           : SimTime::zero();
  }

  /// The end of a preempted job: requeued (REQUEUE and --requeue) or ended PREEMPTED. Work kept:
  /// all of it up to the SIGTERM when the job wrote its checkpoint before KillWait ran out;
  /// otherwise up to its last periodic checkpoint.
  void preempt_kill(int v, SimTime t) {
    auto& victim = jobs_[static_cast<std::size_t>(v)];
    const bool saved = victim.spec.sigterm_checkpoint_s > 0 && victim.spec.sigterm_checkpoint_s <= config_.kill_wait_s;
    const SimTime signal = victim.signal >= SimTime::zero() ? victim.signal : t;
    const bool requeue = preempt_mode_of(victim) == PreemptMode::Requeue && victim.spec.requeue;
    interrupt(v, t, JobState::Preempted, requeue, saved ? signal : kUnset);
  }

  void main_schedule(SimTime t, bool full) {
    ++result_.scheduling_passes;
    last_main_ = t;
    if (options_.kueue.enabled) {
      kueue_schedule(t);
      return;
    }
    std::vector<char> blocked(config_.partitions.size(), 0);
    std::size_t blocked_count = 0;
    int tested = 0;
    const int depth = full ? std::numeric_limits<int>::max() : config_.default_queue_depth;
    for (auto it = queue_.begin(); it != queue_.end() && tested < depth;) {
      const int ji = it->job;
      ++it;  // start() erases the current entry
      auto& j = jobs_[static_cast<std::size_t>(ji)];
      if (j.eligible > t) continue;
      if (blocked[static_cast<std::size_t>(j.partition)]) continue;
      ++tested;
      const NodeSet usable = usable_for(j, t);
      std::vector<int> nodes;
      if (usable.count() >= j.spec.request.nodes) nodes = pick_nodes(usable, j.spec.request);
      if (!nodes.empty()) {
        start(ji, nodes, t, false);
        continue;
      }
      if (try_preempt(ji, t)) {
        it = queue_.begin();  // preemption requeued jobs: walk again from the top
        continue;
      }
      // Without backfill (sched/builtin) a job that cannot start blocks every later job; with
      // backfill the main loop still stops at it in its partition.
      blocked[static_cast<std::size_t>(j.partition)] = 1;
      if (++blocked_count == blocked.size() || !config_.backfill) break;
      // Every partition that has jobs waiting is blocked: no later job can be tested (without
      // this a partition with nothing waiting, e.g. serving, made every pass walk the whole queue).
      std::size_t waiting = 0;
      for (const int pending : pending_in_partition_) waiting += pending > 0;
      if (blocked_count >= waiting) break;
    }
  }

  // --- Kubernetes + Kueue ---------------------------------------------------------------
  void setup_kueue() {
    auto& k = options_.kueue;
    std::vector<std::string> accounts;
    for (const auto& j : jobs_)
      if (std::find(accounts.begin(), accounts.end(), j.spec.account) == accounts.end())
        accounts.push_back(j.spec.account);
    if (k.queues.empty()) {
      // An equal share of the nodes per team (the remainder to the first ones).
      const int teams = static_cast<int>(accounts.size());
      for (int i = 0; i < teams; ++i) {
        ClusterQueueConfig q;
        q.name = accounts[static_cast<std::size_t>(i)];
        q.nominal_nodes = n_ / teams + (i < n_ % teams ? 1 : 0);
        k.queues.push_back(q);
      }
    }
    const std::size_t queues = k.queues.size();
    cq_usage_.assign(queues, 0);
    cq_running_.assign(queues, {});
    cq_pending_sizes_.assign(queues, {});
    std::map<std::string, int> cohort_index;
    for (const auto& q : k.queues) {
      const auto [it, added] = cohort_index.emplace(q.cohort, static_cast<int>(cohort_cqs_.size()));
      if (added) {
        cohort_cqs_.emplace_back();
        cohort_quota_.push_back(0);
        cohort_used_.push_back(0);
      }
      const int c = it->second;
      cohort_cqs_[static_cast<std::size_t>(c)].push_back(static_cast<int>(cq_cohort_.size()));
      cq_cohort_.push_back(c);
      // pkg/cache resource_node.go: guaranteedQuota = nominal - lendingLimit; the rest is the
      // cohort's (its SubtreeQuota adds each child's quota less what the child keeps).
      const int guaranteed = q.lending_limit >= 0 ? std::max(0, q.nominal_nodes - q.lending_limit) : 0;
      cq_guaranteed_.push_back(guaranteed);
      cohort_quota_[static_cast<std::size_t>(c)] += q.nominal_nodes - guaranteed;
      cq_within_.push_back(q.within_cluster_queue.value_or(k.within_cluster_queue ? WithinClusterQueue::LowerPriority
                                                                                  : WithinClusterQueue::Never));
      cq_reclaim_.push_back(q.reclaim_within_cohort.value_or(k.reclaim_within_cohort ? ReclaimWithinCohort::Any
                                                                                     : ReclaimWithinCohort::Never));
    }
    one_tier_ = std::all_of(config_.partitions.begin(), config_.partitions.end(), [&](const PartitionConfig& p) {
      return p.priority_tier == config_.partitions.front().priority_tier;
    });
    std::map<std::string, int> queue_of;
    for (std::size_t i = 0; i < queues; ++i) queue_of.emplace(k.queues[i].name, static_cast<int>(i));
    cq_of_.resize(jobs_.size());
    for (std::size_t i = 0; i < jobs_.size(); ++i) cq_of_[i] = queue_of.at(jobs_[i].spec.account);
  }

  /// A queue's usage above its guaranteed quota: what it takes from its cohort.
  [[nodiscard]] int over_guaranteed(int cq, int used) const {
    return std::max(0, used - cq_guaranteed_[static_cast<std::size_t>(cq)]);
  }

  /// Admits or evicts `nodes` nodes of queue `cq` (negative: frees them) in the books of its cohort.
  void kueue_charge(int cq, int nodes) {
    auto& used = cq_usage_[static_cast<std::size_t>(cq)];
    auto& cohort = cohort_used_[static_cast<std::size_t>(cq_cohort_[static_cast<std::size_t>(cq)])];
    cohort -= over_guaranteed(cq, used);
    used += nodes;
    cohort += over_guaranteed(cq, used);
    ++kueue_epoch_;
  }

  /// Nodes of quota queue `cq` may still take when it uses `used` and its cohort lends out
  /// `cohort_used` (pkg/cache resource_node.go, available()): its guaranteed quota left, plus the
  /// cohort's unused quota, the latter capped by its borrowingLimit beyond what it keeps in the
  /// cohort (SubtreeQuota - guaranteed, less what it uses of it).
  [[nodiscard]] long kueue_available(int cq, int used, long cohort_used) const {
    const auto& q = options_.kueue.queues[static_cast<std::size_t>(cq)];
    const int guaranteed = cq_guaranteed_[static_cast<std::size_t>(cq)];
    const long local = std::max(0, guaranteed - used);
    long parent = cohort_quota_[static_cast<std::size_t>(cq_cohort_[static_cast<std::size_t>(cq)])] - cohort_used;
    if (q.borrowing_limit >= 0)
      parent = std::min(
          parent, static_cast<long>(q.nominal_nodes - guaranteed) - over_guaranteed(cq, used) + q.borrowing_limit);
    return local + parent;
  }
  [[nodiscard]] bool quota_fits(int cq, int need, int used, long cohort_used) const {
    return need <= kueue_available(cq, used, cohort_used);
  }

  /// Kueue's preemption (pkg/scheduler/preemption/preemption.go) for job `ji`: candidates are the
  /// workloads of its own queue its withinClusterQueue policy allows (LowerPriority: lower
  /// priority; LowerOrNewerEqualPriority: also equal priority created later), and, while the
  /// queue stays within its nominal quota, the workloads of the queues of its cohort that borrow
  /// that reclaimWithinCohort allows (Any, or LowerPriority). In Kueue's order (other queues
  /// first, lowest priority, most recently admitted) it takes candidates until the workload fits
  /// (quota and nodes), then puts back each of them but the last that it fits without
  /// (fillBackWorkloads), and evicts the rest. False when no set lets it in.
  bool kueue_preempt(int ji, SimTime t) {
    const auto& k = options_.kueue;
    const auto& j = jobs_[static_cast<std::size_t>(ji)];
    const int cq = cq_of_[static_cast<std::size_t>(ji)];
    const auto& q = k.queues[static_cast<std::size_t>(cq)];
    const int need = j.spec.request.nodes;
    const auto within = cq_within_[static_cast<std::size_t>(cq)];
    const auto reclaim_policy = cq_reclaim_[static_cast<std::size_t>(cq)];
    const bool reclaim = reclaim_policy != ReclaimWithinCohort::Never &&
                         cq_usage_[static_cast<std::size_t>(cq)] + need <= q.nominal_nodes;
    if (!reclaim && within == WithinClusterQueue::Never) return false;
    auto& candidates = kueue_candidates_;
    candidates.clear();
    if (within != WithinClusterQueue::Never)
      for (const int r : cq_running_[static_cast<std::size_t>(cq)]) {
        const auto& v = jobs_[static_cast<std::size_t>(r)];
        const bool newer = std::tie(v.submit, v.spec.id) > std::tie(j.submit, j.spec.id);
        if (v.priority < j.priority ||
            (within == WithinClusterQueue::LowerOrNewerEqualPriority && v.priority == j.priority && newer))
          candidates.push_back(r);
      }
    const int cohort = cq_cohort_[static_cast<std::size_t>(cq)];
    if (reclaim)
      for (const int other : cohort_cqs_[static_cast<std::size_t>(cohort)]) {
        if (other == cq ||
            cq_usage_[static_cast<std::size_t>(other)] <= k.queues[static_cast<std::size_t>(other)].nominal_nodes)
          continue;
        for (const int r : cq_running_[static_cast<std::size_t>(other)])
          if (reclaim_policy == ReclaimWithinCohort::Any || jobs_[static_cast<std::size_t>(r)].priority < j.priority)
            candidates.push_back(r);
      }
    if (candidates.empty()) return false;
    std::sort(candidates.begin(), candidates.end(), [&](int a, int b) {
      const auto& x = jobs_[static_cast<std::size_t>(a)];
      const auto& y = jobs_[static_cast<std::size_t>(b)];
      const bool x_own = cq_of_[static_cast<std::size_t>(a)] == cq, y_own = cq_of_[static_cast<std::size_t>(b)] == cq;
      if (x_own != y_own) return !x_own;
      if (x.priority != y.priority) return x.priority < y.priority;
      if (x.start != y.start) return x.start > y.start;
      return a < b;
    });
    // Usage as the victims leave: the preemptor's queue and its cohort's loan, and the queues of
    // the victims (the cohort's loan changes with each).
    auto& usage = kueue_usage_;
    usage.clear();
    auto used_of = [&](int queue) -> int& {
      for (auto& [qi, u] : usage)
        if (qi == queue) return u;
      usage.emplace_back(queue, cq_usage_[static_cast<std::size_t>(queue)]);
      return usage.back().second;
    };
    long cohort_used = cohort_used_[static_cast<std::size_t>(cohort)];
    auto move = [&](int v, int sign) {  // sign -1: v leaves, +1: v comes back
      const int vcq = cq_of_[static_cast<std::size_t>(v)];
      int& u = used_of(vcq);
      cohort_used -= over_guaranteed(vcq, u);
      u += sign * jobs_[static_cast<std::size_t>(v)].spec.request.nodes;
      cohort_used += over_guaranteed(vcq, u);
    };
    const bool count_decides =
        config_.placement == Placement::Consecutive ||
        (config_.placement == Placement::Tree && (layout_.switches.empty() || layout_.single_tree()));
    auto fits = [&](const NodeSet& pool, int pool_count, std::vector<int>& nodes) {
      if (!quota_fits(cq, need, used_of(cq), cohort_used) || pool_count < need) return false;
      if (count_decides && pool_count >= need) {
        nodes.clear();  // chosen once the victims are known
        return true;
      }
      nodes = pick_nodes(pool, j.spec.request);
      return !nodes.empty();
    };
    NodeSet pool = free_;
    int pool_count = free_count();
    std::vector<int> victims, nodes;
    for (const int v : candidates) {
      victims.push_back(v);
      move(v, -1);
      for (const int node : jobs_[static_cast<std::size_t>(v)].rec.nodes) pool.set(node);
      pool_count += static_cast<int>(jobs_[static_cast<std::size_t>(v)].rec.nodes.size());
      if (!fits(pool, pool_count, nodes)) continue;
      // Fill back: every victim but the last that the workload fits without stays.
      for (int i = static_cast<int>(victims.size()) - 2; i >= 0; --i) {
        const int back = victims[static_cast<std::size_t>(i)];
        const auto& back_nodes = jobs_[static_cast<std::size_t>(back)].rec.nodes;
        move(back, +1);
        for (const int node : back_nodes) pool.reset(node);
        pool_count -= static_cast<int>(back_nodes.size());
        std::vector<int> without;
        if (fits(pool, pool_count, without)) {
          victims.erase(victims.begin() + i);
          nodes = std::move(without);
          continue;
        }
        move(back, -1);
        for (const int node : back_nodes) pool.set(node);
        pool_count += static_cast<int>(back_nodes.size());
      }
      if (count_decides) nodes = pick_nodes(pool, j.spec.request);
      FMSIM_CHECK(!nodes.empty(), "Kueue preemption: the nodes counted free are not placeable");
      for (const int vi : victims) {
        ++result_.preemptions;
        interrupt(vi, t, JobState::Preempted, jobs_[static_cast<std::size_t>(vi)].spec.requeue);
      }
      start(ji, nodes, t, false);
      return true;
    }
    return false;
  }

  void kueue_schedule(SimTime t) {
    const auto& k = options_.kueue;
    const long pass = ++kueue_pass_;
    std::vector<char> blocked(k.queues.size(), 0);
    // Where a fit depends on node counts alone, admission and preemption are monotone: a workload
    // that cannot get in (quota, nodes, or by evicting every candidate) is followed by none of
    // its ClusterQueue at least as large and of no higher priority while nothing has started or
    // been evicted since (its candidates are a subset, its quota and node tests stricter). Those
    // are skipped without the O(running) preemption search; and once every ClusterQueue with
    // workloads waiting is in that state (or blocked, StrictFIFO) the pass ends, rather than
    // walking the rest of the queue. Before, a pass over a long queue cost O(queue x running):
    // 15,000 workloads took minutes.
    const bool count_decides =
        config_.placement == Placement::Consecutive ||
        (config_.placement == Placement::Tree && (layout_.switches.empty() || layout_.single_tree()));
    struct Failed {
      long epoch = -1;
      int nodes = 0;
      std::uint32_t priority = 0;
      long done_epoch = -1;  ///< the epoch in which the queue was counted as done
    };
    std::vector<Failed> failed(count_decides ? k.queues.size() : 0);
    long done_epoch = -1;
    int done = 0, blocked_count = 0;
    // A queue whose failure covers every workload it still has waiting (later ones in queue
    // order have no higher priority when every partition has one PriorityTier) is done.
    auto note_done = [&](int cq) {
      auto& f = failed[static_cast<std::size_t>(cq)];
      if (!one_tier_ || f.epoch != kueue_epoch_ || f.done_epoch == kueue_epoch_ ||
          *cq_pending_sizes_[static_cast<std::size_t>(cq)].begin() < f.nodes || blocked[static_cast<std::size_t>(cq)])
        return;
      f.done_epoch = kueue_epoch_;
      if (done_epoch != kueue_epoch_) {
        done_epoch = kueue_epoch_;
        done = 0;
      }
      ++done;
    };
    auto block = [&](int cq) {
      if (!blocked[static_cast<std::size_t>(cq)]) ++blocked_count;
      blocked[static_cast<std::size_t>(cq)] = 1;
    };
    auto all_done = [&] { return blocked_count + (done_epoch == kueue_epoch_ ? done : 0) >= cqs_pending_; };
    // The queue as it stood when the pass began, in order: a workload queued during the pass (an
    // evicted one) waits for the next.
    for (auto it = queue_.begin(); it != queue_.end();) {
      const int ji = it->job;
      ++it;  // start() erases the current entry
      auto& j = jobs_[static_cast<std::size_t>(ji)];
      if (j.kueue_pass == pass || j.eligible > t) continue;
      const int cq = cq_of_[static_cast<std::size_t>(ji)];
      if (blocked[static_cast<std::size_t>(cq)]) continue;
      const int need = j.spec.request.nodes;
      if (count_decides) {
        const auto& f = failed[static_cast<std::size_t>(cq)];
        if (f.epoch == kueue_epoch_ && need >= f.nodes && j.priority <= f.priority) {
          if (k.strict_fifo) block(cq);
          if (all_done()) break;
          continue;
        }
      }
      if (quota_fits(cq, need, cq_usage_[static_cast<std::size_t>(cq)],
                     cohort_used_[static_cast<std::size_t>(cq_cohort_[static_cast<std::size_t>(cq)])]) &&
          free_count() >= need) {
        const auto nodes = pick_nodes(free_, j.spec.request);
        if (!nodes.empty()) {
          start(ji, nodes, t, false);
          continue;
        }
      }
      if (kueue_preempt(ji, t)) continue;
      if (count_decides) {
        auto& f = failed[static_cast<std::size_t>(cq)];
        if (f.epoch != kueue_epoch_ || need < f.nodes) {
          f.epoch = kueue_epoch_;
          f.nodes = need;
          f.priority = j.priority;
        }
      }
      if (k.strict_fifo) block(cq);
      if (count_decides) note_done(cq);
      if (count_decides && all_done()) break;
    }
  }

  // --- the backfill loop -------------------------------------------------------------------
  /// Nodes a pending job holds in the pass's plan over [from, until).
  struct Hold {
    SimTime from, until;
    std::vector<int> nodes;  ///< ascending, as a list: most jobs hold a few nodes, cheaper than a bitmap pass
    int mask = -1;           ///< index of the same nodes as a bitmap in bf_hold_masks_ when that is cheaper; -1: none
  };

  /// One backfill pass. Node availability over time has two parts: running jobs, which free
  /// their nodes at start + time limit (rounded up to bf_resolution), so that the nodes free at
  /// time s only grow with s; and the holds of the pending jobs planned in this pass. The nodes
  /// free over a job's whole window [s, s + limit) are therefore those free of running jobs at s
  /// less every hold overlapping the window. Candidate starts: now, each running job's end, and
  /// each hold's edges; the earliest that fits is taken.
  void backfill(SimTime t_exact) {
    const SimTime res = bf_resolution_;
    // slurmctld plans in whole seconds (time_t): now, start times and ends are truncated.
    const SimTime t = floor_second(t_exact);
    // Running jobs' ends, grouped by time; one entry (-1) for the nodes whose epilog still runs.
    auto& ends = bf_ends_;
    ends.clear();
    for (int r : running_) ends.push_back({std::max(t + res, jobs_[static_cast<std::size_t>(r)].planned_end), r});
    NodeSet completing = completing_;
    completing.subtract(down_);
    const int completing_count = completing.count();
    if (completing_count > 0) ends.push_back({t + res, -1});
    std::sort(ends.begin(), ends.end());
    // Step k of the running jobs' timeline: from time step_t[k] on, step_count[k] nodes are free
    // (step_set[k], built when first asked for). Step 0 is now.
    auto& step_t = bf_step_t_;
    auto& step_count = bf_step_count_;
    auto& step_first = bf_step_first_;  // index into ends of the step's first end
    step_t.assign(1, t);
    step_count.assign(1, free_count());
    step_first.assign(1, 0);
    for (std::size_t e = 0; e < ends.size(); ++e) {
      const auto& [end, r] = ends[e];
      if (step_t.back() != end) {
        step_t.push_back(end);
        step_count.push_back(step_count.back());
        step_first.push_back(e);
      }
      step_count.back() +=
          r < 0 ? completing_count : static_cast<int>(jobs_[static_cast<std::size_t>(r)].rec.nodes.size());
    }
    step_first.push_back(ends.size());
    std::size_t built = 0;  // step_set[0..built) are valid
    if (bf_step_set_.empty()) bf_step_set_.emplace_back(free_);
    bf_step_set_[0] = free_;
    built = 1;
    auto step_set = [&](std::size_t k) -> const NodeSet& {
      while (built <= k) {
        if (bf_step_set_.size() <= built) bf_step_set_.emplace_back(n_);
        NodeSet& s = bf_step_set_[built];
        s = bf_step_set_[built - 1];
        for (std::size_t e = step_first[built]; e < step_first[built + 1]; ++e) {
          const int r = ends[e].second;
          if (r < 0)
            s |= completing;
          else
            for (int node : jobs_[static_cast<std::size_t>(r)].rec.nodes) s.set(node);
        }
        ++built;
      }
      return bf_step_set_[k];
    };
    std::vector<Hold> holds;
    // The holds' [from, until) apart, in the same order: the scan of a window reads these alone.
    auto& spans = bf_hold_spans_;
    spans.clear();
    // Candidate starts: the steps' times and the holds' edges, ascending, without repeats; and
    // the nodes free of running jobs and holds from each to the next (a count only: a cheap test
    // that rules most starts out before any node set is built).
    auto& starts = bf_starts_;
    auto& free_count = bf_free_count_;
    starts.assign(step_t.begin(), step_t.end());
    free_count.assign(step_count.begin(), step_count.end());
    auto split = [&](SimTime v) {
      const auto it = std::lower_bound(starts.begin(), starts.end(), v);
      const auto i = it - starts.begin();
      if (it != starts.end() && *it == v) return;
      starts.insert(it, v);
      free_count.insert(free_count.begin() + i, free_count[static_cast<std::size_t>(i) - 1]);
    };
    const SimTime horizon = t + bf_window_;
    // Every partition spans every node (one partition, or e.g. a serving partition over the same
    // nodes as the batch one): one pool, whichever partition a job is in.
    const bool one_partition = std::all_of(partition_nodes_.begin(), partition_nodes_.end(),
                                           [&](const NodeSet& s) { return s.count() == n_; });
    // Whole-node requests whose fit depends on node counts alone (no blocks; a tree with one
    // top switch): a job that found no start fails for every later job at least as large and as
    // long, since holds only take nodes away.
    const bool count_decides = one_partition && config_.reservations.empty() &&
                               (config_.placement == Placement::Consecutive ||
                                (config_.placement == Placement::Tree && layout_.single_tree()));
    int failed_nodes = std::numeric_limits<int>::max();
    SimTime failed_limit = kNever;
    int tested = 0;
    std::vector<int> order;
    order.reserve(std::min<std::size_t>(queue_.size(), static_cast<std::size_t>(config_.bf_max_job_test)));
    for (const auto& k : queue_) {
      if (static_cast<int>(order.size()) >= config_.bf_max_job_test) break;
      order.push_back(k.job);
    }
    NodeSet window(n_);
    for (int ji : order) {
      if (tested >= config_.bf_max_job_test) break;
      auto& j = jobs_[static_cast<std::size_t>(ji)];
      // Every job submitted before the pass is in its list, whatever the fraction of its second:
      // eligibility against the exact time of the pass, not its whole second.
      if (!j.queued || j.eligible > t_exact) continue;
      ++tested;
      const SimTime limit = j.bf_limit;
      const int need = j.spec.request.nodes;
      if (count_decides && need >= failed_nodes && limit >= failed_limit) continue;
      const NodeSet& part = partition_nodes_[static_cast<std::size_t>(j.partition)];
      bool placed = false;
      std::size_t step = 0;
      for (std::size_t i = 0; i < starts.size() && starts[i] < horizon; ++i) {
        const SimTime from = starts[i];
        if (free_count[i] < need) continue;
        const SimTime until = from + limit;
        // A job that would end exactly when a hold begins counts as overlapping it: the real
        // slurmctld 22.05 does not backfill it (tests/slurm/scheduler_twin_test.cpp).
        // Every start up to a step short of nodes has that step in its window too: go past it.
        std::size_t short_at = 0;
        for (std::size_t k = i + 1; k < starts.size() && starts[k] <= until; ++k)
          if (free_count[k] < need) {
            short_at = k;
            break;
          }
        if (short_at > 0) {
          i = short_at;
          continue;
        }
        while (step + 1 < step_t.size() && step_t[step + 1] <= from) ++step;
        const NodeSet& base = step_set(step);
        if (!one_partition && base.count_and(part) < need) continue;
        window = base;
        if (!one_partition) window &= part;
        // holds is sorted by its start: those that begin after the window end the scan.
        for (std::size_t k = 0; k < spans.size(); ++k) {
          if (spans[k].first > until) break;
          if (spans[k].second <= from) continue;
          const Hold& h = holds[k];
          if (h.mask >= 0)
            window.subtract(bf_hold_masks_[static_cast<std::size_t>(h.mask)]);
          else
            window.reset_sorted(h.nodes);
        }
        apply_reservations(j, from, until, window);
        const int window_count = window.count();
        if (window_count < need) continue;
        const auto nodes = pick_nodes(window, j.spec.request, window_count);
        if (nodes.empty()) continue;
        if (from == t) {
          start(ji, nodes, t_exact, true);
          // Its nodes are busy from now until its end: a hold like any other.
        }
        const auto at = std::upper_bound(spans.begin(), spans.end(), from,
                                         [](SimTime v, const std::pair<SimTime, SimTime>& h) { return v < h.first; }) -
                        spans.begin();
        holds.insert(holds.begin() + at, Hold{from, until, nodes, hold_mask(nodes, holds.size())});
        spans.insert(spans.begin() + at, {from, until});
        split(until);
        for (std::size_t k = i; k < starts.size() && starts[k] < until; ++k) free_count[k] -= need;
        placed = true;
        break;
      }
      if (!placed && need <= failed_nodes && limit <= failed_limit) {
        failed_nodes = need;
        failed_limit = limit;
      }
    }
  }

  /// A hold's nodes also as a bitmap, in slot `slot` of a pool kept between passes, when a pass
  /// over the bitmap's words costs less than clearing the nodes one word-run at a time (more
  /// than a quarter as many nodes as words); -1 otherwise.
  int hold_mask(const std::vector<int>& nodes, std::size_t slot) {
    if (static_cast<int>(nodes.size()) * 4 <= (n_ + 63) / 64) return -1;
    if (bf_hold_masks_.size() <= slot) bf_hold_masks_.resize(slot + 1, NodeSet(n_));
    NodeSet& mask = bf_hold_masks_[slot];
    mask.clear();
    for (int node : nodes) mask.set(node);
    return static_cast<int>(slot);
  }

  const ClusterLayout& layout_;
  TreeSelector tree_{layout_};
  SlurmConfig config_;
  bool any_preemptable_ = false;           ///< any_preemptable_partition(), once the partitions are known
  std::vector<int> pending_in_partition_;  ///< jobs in the queue per partition
  /// The lowest PriorityTier of a partition whose jobs can be preempted (partition_prio).
  int lowest_preemptable_tier_ = std::numeric_limits<int>::max();
  SimulationOptions options_;
  int n_;
  // The settings as simulated time (slurm.conf's and the options' seconds, converted once).
  SimTime calc_period_ = to_time(config_.calc_period_s);
  SimTime sched_interval_ = to_time(config_.sched_interval_s);
  SimTime background_phase_ = to_time(config_.background_phase);
  SimTime sched_min_interval_ = to_time(config_.sched_min_interval_s);
  SimTime main_delay_ = to_time(config_.main_delay_s);
  SimTime batch_sched_delay_ = to_time(config_.batch_sched_delay_s);
  SimTime completing_delay_ = to_time(config_.completing_s);
  SimTime bf_interval_ = to_time(config_.bf_interval_s);
  SimTime bf_resolution_ = to_time(config_.bf_resolution_s);
  SimTime bf_window_ = to_time(config_.bf_window_s);
  SimTime over_time_limit_ = to_time(config_.over_time_limit_s);
  SimTime time_limit_check_ = to_time(config_.time_limit_check_s);
  SimTime time_limit_phase_ = to_time(config_.time_limit_phase_s);
  SimTime restart_ = to_time(options_.failures.restart_s);
  SimTime replace_ = to_time(options_.failures.replace_s);
  SimTime repair_ = to_time(options_.failures.repair_s);
  SimTime bucket_ = to_time(options_.utilisation_bucket_s);
  std::vector<NodeSet> partition_nodes_;
  int max_job_factor_ = 1;
  int max_qos_priority_ = 0;
  std::vector<Job> jobs_;
  std::vector<int> order_;
  engine::Simulator engine_;
  bool instant_open_ = false;  ///< an instant's events are running; its end is scheduled
  bool stopped_ = false;       ///< the replay is over: the events left do nothing
  InstantFlags flags_;
  SimTime now_ = SimTime::zero();
  NodeSet free_, down_, completing_;
  std::vector<NodeSet> reservation_nodes_;                       ///< per reservation
  std::vector<std::pair<SimTime, SimTime>> reservation_window_;  ///< per reservation: its start and end
  NodeSet capacity_block_nodes_;                                 ///< nodes of every Capacity Block (size 0 when none)
  std::vector<int> node_job_;
  std::vector<int> running_;  ///< jobs running now, any order
  std::set<QueueKey> queue_;
  std::multiset<int> pending_sizes_;
  long submitted_ = 0;
  long active_jobs_ = 0;
  std::uint32_t basic_next_ = 0;
  bool backfill_scheduled_ = false;
  // Scratch space of backfill(), kept between passes to save allocations.
  std::vector<std::pair<SimTime, int>> bf_ends_;
  std::vector<SimTime> bf_step_t_;
  std::vector<int> bf_step_count_;
  std::vector<std::size_t> bf_step_first_;
  std::vector<NodeSet> bf_step_set_;
  std::vector<SimTime> bf_starts_;
  std::vector<int> bf_free_count_;
  std::vector<NodeSet> bf_hold_masks_;
  std::vector<std::pair<SimTime, SimTime>> bf_hold_spans_;
  /// Time of the backfill thread's last pass; at first a virtual one bf_interval before its first
  /// check, which falls at bf_phase of the first second.
  SimTime last_pass_ = to_time(config_.bf_phase) - bf_interval_;
  SimTime last_update_ = kLongAgo;                   ///< whole second of the last job or node change
  bool batch_pending_ = false;                       ///< a BatchSched event is queued
  SimTime last_background_sched_ = SimTime::zero();  ///< controller.c's last_sched_time (whole seconds)
  SimTime last_main_ = kLongAgo;                     ///< the main loop's last pass (sched_last)
  SimTime main_pending_ = kNever;                    ///< time of the pending MainSched event
  double fragmented_ = 0;
  SimTime last_calc_ = SimTime::zero();
  int spares_free_ = 0;
  std::vector<SimTime> spare_returns_;
  std::vector<int> cq_usage_;                    ///< Kueue: nodes admitted per ClusterQueue
  std::vector<int> cq_of_;                       ///< Kueue: ClusterQueue of each job
  std::vector<int> cq_cohort_;                   ///< Kueue: cohort of each ClusterQueue
  std::vector<int> cq_guaranteed_;               ///< Kueue: nominal less lendingLimit (0 without one)
  std::vector<WithinClusterQueue> cq_within_;    ///< Kueue: each queue's withinClusterQueue
  std::vector<ReclaimWithinCohort> cq_reclaim_;  ///< Kueue: each queue's reclaimWithinCohort
  std::vector<std::vector<int>> cq_running_;     ///< Kueue: running workloads per ClusterQueue
  std::vector<std::vector<int>> cohort_cqs_;     ///< Kueue: ClusterQueues of each cohort
  std::vector<long> cohort_quota_;               ///< Kueue: quota each cohort lends (SubtreeQuota)
  std::vector<long> cohort_used_;                ///< Kueue: of it, what its queues use beyond their guaranteed quota
  long kueue_pass_ = 0;                          ///< Kueue: admission passes so far
  std::vector<std::multiset<int>> cq_pending_sizes_;  ///< Kueue: sizes of the workloads waiting per ClusterQueue
  int cqs_pending_ = 0;                               ///< Kueue: ClusterQueues with a workload waiting
  bool one_tier_ = true;                              ///< every partition has the same PriorityTier
  long kueue_epoch_ = 0;  ///< Kueue: admissions, evictions, failures and returns so far (a change of nodes or quota)
  long node_epoch_ = 0;   ///< changes of free_ or down_ so far
  int free_count_ = 0;    ///< free_.count() as of free_count_epoch_
  long free_count_epoch_ = -1;                    ///< the node_epoch_ free_count_ was counted in
  int down_count_ = 0;                            ///< down_.count() as of down_count_epoch_
  long down_count_epoch_ = -1;                    ///< the node_epoch_ down_count_ was counted in
  std::vector<int> kueue_candidates_;             ///< Kueue: scratch list of preemption candidates
  std::vector<std::pair<int, int>> kueue_usage_;  ///< Kueue: scratch (queue, usage) during a preemption search
  std::mt19937_64 rng_;
  TimeSeries series_;
  SimulationResult result_;
};

}  // namespace

std::optional<WorkloadProblem> find_workload_problem(const ClusterLayout& layout, const SlurmConfig& config,
                                                     const std::vector<JobSpec>& jobs,
                                                     const SimulationOptions& options) {
  if (layout.nodes() == 0) return WorkloadProblem{WorkloadInput::Cluster, "the cluster has no nodes"};
  SlurmConfig c;  // the partitions and QOS the twin runs (a default partition when there are none)
  c.partitions = config.partitions.empty() ? std::vector<PartitionConfig>{default_partition()} : config.partitions;
  c.qos = config.qos;
  std::vector<int> partition_nodes;  // distinct nodes of each partition
  for (const auto& p : c.partitions) {
    std::vector<int> nodes = p.nodes;
    std::sort(nodes.begin(), nodes.end());
    partition_nodes.push_back(
        p.nodes.empty() ? layout.nodes() : static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin()));
  }
  auto problem = [](std::string message) { return WorkloadProblem{WorkloadInput::Jobs, std::move(message)}; };
  std::unordered_set<int> ids;
  ids.reserve(jobs.size());
  for (const auto& s : jobs) {
    if (!ids.insert(s.id).second) return problem(fmt::format("job id {} appears twice", s.id));
    const int partition = c.partition_index(s.partition);
    if (partition < 0) return problem(fmt::format("job {}: partition '{}' is not in slurm.conf", s.id, s.partition));
    if (!s.qos.empty() && s.qos != "normal" && c.qos_index(s.qos) < 0)
      return problem(fmt::format("job {}: QOS '{}' is not defined", s.id, s.qos));
    const auto& part = c.partitions[static_cast<std::size_t>(partition)];
    const int part_nodes = partition_nodes[static_cast<std::size_t>(partition)];
    if (s.request.nodes < 1 || s.request.nodes > part_nodes)
      return problem(
          fmt::format("job {} asks for {} nodes; partition {} has {}", s.id, s.request.nodes, part.name, part_nodes));
    if (s.reservation.empty()) continue;
    const auto& rs = config.reservations;
    const auto it = std::find_if(rs.begin(), rs.end(), [&](const Reservation& r) { return r.name == s.reservation; });
    if (it == rs.end()) return problem(fmt::format("job {}: reservation '{}' is not defined", s.id, s.reservation));
    if (s.request.nodes > static_cast<int>(it->nodes.size()))
      return problem(fmt::format("job {} asks for {} nodes; reservation {} has {}", s.id, s.request.nodes, it->name,
                                 it->nodes.size()));
    const double limit_s = effective_time_limit(part, s.time_limit_s);
    if (limit_s > it->end_s - it->start_s)
      return problem(
          fmt::format("job {}: its time limit ({:g} s) is longer than reservation {}'s window ({:g} s); "
                      "it could never start",
                      s.id, limit_s, it->name, it->end_s - it->start_s));
  }
  // Kueue: every team needs a ClusterQueue when queues are given (none given: one per team);
  // Kueue's validation: a lendingLimit at most the nominal quota.
  const auto& queues = options.kueue.queues;
  if (options.kueue.enabled)
    for (const auto& q : queues)
      if (q.lending_limit > q.nominal_nodes)
        return WorkloadProblem{WorkloadInput::Queues,
                               fmt::format("ClusterQueue {}: lendingLimit {} is more than its nominal quota {}", q.name,
                                           q.lending_limit, q.nominal_nodes)};
  if (options.kueue.enabled && !queues.empty())
    for (const auto& s : jobs)
      if (std::none_of(queues.begin(), queues.end(), [&](const ClusterQueueConfig& q) { return q.name == s.account; }))
        return WorkloadProblem{WorkloadInput::Queues,
                               fmt::format("job {}: team '{}' has no ClusterQueue", s.id, s.account)};
  return std::nullopt;
}

SimulationResult simulate_slurm(const ClusterLayout& layout, const SlurmConfig& config, std::vector<JobSpec> jobs,
                                const SimulationOptions& options) {
  if (const auto problem = find_workload_problem(layout, config, jobs, options))
    core::check_failed("!find_workload_problem(...)", problem->message, __FILE__, __LINE__);
  Simulator sim(layout, config, std::move(jobs), options);
  return sim.run();
}

}  // namespace fmsim::orchestration
