// The planner's search space: candidate values per parallelism dimension, and the cheap
// divisibility checks that prune a candidate before any costing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::planner {

/// Candidate values per dimension. An empty list means "the default candidates" (see
/// default_* below); a non-empty list pins the dimension to exactly those values.
struct SearchSpace {
  std::vector<int> tp;                          ///< default: powers of 2 up to the NVLink domain (at least 8)
  std::vector<int> pp;                          ///< default: 1..max_pp (at most the layers; uneven splits allowed)
  std::vector<int> vp;                          ///< default: 1, and 2..kMaxVirtualStages where pp*vp divides the layers
  std::vector<int> cp;                          ///< default: powers of 2 keeping >= kMinCpChunk tokens per rank
  std::vector<int> ep;                          ///< default (MoE only): powers of 2 dividing the experts
  std::vector<int> micro_batch;                 ///< default: 1, 2, 4, 8
  int max_pp = 32;                              ///< upper bound on pp (applies to pinned lists too)
  int max_tp = 0;                               ///< upper bound on tp; 0 = the NVLink domain (at least 8)
  std::vector<parallelism::Sharding> sharding;  ///< default: ddp, zero1, zero2, fsdp
  std::vector<parallelism::Recompute> recompute;  ///< default: none, selective, full
  std::vector<core::Precision> precision;         ///< default: bf16, fp8 (where the GPU has FP8)
};

inline constexpr int kMaxVirtualStages = 16;
inline constexpr std::int64_t kMinCpChunk = 1024;  ///< tokens per CP rank below which CP is not tried

/// The model-parallel part of a layout: what fixes the per-GPU shard of the model.
struct Shape {
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  bool pipeline_slots = false;  ///< the embedding and the loss count as pipeline slots (Megatron-Core)
  friend bool operator==(const Shape&, const Shape&) = default;
};

/// The per-GPU choices searched for every shape.
struct Variant {
  parallelism::Sharding sharding = parallelism::Sharding::DistributedOptimizer;
  int micro_batch = 1;
  parallelism::Recompute recompute = parallelism::Recompute::Selective;
  core::Precision precision = core::Precision::BF16;
  friend bool operator==(const Variant&, const Variant&) = default;
};

/// Shapes of `model` on `gpus` GPUs of `cluster` that pass every divisibility rule of
/// parallelism::why_invalid that does not depend on the variant (heads, layers, experts, CP and
/// GPU count), in a fixed order (tp, cp, pp, vp, ep ascending).
std::vector<Shape> enumerate_shapes(const workload::ModelSpec& model, int gpus, std::int64_t seq_len,
                                    const SearchSpace& space, const hardware::ClusterSpec& cluster);

/// Variants in a fixed order (sharding, micro-batch, recompute, precision); precisions the GPU
/// has no tensor-core rate for are left out.
std::vector<Variant> enumerate_variants(const SearchSpace& space, const hardware::GpuSpec& gpu);

/// Framework settings that are not searched but copied into every candidate layout.
struct FrameworkSettings {
  bool overlap_tp_comm = false;  ///< TP communication overlapped with GEMMs (Megatron userbuffers)
  bool overlap_dp_comm = true;
  bool overlap_pp_comm = true;
  bool fsdp_prefetch = true;
  bool bf16_grad_reduce = false;  ///< 16-bit gradient reduction (FSDP "pure" mixed precision)
  /// FP16 candidates reduce their gradients in 16 bits (parallelism::StackConventions, megatron-legacy).
  bool fp16_grad_reduce_in_16_bits = false;
  /// Sequence parallelism on candidates with tp > 1 (off for megatron-legacy: Megatron-LM of 2021).
  bool sequence_parallel = true;
  core::Fp8Recipe fp8_recipe = core::Fp8Recipe::Tensorwise;  ///< scaling of the FP8 candidates
  /// Megatron-Bridge's recipe switches: the all-to-all overlap on candidates with ep > 1, FP8
  /// attention on FP8 candidates, the other two on every candidate.
  parallelism::RecipeSwitches recipe;
  friend bool operator==(const FrameworkSettings&, const FrameworkSettings&) = default;
};

/// The full layout of a shape and a variant (dp filled; sequence parallelism on when tp > 1 and the
/// framework has it).
parallelism::Layout make_layout(const Shape& shape, const Variant& variant, std::int64_t global_batch,
                                const FrameworkSettings& framework = {});

/// The variant-dependent divisibility rule: global batch a multiple of micro_batch*dp.
[[nodiscard]] inline bool divides_batch(const Shape& shape, const Variant& variant, std::int64_t global_batch) {
  return global_batch % (static_cast<std::int64_t>(variant.micro_batch) * shape.dp) == 0;
}

/// "tp8 pp4 vp5 dp16 zero1 mbs1 sel fp8": cp, ep, etp and vp appear only when above 1.
std::string layout_label(const parallelism::Layout& layout);

}  // namespace fmsim::planner
