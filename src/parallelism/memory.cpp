// Memory footprint of one GPU under a parallel layout.
#include "parallelism/memory.hpp"

#include <algorithm>

#include "workload/operators.hpp"

namespace fmsim::parallelism {

MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& l, std::int64_t seq_len,
                                const StateBytes& state) {
  workload::ShardContext ctx{l.micro_batch, seq_len, l.tp, l.cp, l.ep, l.etp, l.sequence_parallel};
  const int layers_per_stage = (model.num_layers + std::max(1, l.pp) - 1) / std::max(1, l.pp);

  // Parameters on a first-stage GPU: its layers (all vp chunks) plus the embedding; split into
  // dense (sharded over DP) and expert (sharded over expert-DP) parts.
  double dense = 0.0;
  double expert = 0.0;
  double largest_layer = 0.0;
  double act_per_mb = 0.0;
  // Each distinct layer kind (dense/MoE x full/sliding attention) is costed once.
  struct Kind {
    bool ready = false;
    double dense = 0, expert = 0, act = 0;
  };
  Kind kinds[4];
  for (int i = 0; i < layers_per_stage; ++i) {
    // Stage 0 holds layers 0.. of each chunk; MoE/dense mix is taken from the first layers.
    const int key = (model.is_moe_layer(i) ? 2 : 0) + (model.is_sliding_layer(i) ? 1 : 0);
    Kind& k = kinds[key];
    if (!k.ready) {
      for (const auto& op : workload::layer_operators(model, i, ctx)) (op.expert ? k.expert : k.dense) += op.weights;
      const auto act = workload::layer_activation_bytes(model, i, ctx);
      k.act = l.recompute == Recompute::None ? act.none : l.recompute == Recompute::Selective ? act.selective : act.full;
      k.ready = true;
    }
    dense += k.dense;
    expert += k.expert;
    largest_layer = std::max(largest_layer, k.dense + k.expert);
    act_per_mb += k.act;
  }
  for (const auto& op : workload::embedding_operators(model, ctx)) dense += op.weights;
  if (l.pp == 1) {
    for (const auto& op : workload::head_operators(model, ctx)) dense += op.weights;
  }

  MemoryBreakdown m;
  m.params_on_gpu = dense + expert;
  const double dp = std::max(1, l.dp);
  const double edp = std::max(1, l.expert_dp());
  const double shard = l.sharding == Sharding::Zero3 ? std::max(1, l.fsdp_shard_size()) : dp;
  const double eshard = l.sharding == Sharding::Zero3 ? std::max(1.0, edp * l.fsdp_shard_size() / dp) : edp;
  const bool fp8 = l.precision == core::Precision::FP8 || l.precision == core::Precision::FP4;
  const double wbytes = state.weights + (fp8 ? state.fp8_extra : 0.0);

  const auto sharded = [&](double per_param, bool shard_it) {
    return shard_it ? dense * per_param / shard + expert * per_param / eshard : (dense + expert) * per_param;
  };
  m.weights = core::Bytes(sharded(wbytes, l.sharding == Sharding::Zero3));
  m.gradients = core::Bytes(sharded(state.gradients, l.sharding == Sharding::Zero2 || l.sharding == Sharding::Zero3));
  m.optimizer = core::Bytes(sharded(state.optimizer, l.sharding != Sharding::None));

  // Micro-batches whose activations stage 0 holds at the peak of the schedule.
  const double mbs_total = static_cast<double>(std::max<std::int64_t>(1, l.micro_batches()));
  double in_flight = 1.0;
  if (l.pp > 1) {
    in_flight = l.vp > 1 ? l.pp * (1.0 + (l.pp - 1.0) / (l.pp * l.vp)) : l.pp;
    in_flight = std::min(in_flight, mbs_total);
  }
  double activations = act_per_mb * in_flight;
  if (l.recompute == Recompute::Full) {
    // The layer being recomputed needs its full activations once.
    activations += workload::layer_activation_bytes(model, 0, ctx).none;
  }
  m.activations = core::Bytes(activations);

  double buffers = 0.0;
  if (l.sharding == Sharding::Zero3) buffers += 2.0 * largest_layer * state.weights;  // gathered layers (prefetch)
  if (l.pp == 1) {
    // fp32 logits and their gradient on the last stage (the same GPU when pp == 1).
    const double tokens = static_cast<double>(l.micro_batch) * static_cast<double>(seq_len) / l.cp;
    buffers += 2.0 * tokens * static_cast<double>(model.vocab) / l.tp * 4.0;
  }
  buffers += 256.0 * 1024 * 1024;  // DP gradient buckets and NCCL buffers
  m.buffers = core::Bytes(buffers);
  const double subtotal = m.weights.value() + m.gradients.value() + m.optimizer.value() + activations + buffers;
  m.overhead = core::Bytes(2.5 * 1024 * 1024 * 1024 + 0.05 * subtotal);
  return m;
}

}  // namespace fmsim::parallelism
