// Optimal checkpoint interval for exponential (Poisson) failures.
//
// Notation (Daly 2006): tau = compute time between checkpoints, delta = checkpoint (dump) time,
// R = restart time, M = mean time to interrupt, T_s = failure-free solve time.
//
//   Young (1974), first order:   tau = sqrt(2 delta M)
//     J. W. Young, "A first order approximation to the optimum checkpoint interval",
//     Communications of the ACM 17(9), 1974.
//   Daly (2006), higher order:   tau = sqrt(2 delta M) [1 + 1/3 sqrt(delta/2M) + 1/9 (delta/2M)] - delta
//                                (delta < 2M; tau = M otherwise)
//   Daly's full cost model:      T_w = M e^{R/M} (e^{(tau+delta)/M} - 1) T_s / tau
//     whose exact minimiser is   tau = M [1 + W0(-e^{-(delta/M + 1)})]   (W0: Lambert W, principal branch)
//     J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
//     Future Generation Computer Systems 22(3), 2006, pp. 303-312.
// Effective training time ratio (ETTR) = T_s / T_w. First-order form:
//   ETTR ~ 1 - delta/tau - tau/(2M) - R/M   (= 1 - sqrt(2 delta/M) - R/M at Young's interval)
// Domain: exponential inter-arrival times; delta, R << M for the first-order forms.
#pragma once

#include "core/units.hpp"

namespace fmsim::reliability {

/// Principal branch W0 of the Lambert W function, for x >= -1/e.
double lambert_w0(double x);

/// Young's first-order optimum sqrt(2 delta M).
core::Seconds young_interval(core::Seconds delta, core::Seconds mtbf);

/// Daly's higher-order (perturbation) optimum.
core::Seconds daly_interval(core::Seconds delta, core::Seconds mtbf);

/// The exact minimiser of Daly's full cost model (Lambert W form).
core::Seconds daly_exact_interval(core::Seconds delta, core::Seconds mtbf);

/// T_w / T_s under Daly's full model.
double daly_wall_time_ratio(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf);

/// ETTR = T_s / T_w under Daly's full model.
double daly_ettr(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf);

/// First-order ETTR 1 - delta/tau - tau/(2M) - R/M.
double first_order_ettr(core::Seconds tau, core::Seconds delta, core::Seconds restart, core::Seconds mtbf);

}  // namespace fmsim::reliability
