// The order in which one pipeline stage issues its forward and backward passes in a training step:
// Megatron-LM's 1F1B schedule and its interleaved (virtual pipeline) variant. Pure: no costs, no
// time, just the order; the training model plays it on the event engine.
#pragma once

#include <vector>

namespace fmsim::parallelism {

/// One pass of one model chunk over one micro-batch on a stage.
struct PipelineItem {
  bool forward = true;  ///< forward pass (else backward)
  int chunk = 0;        ///< virtual-pipeline chunk on this stage, 0 .. vp-1
  int micro_batch = 0;  ///< 0 .. micro_batches-1

  friend bool operator==(const PipelineItem&, const PipelineItem&) = default;
};

/// The issue order of stage `stage` (0 .. pp-1) for `micro_batches` micro-batches, each stage holding
/// `vp` model chunks (vp = 1: plain 1F1B).
///
/// 1F1B (Narayanan et al., SC'21, Fig. 4 top; Megatron-LM schedules.py
/// forward_backward_pipelining_without_interleaving): pp - stage - 1 warm-up forwards, then
/// alternate one forward and one backward, then the remaining backwards; micro-batches in order.
///
/// Interleaved (same paper, Fig. 4 bottom; forward_backward_pipelining_with_interleaving): forward
/// k runs chunk (k / pp) mod vp on micro-batch (k / (pp vp)) pp + k mod pp, i.e. groups of pp
/// micro-batches sweep the chunks in order; backward k runs the chunks in reverse. Warm-up is
/// (pp - stage - 1) x 2 + (vp - 1) x pp forwards. Megatron requires micro_batches % pp == 0 for
/// interleaving; otherwise every forward runs before the first backward (all-forward-first):
/// chunk 0 over every micro-batch, then chunk 1, ...; backwards from the last chunk down.
///
/// Every (chunk, micro-batch) appears once forward and once backward, its backward after its
/// forward. Empty for a non-positive count or an out-of-range stage.
[[nodiscard]] std::vector<PipelineItem> pipeline_issue_order(int pp, int vp, int micro_batches, int stage);

}  // namespace fmsim::parallelism
