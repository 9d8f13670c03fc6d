// Routed load on the busiest expert-parallel rank: one function for serving, RL and training.
#pragma once

#include "workload/model_spec.hpp"

namespace fmsim::workload {

/// Expected maximum of n independent standard normal variables (Blom's approximation,
/// Phi^-1((n - 0.375) / (n + 0.25)); within 3% of the exact order statistic for n >= 2); 0 for n <= 1.
double expected_max_standard_normal(int n);

/// Routed tokens on the busiest of `ep` expert-parallel ranks over the mean, for a router whose
/// per-expert load has coefficient of variation `cv` (std/mean across experts): a rank holding
/// E/ep experts carries a relative spread cv / sqrt(E/ep), and the busiest of ep ranks sits
/// z_ep standard deviations above the mean: 1 + z_ep cv / sqrt(E/ep), capped where the rank
/// receives every token's copies that can reach it (min(k, E/ep) per token). 1 for a dense
/// model, ep 1 or cv 0 (a balanced router: auxiliary loss or forced balancing, as the published
/// benchmark recipes run).
double expert_load_factor(const ModelSpec& model, int ep, double cv);

}  // namespace fmsim::workload
