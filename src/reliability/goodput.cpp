// Analytic goodput (model and formulas in goodput.hpp, derivation in docs/models/reliability.md).
#include "reliability/goodput.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fmsim::reliability {

std::string to_string(CheckpointStrategy s) { return std::string(kCheckpointStrategyWords.name(s)); }

core::Seconds effective_interval(const CheckpointTiming& t) { return std::max(t.interval, t.persist - t.blocking); }

GoodputResult analytic_goodput(const GoodputScenario& s) {
  FMSIM_CHECK(s.failures.rate_per_second > 0.0, "failure rate must be positive");
  FMSIM_CHECK(s.checkpoint.interval.value() > 0.0, "checkpoint interval must be positive");
  const double lambda = s.failures.rate_per_second;
  const double tau = effective_interval(s.checkpoint).value();
  const double delta = s.checkpoint.blocking.value();
  const double period = tau + delta;
  const double lag = std::max(0.0, s.checkpoint.persist.value() - delta);
  const RecoveryCosts& r = s.recovery;

  // Split the interruption rate: rollback (back to the last snapshot), peer-recovered, planned.
  double total = 0.0, rollback = 0.0, peer = 0.0, planned = 0.0, rollback_replace = 0.0;
  for (const auto& c : s.failures.causes) {
    total += c.count;
    if (c.planned) {
      planned += c.count;
    } else if (c.replace_node && s.peer_recovery) {
      peer += c.count;
    } else {
      rollback += c.count;
      if (c.replace_node) rollback_replace += c.count;
    }
  }
  FMSIM_CHECK(total > 0.0, "failure process has no causes");
  const double l_roll = lambda * rollback / total;
  const double l_peer = lambda * peer / total;
  const double l_plan = lambda * planned / total;

  // Rollback renewal (Daly generalised to two recovery durations: with and without a swap).
  const double base = r.detect.value() + r.restart.value() + s.checkpoint.load.value();
  const double with_swap = base + r.replace.value();
  const double share_swap = rollback > 0.0 ? rollback_replace / rollback : 0.0;
  TimeSplit seg;  // per segment of `period` wall time
  double seg_wall = period;
  double seg_failures = 0.0;
  if (l_roll > 0.0) {
    const double q = share_swap * std::exp(-l_roll * with_swap) + (1.0 - share_swap) * std::exp(-l_roll * base);
    const double e_rec = (1.0 - q) / (l_roll * q);
    const double grow = std::exp(l_roll * period);
    const double failed_time =
        grow * ((1.0 - std::exp(-l_roll * period)) / l_roll - period * std::exp(-l_roll * period));
    const double lost = grow * ((1.0 - std::exp(-l_roll * tau)) / l_roll - tau * std::exp(-l_roll * period));
    seg.useful = tau;
    seg.lost_work = lost;
    seg.checkpoint = delta + (failed_time - lost);
    seg.restart = (grow - 1.0) * e_rec;
    seg_wall = period + failed_time + seg.restart;
    seg_failures = (grow - 1.0) / q;
  } else {
    seg.useful = tau;
    seg.checkpoint = delta;
  }

  GoodputResult out;
  const double horizon = s.horizon.value() > 0.0 ? s.horizon.value() : seg_wall;
  double scale = horizon / seg_wall;
  out.time.useful = seg.useful * scale;
  out.time.lost_work = seg.lost_work * scale;
  out.time.checkpoint = seg.checkpoint * scale;
  out.time.restart = seg.restart * scale;
  out.interruptions = seg_failures * scale;

  // First-order terms: the async lag loses extra compute on each rollback; peer-recovered and
  // planned interruptions take time away without rolling back.
  const double lag_loss = l_roll * horizon * lag * (tau / period);
  const double peer_cost = r.detect.value() + r.replace.value() + r.restart.value() + s.peer_load.value();
  const double peer_lost = 0.5 * s.step_time.value();
  const double plan_cost = r.restart.value() + s.checkpoint.load.value();
  const double away = horizon * (l_peer * (peer_cost + peer_lost) + l_plan * (plan_cost + delta)) + lag_loss;
  // Remove `away` from each bucket in proportion, then book it where it belongs.
  const double keep = std::max(0.0, 1.0 - away / horizon);
  out.time.useful *= keep;
  out.time.lost_work *= keep;
  out.time.checkpoint *= keep;
  out.time.restart *= keep;
  out.interruptions = out.interruptions * keep + horizon * (l_peer + l_plan);
  out.time.lost_work += lag_loss + horizon * l_peer * peer_lost;
  out.time.restart += horizon * (l_peer * peer_cost + l_plan * plan_cost);
  out.time.checkpoint += horizon * l_plan * delta;
  out.ettr = out.time.useful / horizon;
  return out;
}

core::Seconds optimal_interval(const GoodputScenario& scenario) {
  GoodputScenario s = scenario;
  auto ettr = [&](double tau) {
    s.checkpoint.interval = core::Seconds(tau);
    return analytic_goodput(s).ettr;
  };
  // ETTR(tau) is unimodal: it rises while checkpoint stalls dominate and falls as lost work grows.
  const double mtbf = 1.0 / scenario.failures.rate_per_second;
  double lo = std::max(1e-3, 1e-4 * mtbf);
  double hi = std::max(10.0 * mtbf, 10.0 * scenario.checkpoint.blocking.value());
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  // Search on a log scale: the optimum spans many orders of magnitude across scenarios.
  double a = std::log(lo), b = std::log(hi);
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = ettr(std::exp(c)), fd = ettr(std::exp(d));
  for (int i = 0; i < 200 && (b - a) > 1e-9; ++i) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = ettr(std::exp(c));
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = ettr(std::exp(d));
    }
  }
  return core::Seconds(std::exp(0.5 * (a + b)));
}

}  // namespace fmsim::reliability
