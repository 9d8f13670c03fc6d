// Monte Carlo goodput: one replication is a renewal walk over the run (see monte_carlo.hpp).
#include "reliability/monte_carlo.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace fmsim::reliability {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// xoshiro256** (Blackman and Vigna); own distributions so results do not depend on the C++
/// library's <random> implementation.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (0xD1B54A32D192ED03ULL * (stream + 1));
    for (auto& v : s_) v = splitmix64(x);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Exponential with mean 1.
  double exponential() { return -std::log1p(-uniform()); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

struct Cause {
  double cumulative;  // cumulative probability
  bool replace;
  bool planned;
};

struct Prepared {
  std::vector<Cause> causes;
  double mean_gap;  // mean time between interruptions
  double shape;     // Weibull shape
  double weibull_scale;
  double tau, delta, period, persist_after_snapshot;  // persist measured from the snapshot start
  double detect, replace, restart, load, peer_load, step, repair;
  int spares;
  bool peer;
  double horizon;
};

struct Replication {
  TimeSplit time;
  double interruptions = 0.0;
};

double draw_gap(Rng& rng, const Prepared& p) {
  if (p.shape == 1.0) return p.mean_gap * rng.exponential();
  return p.weibull_scale * std::pow(rng.exponential(), 1.0 / p.shape);
}

const Cause& draw_cause(Rng& rng, const Prepared& p) {
  const double u = rng.uniform();
  for (const auto& c : p.causes) {
    if (u < c.cumulative) return c;
  }
  return p.causes.back();
}

Replication run_one(const Prepared& p, Rng& rng, RunTimeline* timeline = nullptr) {
  Replication out;
  TimeSplit& ts = out.time;
  // Nodes out for repair (times they return), earliest first; used only with a finite pool.
  std::priority_queue<double, std::vector<double>, std::greater<>> in_repair;
  double t = 0.0;
  double next_failure = draw_gap(rng, p);
  double pending = 0.0;  // compute done but not yet in a restorable snapshot

  while (t < p.horizon) {
    // --- working phase from t: [interval compute][blocking snapshot] repeated -----------------
    const double end = std::min(next_failure, p.horizon);
    if (timeline != nullptr && end > t) timeline->segments.push_back({RunTimeline::Phase::Working, t, end});
    const double x = end - t;
    const double n = std::floor(x / p.period);
    const double rem = x - n * p.period;
    const double compute = n * p.tau + std::min(rem, p.tau);
    ts.checkpoint += n * p.delta + std::max(0.0, rem - p.tau);
    // Snapshots restorable by `end`: the k-th (k = 0, 1, ...) at k P + tau + persist.
    const double first_ready = p.tau + p.persist_after_snapshot;
    const double ready = x >= first_ready ? std::floor((x - first_ready) / p.period) + 1.0 : 0.0;
    if (ready > 0.0) {
      ts.useful += pending + ready * p.tau;
      pending = 0.0;
    }
    const double unsaved = compute - ready * p.tau;
    if (end >= p.horizon) {
      ts.useful += pending + unsaved;  // the run ends with a final snapshot
      break;
    }

    // --- an interruption at `end` -----------------------------------------------------------------
    t = end;
    bool rolled_back = false;
    bool first = true;
    for (;;) {
      out.interruptions += 1.0;
      const Cause& cause = draw_cause(rng, p);
      const double lost_before = ts.lost_work;
      double detect = p.detect;
      double extra_checkpoint = 0.0;
      if (cause.planned) {
        // Announced: snapshot first, nothing is lost.
        detect = 0.0;
        extra_checkpoint = p.delta;
        if (first) {
          ts.useful += pending + unsaved;
          pending = 0.0;
        }
      } else if (cause.replace && p.peer && !rolled_back) {
        // A data-parallel replica holds the state: lose only the step in flight.
        const double work = first ? pending + unsaved : pending;
        const double lost = std::min(work, p.step * rng.uniform());
        ts.lost_work += lost;
        pending = work - lost;
      } else {
        ts.lost_work += pending + (first ? unsaved : 0.0);
        pending = 0.0;
        rolled_back = true;
      }
      first = false;
      if (timeline != nullptr) {
        timeline->interruptions.push_back({t, static_cast<int>(&cause - p.causes.data()), ts.lost_work - lost_before});
      }
      next_failure = t + draw_gap(rng, p);

      // Recovery stages in order; an interruption inside one restarts the recovery.
      double wait = 0.0;
      double swap = 0.0;
      if (cause.replace && !cause.planned) {
        swap = p.replace;
        if (p.spares >= 0) {
          in_repair.push(t + p.repair * rng.exponential());
          const double need = t + detect;
          while (!in_repair.empty() && in_repair.top() <= need) in_repair.pop();
          if (static_cast<int>(in_repair.size()) > p.spares) {
            wait = in_repair.top() - need;  // the earliest repaired node joins the job
            in_repair.pop();
          }
        }
      }
      const double load = (cause.replace && p.peer && !rolled_back && !cause.planned) ? p.peer_load : p.load;
      const double stages[5] = {extra_checkpoint, detect, wait, swap + p.restart, load};
      double* buckets[5] = {&ts.checkpoint, &ts.restart, &ts.waiting, &ts.restart, &ts.restart};
      const double stop = std::min(next_failure, p.horizon);
      double clock = t;
      for (int i = 0; i < 5 && clock < stop; ++i) {
        const double spent = std::min(stages[i], stop - clock);
        *buckets[i] += spent;
        if (timeline != nullptr && spent > 0.0) {
          static constexpr RunTimeline::Phase kPhases[5] = {RunTimeline::Phase::Snapshot, RunTimeline::Phase::Detect,
                                                            RunTimeline::Phase::Wait, RunTimeline::Phase::Restart,
                                                            RunTimeline::Phase::Load};
          timeline->segments.push_back({kPhases[i], clock, clock + spent});
        }
        clock += spent;
      }
      t = clock;
      if (t >= p.horizon || t < next_failure) break;
      // Interrupted during recovery (clock stopped at next_failure): another cause, start over.
    }
    if (t >= p.horizon) break;
  }
  return out;
}

Prepared prepare(const GoodputScenario& s) {
  FMSIM_CHECK(s.failures.rate_per_second > 0.0, "failure rate must be positive");
  FMSIM_CHECK(s.horizon.value() > 0.0, "the run needs a positive horizon");
  FMSIM_CHECK(s.checkpoint.interval.value() > 0.0, "checkpoint interval must be positive");
  FMSIM_CHECK(s.weibull_shape > 0.0, "weibull shape must be positive");
  Prepared p{};
  double total = 0.0;
  for (const auto& c : s.failures.causes) total += c.count;
  FMSIM_CHECK(total > 0.0, "failure process has no causes");
  double acc = 0.0;
  for (const auto& c : s.failures.causes) {
    acc += c.count / total;
    p.causes.push_back(Cause{.cumulative = acc, .replace = c.replace_node, .planned = c.planned});
  }
  p.causes.back().cumulative = 1.0;
  p.mean_gap = 1.0 / s.failures.rate_per_second;
  p.shape = s.weibull_shape;
  p.weibull_scale = p.mean_gap / std::tgamma(1.0 + 1.0 / p.shape);
  p.tau = effective_interval(s.checkpoint).value();
  p.delta = s.checkpoint.blocking.value();
  p.period = p.tau + p.delta;
  p.persist_after_snapshot = std::max(s.checkpoint.persist.value(), p.delta);
  p.detect = s.recovery.detect.value();
  p.replace = s.recovery.replace.value();
  p.restart = s.recovery.restart.value();
  p.load = s.checkpoint.load.value();
  p.peer_load = s.peer_load.value();
  p.step = s.step_time.value();
  p.repair = s.recovery.repair.value();
  p.spares = s.recovery.spares;
  p.peer = s.peer_recovery;
  p.horizon = s.horizon.value();
  return p;
}

}  // namespace

RunTimeline simulate_timeline(const GoodputScenario& scenario, std::uint64_t seed) {
  const Prepared p = prepare(scenario);
  RunTimeline timeline;
  timeline.interval = p.tau;
  timeline.blocking = p.delta;
  timeline.persist = p.persist_after_snapshot;
  Rng rng(seed, 0);
  timeline.time = run_one(p, rng, &timeline).time;
  return timeline;
}

GoodputResult simulate_goodput(const GoodputScenario& scenario, const MonteCarloOptions& options) {
  FMSIM_CHECK(options.replications >= 1, "at least one replication");
  const Prepared p = prepare(scenario);
  std::vector<Replication> results(static_cast<std::size_t>(options.replications));
  const int threads = std::max(1, std::min(options.threads, options.replications));
  auto worker = [&](int k) {
    for (int i = k; i < options.replications; i += threads) {
      Rng rng(options.seed, static_cast<std::uint64_t>(i));
      results[static_cast<std::size_t>(i)] = run_one(p, rng);
    }
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) pool.emplace_back(worker, k);
    for (auto& th : pool) th.join();
  }

  GoodputResult out;
  out.replications = options.replications;
  const double n = options.replications;
  double sum = 0.0, sum_sq = 0.0;
  for (const auto& r : results) {
    const double e = r.time.useful / p.horizon;
    sum += e;
    sum_sq += e * e;
    out.time.useful += r.time.useful / n;
    out.time.checkpoint += r.time.checkpoint / n;
    out.time.restart += r.time.restart / n;
    out.time.lost_work += r.time.lost_work / n;
    out.time.waiting += r.time.waiting / n;
    out.interruptions += r.interruptions / n;
  }
  out.ettr = sum / n;
  const double var = n > 1 ? std::max(0.0, (sum_sq - sum * sum / n) / (n - 1.0)) : 0.0;
  out.ettr_stddev = std::sqrt(var);
  out.ettr_ci95 = 1.96 * out.ettr_stddev / std::sqrt(n);
  return out;
}

}  // namespace fmsim::reliability
