// Serving deployments on the shared cluster from their steady state (see serving_fleet.hpp).
#include "orchestration/serving_fleet.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"

namespace fmsim::orchestration {

ReplicaUnit replica_unit(int gpus, int gpus_per_node) {
  FMSIM_CHECK(gpus > 0 && gpus_per_node > 0, "replica_unit: GPUs must be positive");
  if (gpus <= gpus_per_node) return {1, gpus_per_node / gpus};
  return {(gpus + gpus_per_node - 1) / gpus_per_node, 1};
}

int desired_replicas(double rate, const ReplicaCapacity& replica, const Autoscaling& scaling) {
  FMSIM_CHECK(replica.rate_rps > 0 && scaling.target_utilisation > 0, "desired_replicas: capacity must be positive");
  // The 1e-9 keeps a rate of exactly n x capacity x target at n replicas.
  const double need = std::ceil(rate / (replica.rate_rps * scaling.target_utilisation) - 1e-9);
  const double capped =
      std::clamp(need, static_cast<double>(scaling.min_replicas), static_cast<double>(scaling.max_replicas));
  return static_cast<int>(capped);
}

double step_value(const std::vector<Step>& steps, double t) {
  if (steps.empty()) return 0.0;
  auto it = std::upper_bound(steps.begin(), steps.end(), t, [](double x, const Step& s) { return x < s.start_s; });
  return it == steps.begin() ? steps.front().value : std::prev(it)->value;
}

namespace {

/// Merges equal neighbours.
std::vector<Step> merge_equal_steps(std::vector<Step> steps) {
  std::vector<Step> out;
  for (const auto& s : steps)
    if (out.empty() || out.back().value != s.value) out.push_back(s);
  return out;
}

}  // namespace

std::vector<Step> requested_replicas(const ServingDeployment& d, double horizon_s) {
  const auto& a = d.autoscaling;
  FMSIM_CHECK(a.scale_down_delay_s >= a.scale_up_delay_s, "requested_replicas: scale-down delay below scale-up delay");
  FMSIM_CHECK(!d.offered.empty(), "requested_replicas: no offered rate");
  // desired as steps (c_i, v_i); requested(t) = max of desired over [t - down, t - up], desired
  // before 0 being its value at 0. The maximum changes only where a step enters the window
  // (c_i + up) or leaves it (c_{i+1} + down).
  std::vector<Step> desired;
  for (const auto& s : d.offered)
    desired.push_back({s.start_s, static_cast<double>(desired_replicas(s.value, d.replica, a))});
  desired = merge_equal_steps(desired);
  std::vector<double> times{0.0};
  for (std::size_t i = 0; i < desired.size(); ++i) {
    if (i > 0) times.push_back(desired[i].start_s + a.scale_up_delay_s);
    if (i + 1 < desired.size()) times.push_back(desired[i + 1].start_s + a.scale_down_delay_s);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  std::multiset<double> window;
  std::size_t entered = 0, left = 0;  // steps that entered / left the window
  std::vector<Step> out;
  for (double t : times) {
    if (t >= horizon_s && !out.empty()) break;
    // Step i covers [c_i, c_{i+1}); it is in the window while c_i <= t - up and c_{i+1} > t - down.
    while (entered < desired.size() && (entered == 0 || desired[entered].start_s <= t - a.scale_up_delay_s))
      window.insert(desired[entered++].value);
    while (left + 1 < entered && desired[left + 1].start_s <= t - a.scale_down_delay_s)
      window.erase(window.find(desired[left++].value));
    out.push_back({t, *window.rbegin()});
  }
  return merge_equal_steps(out);
}

std::vector<JobSpec> replica_jobs(const ServingDeployment& d, int deployment, const std::string& partition,
                                  int gpus_per_node, double horizon_s, int first_id) {
  const ReplicaUnit unit = replica_unit(d.replica.gpus, gpus_per_node);
  const auto requested = requested_replicas(d, horizon_s);
  std::vector<JobSpec> jobs;
  std::vector<double> open;  // start of each unit level now up (level k at index k - 1)
  auto close_to = [&](std::size_t level, double t) {
    while (open.size() > level) {
      JobSpec j;
      j.id = first_id + static_cast<int>(jobs.size());
      j.name = d.name;
      j.kind = "serving";
      j.submit_s = open.back();
      j.run_s = t - open.back();
      // Limits only shape backfill's plans: a unit holds its nodes until the autoscaler lets it go.
      j.time_limit_s = std::ceil((j.run_s + 3600.0) / 60.0) * 60.0;
      j.request.nodes = unit.nodes;
      j.partition = partition;
      j.account = "serving";
      j.user = d.name;
      j.requeue = true;
      // A replica keeps no state: after a node failure it resumes (a new replica, cold again)
      // and stays up until its planned end, so all its time up so far counts as done.
      j.checkpoint_interval_s = 1;
      j.deployment = deployment;
      open.pop_back();
      if (j.run_s > 0) jobs.push_back(j);
    }
  };
  for (const auto& s : requested) {
    if (s.start_s >= horizon_s) break;
    const auto units = static_cast<std::size_t>(std::ceil(s.value / unit.replicas - 1e-9));
    close_to(units, s.start_s);
    while (open.size() < units) open.push_back(s.start_s);
  }
  close_to(0, horizon_s);
  std::sort(jobs.begin(), jobs.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit_s < b.submit_s; });
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].id = first_id + static_cast<int>(i);
  return jobs;
}

namespace {

/// Calls fn(start, seconds, offered rate, replicas serving) for each interval of [0, horizon) over
/// which the three step functions are constant; replicas serving = min(requested, ready).
template <class Fn>
void sweep_intervals(const std::vector<Step>& offered, const std::vector<Step>& requested,
                     const std::vector<Step>& ready, double horizon_s, Fn fn) {
  std::vector<double> times{0.0, horizon_s};
  for (const auto* f : {&offered, &requested, &ready})
    for (const auto& s : *f)
      if (s.start_s > 0 && s.start_s < horizon_s) times.push_back(s.start_s);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  for (std::size_t i = 0; i + 1 < times.size(); ++i) {
    const double a = times[i];
    fn(a, times[i + 1] - a, step_value(offered, a), std::min(step_value(requested, a), step_value(ready, a)));
  }
}

}  // namespace

RouterQueue router_queue(const ServingDeployment& d) {
  RouterQueue q;
  q.timeout_s = d.queue_timeout_s;
  if (d.replica.ttft_slo_s > 0) q.wait_budget_s = std::max(0.0, d.replica.ttft_slo_s - d.replica.ttft_p99_s);
  return q;
}

namespace {

/// The router's FIFO queue as a fluid, followed by its frontier f: every request that arrived
/// before f has been served or has given up, those that arrived in [f, t) wait. With arrivals of
/// density lambda(s) (the offered rate, piecewise constant) and capacity mu, f advances at
/// mu / lambda(f) while requests wait; the queue is empty when f reaches t, and a request that has
/// waited the timeout gives up, so f >= t - timeout (f then moves with t and lambda(f) - mu
/// requests/s give up). A request served at t waited t - f.
class FluidRouter {
 public:
  FluidRouter(const std::vector<Step>& offered, const RouterQueue& queue, ServedTotals& totals)
      : offered_(offered), queue_(queue), t_(totals) {}

  /// Runs [a, b) at capacity mu with arrivals at `rate` over it; returns the requests served.
  double advance(double a, double b, double mu, double rate) {
    const double timeout = queue_.timeout_s;
    double t = a, served = 0;
    int stalled = 0;  // events in a row that took no time (a few at one instant; never many)
    while (t < b) {
      if (f_ >= t && rate <= mu) {  // empty and keeping up: arrivals are served at once
        served += rate * (b - t);
        t_.requests_within_slo += rate * (b - t);
        t_.seconds_within_slo += b - t;
        f_ = t = b;
        at_timeout_ = false;
        break;
      }
      const double density = density_at_frontier();
      const double step_end = frontier_step_end();
      if (density <= 0) {  // no arrivals in [f, step end): nothing waits there
        f_ = std::min(step_end, t);
        at_timeout_ = false;
        continue;
      }
      const double speed = mu / density;  // of f against t
      // At the timeout: reached by an event (kept exactly, as t - f rounds at large t), or found.
      const bool capped = (at_timeout_ || t - f_ >= timeout - kTie * (1 + t + timeout)) && speed <= 1;
      at_timeout_ = capped;
      const double v = capped ? 1.0 : speed;
      // The next event: the interval ends, f reaches the next arrival step, the queue empties, or
      // the longest wait reaches the timeout.
      enum class Next { End, Step, Empty, Timeout } next = Next::End;
      double dt = b - t;
      auto sooner = [&](double x, Next n) {
        if (x < dt) {
          dt = std::max(x, 0.0);
          next = n;
        }
      };
      if (v > 0 && step_end < kNever) sooner((step_end - f_) / v, Next::Step);
      if (!capped && speed > 1) sooner((t - f_) / (speed - 1), Next::Empty);
      if (!capped && speed < 1) sooner((timeout - (t - f_)) / (1 - speed), Next::Timeout);
      stalled = dt > kTie * (1 + t) ? 0 : stalled + 1;
      FMSIM_CHECK(stalled < 64, "router queue made no progress");
      const double w0 = t - f_, w1 = w0 + dt * (1 - v);
      const double out = mu * dt;
      served += out;
      if (w0 > 0 || w1 > 0) {
        t_.waited_served += out;
        t_.wait_request_seconds += out * (w0 + w1) / 2;
      }
      // The served part whose wait is within the budget (the wait is linear over dt).
      const double budget = queue_.wait_budget_s;
      double within = 0;
      if (w0 <= budget && w1 <= budget)
        within = 1;
      else if (w0 <= budget)
        within = (budget - w0) / (w1 - w0);
      else if (w1 <= budget)
        within = (budget - w1) / (w0 - w1);
      t_.requests_within_slo += out * within;
      if (!capped) t_.seconds_within_slo += dt * within;  // while requests give up, the SLO is not held
      if (capped) t_.dropped_requests += (density - mu) * dt;
      t += dt;
      f_ += v * dt;
      if (next == Next::Step) f_ = step_end;
      if (next == Next::Empty || f_ > t) f_ = t;
      if (next == Next::Timeout) {
        f_ = t - timeout;
        at_timeout_ = true;
      }
      t_.peak_backlog = std::max(t_.peak_backlog, waiting(t));
    }
    return served;
  }

  /// Requests still waiting at t: the arrivals in [f, t).
  [[nodiscard]] double waiting(double t) const {
    double n = 0;
    for (std::size_t i = index_; i < offered_.size() && offered_[i].start_s < t; ++i) {
      const double lo = std::max(f_, offered_[i].start_s);
      const double hi = std::min(t, i + 1 < offered_.size() ? offered_[i + 1].start_s : t);
      if (hi > lo) n += offered_[i].value * (hi - lo);
    }
    return n;
  }

 private:
  static constexpr double kNever = 1e300;
  static constexpr double kTie = 1e-12;  ///< relative to t: closer than this is the same instant
  double density_at_frontier() {
    while (index_ + 1 < offered_.size() && offered_[index_ + 1].start_s <= f_) ++index_;
    return offered_.empty() ? 0.0 : offered_[index_].value;
  }
  [[nodiscard]] double frontier_step_end() const {
    return index_ + 1 < offered_.size() ? offered_[index_ + 1].start_s : kNever;
  }

  const std::vector<Step>& offered_;
  RouterQueue queue_;
  ServedTotals& t_;
  double f_ = 0;
  bool at_timeout_ = false;  ///< the longest wait is the timeout (requests are giving up)
  std::size_t index_ = 0;
};

}  // namespace

ServedTotals serve(const std::vector<Step>& offered, const std::vector<Step>& requested, const std::vector<Step>& ready,
                   double replica_rate_rps, double horizon_s, const RouterQueue& queue,
                   std::vector<ServedInterval>* served_in) {
  ServedTotals t;
  FluidRouter router(offered, queue, t);
  sweep_intervals(offered, requested, ready, horizon_s, [&](double a, double dt, double rate, double replicas) {
    const double served = router.advance(a, a + dt, replicas * replica_rate_rps, rate);
    t.offered_requests += rate * dt;
    t.served_requests += served;
    t.replica_seconds += replicas * dt;
    t.peak_replicas = std::max(t.peak_replicas, replicas);
    if (served_in) served_in->push_back({a, dt, served});
  });
  t.backlog_at_end = router.waiting(horizon_s);
  t.queued_requests = t.waited_served + t.dropped_requests + t.backlog_at_end;
  return t;
}

DeploymentOutcome summarise_deployment(const ServingDeployment& d, int index, const std::vector<JobSpec>& specs,
                                       const SimulationResult& result, int gpus_per_node, double horizon_s,
                                       double price_per_node_hour, double bucket_s) {
  DeploymentOutcome o;
  o.name = d.name;
  o.label = d.label;
  const ReplicaUnit unit = replica_unit(d.replica.gpus, gpus_per_node);
  const auto requested = requested_replicas(d, horizon_s);
  // Ready units: +1 at a run's start + cold start, -1 at its end (both within the horizon).
  std::vector<std::pair<double, int>> edges;
  double node_s = 0;
  for (std::size_t k = 0; k < specs.size() && k < result.jobs.size(); ++k) {
    if (specs[k].deployment != index) continue;
    for (const auto& [start, end0] : result.jobs[k].runs) {
      const double end = std::min(end0 < 0 ? horizon_s : end0, horizon_s);
      if (end <= start) continue;
      ++o.unit_starts;
      node_s += (end - start) * specs[k].request.nodes;
      const double up = start + d.replica.cold_start_s;
      if (up < end) {
        edges.emplace_back(up, 1);
        edges.emplace_back(end, -1);
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<Step> ready{{0.0, 0.0}};
  int units = 0;
  for (const auto& [t, delta] : edges) {
    units += delta;
    if (ready.back().start_s == t)
      ready.back().value = units * unit.replicas;
    else
      ready.push_back({t, static_cast<double>(units * unit.replicas)});
  }
  std::vector<ServedInterval> served_in;
  o.totals = serve(d.offered, requested, ready, d.replica.rate_rps, horizon_s, router_queue(d), &served_in);
  o.mean_wait_s = o.totals.waited_served > 0 ? o.totals.wait_request_seconds / o.totals.waited_served : 0.0;
  o.slo_attainment = o.totals.offered_requests > 0 ? o.totals.requests_within_slo / o.totals.offered_requests : 1.0;
  o.output_tokens = o.totals.served_requests * d.replica.output_tokens;
  o.gpu_hours = node_s * gpus_per_node / 3600.0;
  o.cost_usd = node_s * price_per_node_hour / 3600.0;
  o.cost_per_million_output_tokens = o.output_tokens > 0 ? o.cost_usd / o.output_tokens * 1e6 : 0.0;
  o.mean_replicas = horizon_s > 0 ? o.totals.replica_seconds / horizon_s : 0.0;
  o.scale_events = requested.empty() ? 0 : static_cast<int>(requested.size()) - 1;
  if (bucket_s > 0) {
    // Means per bucket: each interval's share of every bucket it overlaps.
    const auto n = static_cast<std::size_t>(std::ceil(horizon_s / bucket_s - 1e-9));
    o.offered.assign(n, 0.0);
    o.served.assign(n, 0.0);
    o.replicas.assign(n, 0.0);
    auto spread = [&](std::vector<double>& into, double a, double dt, double per_s) {
      for (auto b = static_cast<std::size_t>(a / bucket_s); b < n; ++b) {
        const double lo = std::max(a, static_cast<double>(b) * bucket_s);
        const double hi = std::min(a + dt, static_cast<double>(b + 1) * bucket_s);
        if (hi <= lo) break;
        into[b] += per_s * (hi - lo) / bucket_s;
      }
    };
    sweep_intervals(d.offered, requested, ready, horizon_s, [&](double a, double dt, double rate, double replicas) {
      spread(o.offered, a, dt, rate);
      spread(o.replicas, a, dt, replicas);
    });
    // Served at its mean rate over each interval (the queue drains within it).
    for (const auto& s : served_in)
      if (s.seconds > 0) spread(o.served, s.start_s, s.seconds, s.served / s.seconds);
  }
  return o;
}

FleetUse fleet_use(const std::vector<JobSpec>& specs, const SimulationResult& result, int nodes, int gpus_per_node) {
  FleetUse u;
  const double span = result.end_s;
  double busy_node_s = 0, down_node_s = 0, serving_node_s = 0, useful_node_s = 0;
  const auto& ts = result.series;
  for (double b : ts.busy_nodes) busy_node_s += b * ts.bucket_s;
  for (double b : ts.down_nodes) down_node_s += b * ts.bucket_s;
  for (std::size_t k = 0; k < specs.size() && k < result.jobs.size(); ++k) {
    const auto& s = specs[k];
    const auto& r = result.jobs[k];
    if (s.deployment >= 0) {
      for (const auto& [start, end] : r.runs) serving_node_s += ((end < 0 ? span : end) - start) * s.request.nodes;
      continue;
    }
    ++u.training_jobs;
    u.training_completed += r.state == JobState::Completed;
    u.training_requeues += r.requeues;
    useful_node_s += r.useful_node_s;
    if (s.training.tokens > 0 && s.run_s > 0)
      u.training_tokens += s.training.tokens * std::min(1.0, r.run_done_s / s.run_s);
  }
  const double g = gpus_per_node / 3600.0;
  u.serving_gpu_hours = serving_node_s * g;
  u.training_gpu_hours = std::max(0.0, busy_node_s - serving_node_s) * g;
  u.down_gpu_hours = down_node_s * g;
  u.idle_gpu_hours = std::max(0.0, nodes * span - result.absent_node_s - busy_node_s - down_node_s) * g;
  u.training_useful_gpu_hours = useful_node_s * g;
  const double node_s = nodes * span - result.absent_node_s;
  u.training_goodput = node_s > 0 ? useful_node_s / node_s : 0.0;
  u.preemptions = result.preemptions;
  return u;
}

}  // namespace fmsim::orchestration
