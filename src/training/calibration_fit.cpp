// Coordinate-descent fit of the calibration parameters on the analytical step model.
#include "training/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "parallelism/stack.hpp"

namespace fmsim::training {

namespace {

// What a set of measurements exercises; a parameter nothing exercises cannot be fitted.
struct Usage {
  std::set<std::pair<hardware::Architecture, core::Precision>> precisions;
  std::set<std::pair<hardware::Architecture, core::Fp8Recipe>> fp8_recipes;
  std::set<hardware::Architecture> archs, flash2_archs;  // flash2: runs of a FlashAttention-2 stack
  std::set<std::string> stacks, moe_stacks;
};

Usage usage_of(const Calibration& cal, const std::vector<Measurement>& measurements) {
  Usage u;
  for (const auto& m : measurements) {
    auto a = m.job.cluster.gpu.architecture;
    if (a == hardware::Architecture::BlackwellUltra) a = hardware::Architecture::Blackwell;
    u.archs.insert(a);
    auto p = m.job.layout.precision;
    if (p == core::Precision::FP16 || p == core::Precision::TF32) p = core::Precision::BF16;
    u.precisions.insert({a, p});
    if (p == core::Precision::FP8) u.fp8_recipes.insert({a, m.job.layout.fp8_recipe});
    u.stacks.insert(m.job.stack);
    if (cal.stack(m.job.stack).attention_kernel == AttentionKernel::FlashAttention2) u.flash2_archs.insert(a);
    if (m.job.model.is_moe()) u.moe_stacks.insert(m.job.stack);
  }
  return u;
}

// Every fittable parameter, or (with `usage`) only those the measurements exercise.
std::vector<FitParameter> build_parameters(Calibration& cal, const Usage* usage) {
  std::vector<FitParameter> out;
  for (auto& entry : cal.gpus) {
    // Named copies, not a structured binding: the lambdas below capture `arch`, which clang 14
    // does not allow for a binding (C++20 P1091, clang 16).
    const hardware::Architecture arch = entry.first;
    GpuCalibration& g = entry.second;
    if (arch == hardware::Architecture::BlackwellUltra || (usage && !usage->archs.count(arch))) continue;
    const std::string n(calibration_key(arch));
    GpuCalibration* ultra = nullptr;
    if (arch == hardware::Architecture::Blackwell && cal.gpus.count(hardware::Architecture::BlackwellUltra)) {
      ultra = &cal.gpus[hardware::Architecture::BlackwellUltra];
    }
    auto link = [&](double GpuCalibration::*field) {
      return ultra ? std::vector<double*>{&(ultra->*field)} : std::vector<double*>{};
    };
    auto uses = [&](core::Precision p) { return !usage || usage->precisions.count({arch, p}); };
    if (uses(core::Precision::BF16)) {
      out.push_back({n + ".gemm_efficiency_bf16", &g.gemm_efficiency_bf16, 0.45, 0.90,
                     link(&GpuCalibration::gemm_efficiency_bf16)});
    }
    if (uses(core::Precision::FP8)) {
      out.push_back(
          {n + ".gemm_efficiency_fp8", &g.gemm_efficiency_fp8, 0.40, 0.90, link(&GpuCalibration::gemm_efficiency_fp8)});
    }
    // Recipe factors exist only where the YAML gives one (an architecture with FP8 tensor cores).
    auto uses_recipe = [&](core::Fp8Recipe r) { return !usage || usage->fp8_recipes.count({arch, r}); };
    if (uses_recipe(core::Fp8Recipe::Rowwise) && cal.priors.count(n + ".fp8_rowwise_factor")) {
      out.push_back(
          {n + ".fp8_rowwise_factor", &g.fp8_rowwise_factor, 0.4, 1.3, link(&GpuCalibration::fp8_rowwise_factor)});
    }
    if (uses_recipe(core::Fp8Recipe::Block) && cal.priors.count(n + ".fp8_block_factor")) {
      out.push_back({n + ".fp8_block_factor", &g.fp8_block_factor, 0.4, 1.3, link(&GpuCalibration::fp8_block_factor)});
    }
    if (uses(core::Precision::FP4)) {
      out.push_back(
          {n + ".gemm_efficiency_fp4", &g.gemm_efficiency_fp4, 0.35, 0.90, link(&GpuCalibration::gemm_efficiency_fp4)});
    }
    FitParameter att{n + ".attention_fwd_efficiency", &g.attention_fwd_efficiency, 0.30, 0.80,
                     link(&GpuCalibration::attention_fwd_efficiency)};
    att.scaled.push_back({&g.attention_bwd_efficiency, g.attention_bwd_efficiency / g.attention_fwd_efficiency});
    if (ultra) {
      att.scaled.push_back(
          {&ultra->attention_bwd_efficiency, ultra->attention_bwd_efficiency / ultra->attention_fwd_efficiency});
    }
    out.push_back(att);
    if ((!usage || usage->flash2_archs.count(arch)) && g.flash2_fwd_efficiency > 0.0) {
      FitParameter fa2{n + ".flash2_fwd_efficiency", &g.flash2_fwd_efficiency, 0.10, 0.80};
      fa2.scaled.push_back({&g.flash2_bwd_efficiency, g.flash2_bwd_efficiency / g.flash2_fwd_efficiency});
      out.push_back(fa2);
    }
  }
  for (auto& [name, s] : cal.stacks) {
    if (usage && !usage->stacks.count(name)) continue;
    // The reference stack's kernels define the architecture's efficiencies (parallelism/stack.hpp).
    if (!parallelism::stack_conventions(name).reference_kernels)
      out.push_back({name + ".compute_efficiency", &s.compute_efficiency, 0.6, 1.2});
    out.push_back({name + ".layer_overhead_us", &s.layer_overhead_us, 0.0, 500.0, {}, {}, 0.0, true});
    if (!usage || usage->moe_stacks.count(name)) {
      out.push_back({name + ".moe_layer_overhead_us", &s.moe_layer_overhead_us, 0.0, 5000.0, {}, {}, 0.0, true});
    }
  }
  for (auto& p : out) {
    const auto it = cal.priors.find(p.name);
    p.prior = it != cal.priors.end() ? it->second : *p.value;
    const auto spread = cal.prior_spreads.find(p.name);
    p.spread = spread != cal.prior_spreads.end() ? spread->second : kDefaultPriorSpread;
  }
  return out;
}

}  // namespace

std::vector<FitParameter> fit_parameters(Calibration& cal, const std::vector<Measurement>& measurements) {
  const Usage usage = usage_of(cal, measurements);
  return build_parameters(cal, &usage);
}

namespace {

void set_value(const FitParameter& p, double v) {
  *p.value = v;
  for (double* l : p.linked) *l = v;
  for (const auto& [ptr, ratio] : p.scaled) *ptr = v * ratio;
}

// Every value with a cited prior back to it (linked and scaled values follow), fitted or not by
// the coming fit: a value the remaining measurements cannot move must not keep a fit to others.
void reset_to_priors(Calibration& cal) {
  for (const auto& p : build_parameters(cal, nullptr)) {
    if (cal.priors.count(p.name)) set_value(p, std::clamp(p.prior, p.min, p.max));
  }
}

double prior_term(const std::vector<FitParameter>& params, double anchor) {
  if (anchor <= 0.0) return 0.0;
  double sum = 0.0;
  for (const auto& p : params) {
    const double d = p.microseconds ? std::log((*p.value + 50.0) / (p.prior + 50.0)) : std::log(*p.value / p.prior);
    sum += (d / p.spread) * (d / p.spread);
  }
  return anchor * sum;
}

}  // namespace

double fit_loss(const Calibration& cal, const std::vector<Measurement>& measurements) {
  double sum = 0.0;
  int n = 0;
  for (const auto& m : measurements) {
    const auto r = estimate_step(m.job, cal, m.comm);
    if (!r.feasible) continue;
    sum += std::fabs(std::log(r.step_time.value() / m.measured_step_time_s));
    ++n;
  }
  return n > 0 ? sum / n : 0.0;
}

FitReport fit_calibration(Calibration& cal, const std::vector<Measurement>& measurements, const FitOptions& options) {
  FitReport rep;
  auto params = fit_parameters(cal, measurements);
  rep.loss_before = fit_loss(cal, measurements);
  if (options.from_priors) {
    reset_to_priors(cal);
    for (const auto& p : params) set_value(p, std::clamp(p.prior, p.min, p.max));
  }
  double best = fit_loss(cal, measurements) + prior_term(params, options.anchor);
  double step = 0.25;
  for (int round = 0; round < options.rounds; ++round) {
    for (auto& p : params) {
      for (int dir : {+1, -1}) {
        for (int tries = 0; tries < 6; ++tries) {
          const double old = *p.value;
          double candidate;
          if (p.microseconds) {
            candidate = std::clamp(old + dir * step * std::max(50.0, old), p.min, p.max);
          } else {
            candidate = std::clamp(old * (1.0 + dir * step), p.min, p.max);
          }
          if (candidate == old) break;
          set_value(p, candidate);
          const double loss = fit_loss(cal, measurements) + prior_term(params, options.anchor);
          ++rep.evaluations;
          if (loss + 1e-12 < best) {
            best = loss;
          } else {
            set_value(p, old);
            break;
          }
        }
      }
    }
    step *= 0.5;
  }
  rep.loss_after = fit_loss(cal, measurements);
  return rep;
}

}  // namespace fmsim::training
