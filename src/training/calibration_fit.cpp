// Coordinate-descent fit of the calibration parameters on the analytical step model.
#include "training/calibration_fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace fmsim::training {

std::vector<FitParameter> fit_parameters(Calibration& cal, const std::vector<Measurement>& measurements) {
  std::set<std::pair<hardware::Architecture, core::Precision>> used_precisions;
  std::set<hardware::Architecture> used_archs;
  std::set<std::string> used_stacks, moe_stacks;
  std::set<hardware::Architecture> flash2_archs;  // architectures with runs of a FlashAttention-2 stack
  for (const auto& m : measurements) {
    auto a = m.job.cluster.gpu.architecture;
    if (a == hardware::Architecture::BlackwellUltra) a = hardware::Architecture::Blackwell;
    used_archs.insert(a);
    auto p = m.job.layout.precision;
    if (p == core::Precision::FP16 || p == core::Precision::TF32) p = core::Precision::BF16;
    used_precisions.insert({a, p});
    used_stacks.insert(m.job.stack);
    if (cal.stack(m.job.stack).attention_kernel == AttentionKernel::FlashAttention2) flash2_archs.insert(a);
    if (m.job.model.is_moe()) moe_stacks.insert(m.job.stack);
  }
  std::vector<FitParameter> out;
  for (auto& [arch, g] : cal.gpus) {
    if (!used_archs.count(arch) || arch == hardware::Architecture::BlackwellUltra) continue;
    const std::string n(calibration_key(arch));
    GpuCalibration* ultra = nullptr;
    if (arch == hardware::Architecture::Blackwell && cal.gpus.count(hardware::Architecture::BlackwellUltra)) {
      ultra = &cal.gpus[hardware::Architecture::BlackwellUltra];
    }
    auto link = [&](double GpuCalibration::*field) {
      return ultra ? std::vector<double*>{&(ultra->*field)} : std::vector<double*>{};
    };
    if (used_precisions.count({arch, core::Precision::BF16})) {
      out.push_back({n + ".gemm_efficiency_bf16", &g.gemm_efficiency_bf16, 0.45, 0.90, link(&GpuCalibration::gemm_efficiency_bf16)});
    }
    if (used_precisions.count({arch, core::Precision::FP8})) {
      out.push_back({n + ".gemm_efficiency_fp8", &g.gemm_efficiency_fp8, 0.40, 0.90, link(&GpuCalibration::gemm_efficiency_fp8)});
    }
    if (used_precisions.count({arch, core::Precision::FP4})) {
      out.push_back({n + ".gemm_efficiency_fp4", &g.gemm_efficiency_fp4, 0.35, 0.90, link(&GpuCalibration::gemm_efficiency_fp4)});
    }
    FitParameter att{n + ".attention_fwd_efficiency", &g.attention_fwd_efficiency, 0.30, 0.80,
                     link(&GpuCalibration::attention_fwd_efficiency)};
    att.scaled.push_back({&g.attention_bwd_efficiency, g.attention_bwd_efficiency / g.attention_fwd_efficiency});
    if (ultra) {
      att.scaled.push_back({&ultra->attention_bwd_efficiency, ultra->attention_bwd_efficiency / ultra->attention_fwd_efficiency});
    }
    out.push_back(att);
    if (flash2_archs.count(arch) && g.flash2_fwd_efficiency > 0.0) {
      FitParameter fa2{n + ".flash2_fwd_efficiency", &g.flash2_fwd_efficiency, 0.10, 0.80};
      fa2.scaled.push_back({&g.flash2_bwd_efficiency, g.flash2_bwd_efficiency / g.flash2_fwd_efficiency});
      out.push_back(fa2);
    }
  }
  for (auto& [name, s] : cal.stacks) {
    if (!used_stacks.count(name)) continue;
    // Megatron is the reference stack (its kernels define the architecture's efficiencies).
    if (name != "megatron") out.push_back({name + ".compute_efficiency", &s.compute_efficiency, 0.6, 1.2});
    out.push_back({name + ".layer_overhead_us", &s.layer_overhead_us, 0.0, 500.0});
    if (moe_stacks.count(name)) out.push_back({name + ".moe_layer_overhead_us", &s.moe_layer_overhead_us, 0.0, 5000.0});
  }
  for (auto& p : out) {
    const auto it = cal.priors.find(p.name);
    p.prior = it != cal.priors.end() ? it->second : *p.value;
  }
  return out;
}

namespace {

void set_value(const FitParameter& p, double v) {
  *p.value = v;
  for (double* l : p.linked) *l = v;
  for (const auto& [ptr, ratio] : p.scaled) *ptr = v * ratio;
}

double prior_term(const std::vector<FitParameter>& params, double anchor) {
  if (anchor <= 0.0) return 0.0;
  double sum = 0.0;
  for (const auto& p : params) {
    const bool us = p.name.ends_with("_us");
    const double d = us ? std::log((*p.value + 50.0) / (p.prior + 50.0)) : std::log(*p.value / p.prior);
    sum += d * d;
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
          if (p.name.ends_with("_us")) {
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
