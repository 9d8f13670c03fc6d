// Named calibration parameters of the training-step model, per GPU architecture and per software stack.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"

namespace fmsim::training {

/// Per GPU architecture: how close kernels get to the datasheet peaks.
/// GEMM time = FLOPs / (peak * gemm_efficiency * g(m) g(n) g(k)) with g(x) = x / (x + gemm_half_dim):
/// large GEMMs approach gemm_efficiency, a dimension of gemm_half_dim halves it (tile and wave
/// quantisation, memory-bound skinny shapes).
struct GpuCalibration {
  double gemm_efficiency_bf16 = 0.75;
  double gemm_efficiency_fp8 = 0.65;
  double gemm_efficiency_fp4 = 0.55;
  /// Throughput of FP8 linear work (GEMM plus its quantisation) under a row-scaled or block-scaled
  /// recipe, relative to the per-tensor recipe that gemm_efficiency_fp8 describes.
  double fp8_rowwise_factor = 1.0;
  double fp8_block_factor = 1.0;
  double gemm_half_dim = 64.0;
  double attention_fwd_efficiency =
      0.55;  ///< reference fused attention forward (cuDNN / FA3; FA2 on Ampere), of the BF16 peak
  double attention_bwd_efficiency = 0.40;  ///< reference fused attention backward
  /// FlashAttention-2 on this architecture; 0 = same as the reference kernel (Ampere, where FA2
  /// is the reference). On Hopper FA2 uses neither WGMMA nor TMA and reaches far less.
  double flash2_fwd_efficiency = 0.0;
  double flash2_bwd_efficiency = 0.0;
  /// Head dimension at which attention would run at half its large-head rate, per kernel family
  /// (0 = no dependence): a head narrower than 128 does less MMA work per softmax and per K/V tile,
  /// eff(d) = eff x [d / (d + c)] / [128 / (128 + c)] for d < 128 (eff is measured at d = 128).
  double attention_head_dim_half = 0.0;
  double flash2_head_dim_half = 0.0;
  /// FP8 attention (Transformer Engine fp8_dot_product_attention): the share of the FP8-over-BF16
  /// peak ratio that fused attention gains in FP8; it runs at fp8_attention_factor x (FP8 peak /
  /// BF16 peak) times its BF16 rate, never slower than in BF16.
  double fp8_attention_factor = 0.81;
  /// State-space scans (Mamba-2 SSD chunk kernels, gated DeltaNet chunk kernels: Triton tl.dot
  /// kernels): fraction of the BF16 peak their matmul FLOPs reach; their bytes run at the memory
  /// roofline, the slower of the two sets the time.
  double ssm_scan_efficiency = 0.20;
  double memory_efficiency = 0.80;                ///< achieved fraction of HBM bandwidth for elementwise kernels
  core::Seconds kernel_overhead = core::us(3.0);  ///< launch + tail per kernel not hidden by the stream
  /// Tensor-core throughput (BF16 and FP8 GEMMs) sustained relative to the datasheet peak, beyond
  /// the efficiencies, for an architecture that shares another's efficiencies: Blackwell Ultra runs
  /// Blackwell's kernels on 160 SMs instead of 148 at a higher power limit (GB300 1,400 W, GB200
  /// 1,200 W) while NVIDIA prints the same dense BF16/FP8 peaks (its FP4 peak is reprinted, 15
  /// against 10 PFLOP/s, and not corrected). From datasheet facts, not fitted; 1 elsewhere.
  double sustained_rate_factor = 1.0;
  std::string source;  ///< the measurements behind these values

  /// The tile-shape factor g(x) = x / (x + gemm_half_dim) of one GEMM dimension.
  [[nodiscard]] double tile_factor(double x) const { return x / (x + gemm_half_dim); }

  [[nodiscard]] double gemm_efficiency(core::Precision p) const {
    switch (p) {
      case core::Precision::FP8: return gemm_efficiency_fp8;
      case core::Precision::FP4: return gemm_efficiency_fp4;
      default: return gemm_efficiency_bf16;
    }
  }

  /// gemm_efficiency(FP8) is measured with per-tensor scales; other recipes scale it by their factor.
  [[nodiscard]] double fp8_recipe_factor(core::Fp8Recipe r) const {
    switch (r) {
      case core::Fp8Recipe::Rowwise: return fp8_rowwise_factor;
      case core::Fp8Recipe::Block: return fp8_block_factor;
      default: return 1.0;
    }
  }
};

/// The attention kernel a software stack runs.
enum class AttentionKernel {
  Reference,        ///< the architecture's fused attention (cuDNN / FlashAttention-3 on Hopper and later)
  FlashAttention2,  ///< the flash-attn 2.x package (Ampere-generation kernels)
  /// Megatron-LM before FlashAttention (2019-2022): QK^T as one batched GEMM over the whole s x s
  /// score matrix (the causal mask is applied afterwards, so no FLOPs are skipped), Megatron's fused
  /// scale-mask-softmax kernel and dropout over the 16-bit scores, then a batched GEMM with V.
  /// Costed from the GEMM and HBM figures of the architecture: no efficiency of its own.
  Unfused,
};

/// The words of a stack's `attention_kernel:` in the calibration file.
inline constexpr core::Word<AttentionKernel> kAttentionKernelWordList[] = {
    {AttentionKernel::Reference, "reference"},
    {AttentionKernel::FlashAttention2, "flash-attention-2", "fa2, flash2"},
    {AttentionKernel::Unfused, "unfused"},
};
inline constexpr core::Vocabulary<AttentionKernel> kAttentionKernelWords{"attention kernel", kAttentionKernelWordList};

/// Forward and backward efficiency of `kernel` on the architecture calibrated by `g`.
[[nodiscard]] inline std::pair<double, double> attention_efficiency(const GpuCalibration& g, AttentionKernel kernel) {
  if (kernel == AttentionKernel::FlashAttention2 && g.flash2_fwd_efficiency > 0.0) {
    return {g.flash2_fwd_efficiency, g.flash2_bwd_efficiency};
  }
  return {g.attention_fwd_efficiency, g.attention_bwd_efficiency};
}

/// Attention efficiency at head dimension `head_dim` relative to the calibrated (d = 128) one; heads
/// wider than 128 keep 1 (FlashAttention-3 gains at 256, cuDNN stays flat and FlashAttention-2
/// loses: no common trend).
[[nodiscard]] inline double attention_head_dim_factor(const GpuCalibration& g, AttentionKernel kernel,
                                                      double head_dim) {
  const bool fa2 = kernel == AttentionKernel::FlashAttention2 && g.flash2_fwd_efficiency > 0.0;
  const double c = fa2 ? g.flash2_head_dim_half : g.attention_head_dim_half;
  if (c <= 0.0 || head_dim <= 0.0 || head_dim >= 128.0) return 1.0;
  return (head_dim / (head_dim + c)) / (128.0 / (128.0 + c));
}

/// The key of an architecture in the calibration YAML ("ampere", ..., "blackwell_ultra").
[[nodiscard]] inline std::string_view calibration_key(hardware::Architecture a) {
  switch (a) {
    case hardware::Architecture::Ampere: return "ampere";
    case hardware::Architecture::Hopper: return "hopper";
    case hardware::Architecture::Blackwell: return "blackwell";
    case hardware::Architecture::BlackwellUltra: return "blackwell_ultra";
  }
  return "?";
}

/// How a stack's MoE token dispatcher moves tokens between NVLink domains.
enum class MoeDispatcher {
  AllToAll,      ///< one copy per selected expert (NCCL all-to-all)
  Deduplicated,  ///< one copy per destination domain, fanned out over NVLink (DeepEP, HybridEP)
};

/// The words of --moe-dispatcher, `moe_dispatcher:` in job and calibration files.
inline constexpr core::Word<MoeDispatcher> kMoeDispatcherWordList[] = {
    {MoeDispatcher::AllToAll, "alltoall"},
    {MoeDispatcher::Deduplicated, "deduplicated"},
};
inline constexpr core::Vocabulary<MoeDispatcher> kMoeDispatcherWords{"MoE dispatcher", kMoeDispatcherWordList};

[[nodiscard]] constexpr std::string_view to_string(MoeDispatcher d) { return kMoeDispatcherWords.name(d); }

/// Expected inter-domain bytes of a deduplicating dispatcher relative to a plain all-to-all, for
/// balanced top-k routing over `experts` spread evenly over `domains` NVLink domains:
/// plain sends k (D-1)/D copies of a token off its domain; deduplicated sends one per remote
/// domain holding at least one of its experts, (D-1) (1 - P0), P0 = C(E - E/D, k) / C(E, k).
[[nodiscard]] inline double dedup_ratio(int experts, int top_k, int domains) {
  if (domains <= 1 || top_k <= 1 || experts <= 0) return 1.0;
  const double e = experts, per = e / domains;
  double p0 = 1.0;
  for (int i = 0; i < top_k; ++i) p0 *= std::max(0.0, (e - per - i) / (e - i));
  const double dedup = (domains - 1.0) * (1.0 - p0);
  const double plain = top_k * (domains - 1.0) / domains;
  return std::min(1.0, dedup / plain);
}

/// Per software stack (Megatron-Core/NeMo, torchtitan, LLM Foundry/Composer FSDP, DeepSpeed):
/// what the framework overlaps and fuses.
struct StackCalibration {
  std::string name;
  double compute_efficiency = 1.0;  ///< stack's kernels relative to the architecture's GEMM/attention efficiency
  AttentionKernel attention_kernel = AttentionKernel::Reference;
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  double tp_overlap = 0.0;          ///< fraction of TP communication hidden behind GEMMs when overlap is on
  double dp_overlap = 0.9;          ///< fraction of DP/FSDP communication that can hide behind compute
  double elementwise_factor = 1.0;  ///< memory traffic of elementwise work relative to fused kernels
  core::Seconds step_overhead = core::ms(20.0);  ///< per optimizer step: launch gaps, logging, data
  double layer_overhead_us = 0.0;                ///< per layer per micro-batch, forward+backward (host/framework), us
  double moe_layer_overhead_us = 0.0;  ///< per MoE layer per micro-batch: router, permutation, dispatcher syncs, us
  /// With the MoE all-to-all overlapped (parallelism::RecipeSwitches::overlap_ep_comm): the fraction of the hidden
  /// all-to-all time that the overlapping computation still loses (the SMs the dispatcher holds).
  double ep_overlap_cost = 0.0;
  std::string source;
};

/// All calibration data: per architecture and per stack.
struct Calibration {
  std::map<hardware::Architecture, GpuCalibration> gpus;
  std::map<std::string, StackCalibration> stacks;
  /// Benchmark priors of fitted values, by fit-parameter name ("hopper.gemm_efficiency_bf16",
  /// "megatron.layer_overhead_us"): where a fit starts and what it is anchored to.
  std::map<std::string, double> priors;
  /// How far each prior may be off, as a 1-sigma of ln(value / prior) (`prior_spread:`; 0.1 =
  /// +-10%), by the same names; a prior without one gets kDefaultPriorSpread (calibration_fit.hpp).
  std::map<std::string, double> prior_spreads;

  [[nodiscard]] const GpuCalibration& gpu(hardware::Architecture a) const;
  [[nodiscard]] const StackCalibration& stack(const std::string& name) const;
};

}  // namespace fmsim::training
