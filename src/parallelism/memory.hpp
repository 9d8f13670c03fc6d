// Memory per GPU: weights, gradients, optimizer states, activations and buffers, by layout.
#pragma once

#include <cstdint>

#include "core/units.hpp"
#include "parallelism/layout.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::parallelism {

/// Bytes per parameter of each training state (mixed-precision Adam defaults, Megatron/PyTorch).
struct StateBytes {
  double weights = 2.0;     ///< 16-bit working weights
  double gradients = 4.0;   ///< fp32 main gradients (Megatron); 2 for bf16 reduce
  double optimizer = 12.0;  ///< fp32 master weights + Adam m and v
  double fp8_extra = 1.0;   ///< FP8 training: cached FP8 copies of the weights
};

/// Memory on the most loaded GPU (the first pipeline stage, which holds the most in-flight
/// micro-batches and the embedding).
struct MemoryBreakdown {
  core::Bytes weights{};
  core::Bytes gradients{};
  core::Bytes optimizer{};
  core::Bytes activations{};
  core::Bytes buffers{};   ///< communication buckets, FSDP gathered layers, logits, workspace
  core::Bytes overhead{};  ///< CUDA context and allocator fragmentation
  double params_on_gpu = 0.0;  ///< parameters held (before sharding by DP)
  [[nodiscard]] core::Bytes total() const {
    return weights + gradients + optimizer + activations + buffers + overhead;
  }
};

/// Estimates memory for one GPU. Assumptions (Korthikanti et al. 2022; Rajbhandari et al. 2020):
/// activations by recompute policy, times the micro-batches in flight on stage 0 (pp for 1F1B,
/// pp*(1 + (pp-1)/(pp*vp)) interleaved, capped by the micro-batch count); states by sharding:
/// ZeRO-1 shards optimizer states over DP, ZeRO-2 also gradients, ZeRO-3/FSDP also weights
/// (plus two gathered layers). Expert states shard over expert-DP. Fixed overhead: 2.5 GiB
/// context + 5% fragmentation.
MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& layout, std::int64_t seq_len,
                                const StateBytes& state = {});

}  // namespace fmsim::parallelism
