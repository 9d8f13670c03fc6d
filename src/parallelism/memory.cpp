// Memory footprint of one GPU under a parallel layout.
#include "parallelism/memory.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "workload/operators.hpp"

namespace fmsim::parallelism {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Parameters and per-micro-batch activations of one pipeline stage (all its virtual chunks).
struct StageLoad {
  double dense = 0.0, expert = 0.0;  // parameters on this GPU (after TP/EP sharding)
  double largest_layer = 0.0;        // parameters of the largest layer (FSDP gathers)
  double act_per_mb = 0.0;           // activations kept per micro-batch, all layers of the stage
  double full_layer = 0.0;           // one layer's activations with nothing recomputed
  int layers = 0;                    // transformer layers of the stage
  int mtp_layers = 0;                // multi-token-prediction modules on this (the last) stage
  double embedding = 0.0;            // input-embedding parameters on this GPU (the first stage)
};

// Activations kept under Megatron-Core's recompute_modules: everything but what the repeated
// submodules free ("moe" covers moe_act and shared_experts), never less than the layer input.
double modules_kept(const workload::ActivationBytes& a, const Layout& l) {
  const auto& m = a.modules;
  double freed = 0.0;
  if (l.recomputes(RecomputeModule::CoreAttn)) freed += m.core_attn;
  if (l.recomputes(RecomputeModule::Layernorm)) freed += m.layernorm;
  if (l.recomputes(RecomputeModule::MlaUpProj)) freed += m.mla_up_proj;
  if (l.recomputes(RecomputeModule::Mlp)) freed += m.mlp;
  if (l.recomputes(RecomputeModule::Moe)) {
    freed += m.moe;
  } else {
    if (l.recomputes(RecomputeModule::MoeAct)) freed += m.moe_act;
    if (l.recomputes(RecomputeModule::SharedExperts)) freed += m.shared_experts;
  }
  return std::max(a.full, a.none - freed);
}

// One distinct layer kind (mixer x FFN x full/sliding attention), costed once per estimate and
// shared by every stage.
struct Kind {
  bool ready = false;
  double dense = 0, expert = 0, act = 0, none = 0;
};
using Kinds = std::array<Kind, workload::ModelSpec::kLayerKinds>;

StageLoad stage_load(const workload::ModelSpec& model, const Layout& l, int stage, const workload::ShardContext& ctx,
                     const MemoryOptions& o, Kinds& kinds) {
  const int pp = std::max(1, l.pp);
  const int vp = std::max(1, l.vp);
  const workload::ActivationOptions ao{o.flash_attention, o.fp8_activations, o.gathered_tp_inputs};
  const bool uniform = model.uniform_layers();
  StageLoad s;
  for (int c = 0; c < vp; ++c) {
    // The chunk's layers, as the step model (chunk k = c*pp + stage).
    const LayerRange range = chunk_layers(model.num_layers, l, stage, c);
    // A model of one layer kind: the chunk's layers are costed as one layer times their count.
    const int step = uniform ? std::max(1, range.last - range.first) : 1;
    for (int i = range.first; i < range.last; i += step) {
      const double n = step;
      Kind& kd = kinds[static_cast<std::size_t>(model.layer_kind(i))];
      if (!kd.ready) {
        for (const auto& op : workload::layer_operators(model, i, ctx))
          (op.expert ? kd.expert : kd.dense) += op.weights;
        const auto act = workload::layer_activation_bytes(model, i, ctx, ao);
        kd.act = l.recompute == Recompute::None        ? act.none
                 : l.recompute == Recompute::Selective ? (o.selective_op_sac ? act.op_sac : act.selective)
                                                       : act.full;
        if (l.recompute == Recompute::Selective && l.recompute_modules != 0) kd.act = modules_kept(act, l);
        if (l.moe_capacity_factor > 0.0 && model.is_moe() && l.recompute != Recompute::Full &&
            !l.recomputes(RecomputeModule::Moe)) {
          // Padding to capacity: the routed copies and the experts' activations (the MoE block
          // without its shared experts) are held for capacity_factor x the routed tokens.
          const double routed = std::max(0.0, act.modules.moe - act.modules.shared_experts);
          kd.act += (l.moe_capacity_factor - 1.0) * routed;
          kd.none = act.none + (l.moe_capacity_factor - 1.0) * routed;
        } else {
          kd.none = act.none;
        }
        kd.ready = true;
      }
      s.dense += n * kd.dense;
      s.expert += n * kd.expert;
      s.largest_layer = std::max(s.largest_layer, kd.dense + kd.expert);
      s.act_per_mb += n * kd.act;
      s.layers += step;
      s.full_layer = std::max(s.full_layer, kd.none);
    }
  }
  if (stage == 0) {
    for (const auto& op : workload::embedding_operators(model, ctx)) s.embedding += op.weights;
    s.dense += s.embedding;
  }
  if (stage == pp - 1) {
    for (const auto& op : workload::head_operators(model, ctx)) s.dense += op.weights;
    s.dense += tied_embedding_copy(model, l);  // the output layer's copy of tied embeddings
    if (o.mtp_layers > 0 && model.num_layers > 0) {
      // Each MTP module: one more block of the last layer's kind (its parameters and activations)
      // and its own projection and norms (mtp_operators; the output head is shared).
      const int last = model.num_layers - 1;
      const Kind& kd = kinds[static_cast<std::size_t>(model.layer_kind(last))];
      double dense = 0.0, expert = 0.0;
      for (const auto& op : workload::layer_operators(model, last, ctx)) (op.expert ? expert : dense) += op.weights;
      for (const auto& op : workload::mtp_operators(model, ctx)) dense += op.weights;
      const auto act = workload::layer_activation_bytes(model, last, ctx, ao);
      const double kept = kd.ready ? kd.act : act.none;
      s.dense += o.mtp_layers * dense;
      s.expert += o.mtp_layers * expert;
      s.act_per_mb += o.mtp_layers * kept;
      s.mtp_layers = o.mtp_layers;
    }
  }
  return s;
}

}  // namespace

double nccl_buffer_bytes(const Layout& l, bool moe, const NcclBuffers& n) {
  const int dp_cp = std::max(1, l.dp) * std::max(1, l.cp);
  int rings = 0;
  if (l.tp > 1) ++rings;
  if (dp_cp > 1) ++rings;
  if (moe && l.ep > 1 && l.expert_dp() > 1) ++rings;  // expert gradients reduce over expert-DP
  if (l.gpus() > 1) ++rings;                          // the world group
  int peers = 0;
  if (l.pp > 1) peers += 2;
  if (l.cp > 1) peers += 2;
  if (moe && l.ep > 1) peers += l.ep - 1;
  return rings * n.ring_channels * (n.simple + n.ll128 + n.ll) + peers * n.p2p_channels_per_peer * 2.0 * n.simple;
}

MemoryOptions stack_memory_options(std::string_view name) {
  MemoryOptions o;
  const std::optional<Stack> stack = kStackWords.parse(name);
  if (!stack) return o;  // a calibration's own stack: the defaults
  if (*stack == Stack::Megatron) {
    // NeMo / Megatron-Bridge performance recipes set grad_reduce_in_fp32 = False: a bf16 gradient
    // buffer, and the distributed optimizer keeps fp32 master weights, Adam m, v and an fp32 copy
    // of its gradient shard: 4 + 16/d bytes per parameter (Megatron-LM distrib_optimizer.md), the
    // last 4/d only during the optimizer step (StateBytes::step_grad).
    o.state = StateBytes{2.0, 2.0, 12.0, 1.0, 4.0};
    o.fp8_activations = true;
    o.fused_cross_entropy = true;  // cross_entropy_loss_fusion in the performance recipes
  } else if (*stack == Stack::MegatronLegacy) {
    // Megatron-LM 2021-2022: fp16 weights, fp32 main gradients, fp32 master weights and Adam m, v
    // (Korthikanti et al. 2022: 18 bytes per parameter), unsharded; the unfused attention core
    // keeps the s x s scores, probabilities and dropout mask.
    o.state = StateBytes{2.0, 4.0, 12.0, 0.0};
    o.flash_attention = false;
  } else {
    // FSDP2 / FSDP mixed precision: sharded fp32 parameters, fp32 gradients and Adam m, v;
    // the bf16 copies exist only for the gathered layers (buffers).
    o.state = StateBytes{4.0, 4.0, 8.0, 0.0};
    // torchtitan shards over its dp_shard x cp mesh and its "selective" is torch per-op SAC.
    o.optimizer_over_cp = *stack == Stack::TorchTitan;
    o.selective_op_sac = *stack == Stack::TorchTitan;
    o.gathered_tp_inputs = *stack == Stack::TorchTitan;
    if (*stack == Stack::LlmFoundry) {
      // MPT's default loss_fn is 'fused_crossentropy' (llmfoundry/models/mpt/configuration_mpt.py):
      // flash-attn's xentropy kernel takes the 16-bit logits, keeps only the per-row log-sum-exp
      // and returns a 16-bit gradient (no fp32 copy of the logits).
      o.fused_cross_entropy = true;
      o.fused_loss_in_place = false;
    }
  }
  return o;
}

void apply_compiled_loss(MemoryOptions& o) {
  if (o.fused_cross_entropy) return;
  o.fused_cross_entropy = true;
  o.fused_loss_in_place = false;
}

MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& l, std::int64_t seq_len,
                                const StateBytes& state) {
  MemoryOptions o;
  o.state = state;
  return estimate_memory(model, l, seq_len, o);
}

MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& l, std::int64_t seq_len,
                                const MemoryOptions& o) {
  const workload::ShardContext ctx{l.micro_batch, seq_len, l.tp, l.cp, l.ep, l.etp, l.sequence_parallel};
  StateBytes state = o.state;
  if (l.fp8_param_storage) {
    // FP8 parameters: 1 byte each and no separate FP8 cache.
    state.weights = 1.0;
    state.fp8_extra = 0.0;
  }
  if (l.bf16_optimizer_states) {
    // 16-bit master weights and Adam m, v; the step reads the 16-bit gradients directly.
    state.optimizer = 6.0;
    state.step_grad = 0.0;
  }
  const int pp = std::max(1, l.pp);
  const double dp = std::max(1, l.dp);
  const double edp = std::max(1, l.expert_dp());
  const bool zero3 = l.sharding == Sharding::Zero3;
  // States shard over the gradient-reduction group: dp x cp in Megatron-Core (distributed
  // optimizer, FSDP) and torchtitan (FSDP over the dp_shard x cp mesh).
  const double cp_group = o.optimizer_over_cp ? std::max(1, l.cp) : 1.0;
  const double shard = (zero3 ? std::max(1, l.fsdp_shard_size()) : dp) * cp_group;
  const double eshard = zero3 ? std::max(1.0, edp * l.fsdp_shard_size() / dp) : edp;
  const double opt_shard = shard;
  const bool fp8 = l.precision == core::Precision::FP8 || l.precision == core::Precision::FP4;
  const double mbs_total = static_cast<double>(std::max<std::int64_t>(1, l.micro_batches()));
  const double tokens = static_cast<double>(l.micro_batch) * static_cast<double>(seq_len) / std::max(1, l.cp);

  MemoryBreakdown best;
  const int last = pp - 1;
  Kinds kinds{};
  // The first stage holds the most micro-batches in flight and the embedding, the last the logits:
  // one of the two peaks on an even split. Explicit first/last stage counts, embedding or loss
  // slots and the other splits can leave a middle stage the most layers, so every stage is then
  // evaluated.
  const bool every_stage = l.first_stage_layers > 0 || l.last_stage_layers > 0 || l.balanced_head_layers > 0.0 ||
                           l.embedding_slot || l.loss_slot || l.greedy_split || o.stages_read > 0;
  const int read_last = o.stages_read > 0 ? std::min(o.stages_read, pp) - 1 : last;
  for (int stage = 0; stage <= read_last; stage = (every_stage || stage == last) ? stage + 1 : last) {
    const StageLoad s = stage_load(model, l, stage, ctx, o, kinds);
    MemoryBreakdown m;
    m.peak_stage = stage;
    m.params_on_gpu = s.dense + s.expert;
    const auto sharded = [&](double per_param, bool shard_it, double dense_div, double expert_div) {
      return shard_it ? s.dense * per_param / dense_div + s.expert * per_param / expert_div
                      : (s.dense + s.expert) * per_param;
    };
    const double wbytes = state.weights + (fp8 ? state.fp8_extra : 0.0);
    // FSDP keeps no persistent FP8 copy: weights are cast after each all-gather.
    double weights = zero3 ? sharded(state.weights, true, shard, eshard) : sharded(wbytes, false, 1, 1);
    double grads = sharded(state.gradients, l.sharding == Sharding::Zero2 || zero3, shard, eshard);
    double optim = sharded(state.optimizer, l.sharding != Sharding::None, opt_shard, eshard);
    double step_grad = sharded(state.step_grad, l.sharding != Sharding::None, opt_shard, eshard);
    double host = 0.0;
    if (const double f = std::clamp(l.optimizer_offload_fraction, 0.0, 1.0); f > 0.0 && !o.offload_optimizer) {
      // That share of the master weights and moments (and of the step's fp32 gradient copy) lives
      // in host memory; the CPU steps it.
      host += f * (optim + step_grad);
      optim *= 1.0 - f;
      step_grad *= 1.0 - f;
    }
    if (o.offload_optimizer) {
      host += optim + step_grad;
      optim = 0.0;
      step_grad = 0.0;
    }
    if (o.offload_params) {
      host += weights + grads;
      weights = zero3 ? 0.0 : weights;
      grads = 0.0;
    }
    m.weights = core::Bytes(weights);
    m.gradients = core::Bytes(grads);
    m.optimizer = core::Bytes(optim);
    m.host = core::Bytes(host);

    // Micro-batches whose activations this stage holds at the peak of the schedule: 1F1B warms
    // up pp - s forwards on stage s; interleaving holds pp + (pp-1)/vp stage-equivalents on stage 0.
    double in_flight = 1.0;
    if (pp > 1) {
      in_flight = l.vp > 1 ? pp + (pp - 1.0) / l.vp - stage * (1.0 + 1.0 / l.vp) : static_cast<double>(pp - stage);
      in_flight = std::clamp(in_flight, 1.0, mbs_total);
    }
    m.in_flight = in_flight;
    double act_per_mb = s.act_per_mb;
    if (l.offload_layers > 0 && s.layers > 1) {
      // Offloaded layers leave one layer's activations in transit (the copy being made or
      // fetched; Megatron-Core's double-buffered offload handler) on the GPU.
      const int moved = std::min(l.offload_layers, s.layers - 1);
      const double per_layer = s.act_per_mb / s.layers;
      m.offload_bytes_per_mb = per_layer * moved;
      m.offload_share = static_cast<double>(moved) / s.layers;
      act_per_mb = s.act_per_mb - m.offload_bytes_per_mb + per_layer;
      m.host += core::Bytes(m.offload_bytes_per_mb * in_flight);
    }
    double activations = act_per_mb * in_flight;
    if (o.keeps_pipeline_outputs && pp > 1 && stage < last) {
      // One 16-bit b x s x h stage output (sequence-split with SP) per in-flight micro-batch.
      activations +=
          in_flight * tokens * static_cast<double>(model.hidden) * 2.0 / (l.sequence_parallel ? std::max(1, l.tp) : 1);
    }
    // The layer being recomputed (full) needs its full activations during its backward.
    if (l.recompute == Recompute::Full) activations += s.full_layer;
    m.activations = core::Bytes(activations);

    double buffers = 0.0;
    if (l.cuda_graphs && s.layers > 0) {
      // One graph per layer per micro-batch of the step, each with static buffers for its input
      // and output hidden states and their gradients (16-bit, sequence-split with SP).
      const double hidden_bytes =
          tokens * static_cast<double>(model.hidden) * 2.0 / (l.sequence_parallel ? std::max(1, l.tp) : 1);
      const double graphs = static_cast<double>(s.layers + s.mtp_layers) * mbs_total;
      m.cuda_graphs = core::Bytes(graphs * 4.0 * hidden_bytes);
      buffers += m.cuda_graphs.value();
    }
    if (zero3 && pp > 1) {
      // FSDP under pipeline parallelism keeps the stage's parameters gathered between
      // micro-batches (reshard_after_forward off) and accumulates unsharded gradients until the
      // last micro-batch (torch.distributed.pipelining, torchtitan) in the reduce dtype: FSDP2's
      // FSDPParam.to_accumulated_grad_if_needed upcasts them to reduce_dtype while gradient sync is
      // off, fp32 under torchtitan's default mixed_precision_reduce; 16-bit when reduced in 16 bits.
      buffers += (s.dense + s.expert) * (2.0 + (l.bf16_grad_reduce ? 2.0 : 4.0));
    } else if (zero3) {
      // Gathered 16-bit layers (this one and the prefetched next) and one unsharded gradient.
      buffers += 3.0 * s.largest_layer * 2.0;
    }
    double loss_buffers = 0.0;  // the last stage's head and loss tensors, freed early in its backward
    if (stage == last) {
      // The final norm's input and its output, the LM head's GEMM input, kept for their backward
      // (16-bit, sequence-split with SP; the head's input whole when TP keeps gathered inputs).
      const double sp_div = l.sequence_parallel ? std::max(1, l.tp) : 1;
      loss_buffers += tokens * static_cast<double>(model.hidden) * 2.0 *
                      (1.0 / sp_div + (o.gathered_tp_inputs ? 1.0 : 1.0 / sp_div));
      // Logits in 16-bit, their fp32 copy for the loss and its gradient on the last stage; a fused
      // cross-entropy keeps only the 16-bit logits and overwrites them with their gradient.
      // Each MTP module computes its own logits through the shared head.
      // Chunked (RecipeSwitches::loss_chunks): one chunk's logits at a time, and the hidden states'
      // gradient assembled from the chunks' in an fp32 [tokens, h] buffer (torchtitan
      // ChunkedLossWrapper's GradAccumulator, dtype=torch.float32).
      const double chunks = std::max(1, l.recipe.loss_chunks);
      loss_buffers += (1.0 + s.mtp_layers) * tokens * static_cast<double>(model.vocab) / std::max(1, l.tp) *
                      (o.fused_cross_entropy ? (o.fused_loss_in_place ? 2.0 : 4.0) : 2.0 + 4.0 + 4.0) / chunks;
      if (chunks > 1.0) loss_buffers += tokens * static_cast<double>(model.hidden) * 4.0;
      buffers += loss_buffers;
    }
    if (model.is_moe()) {
      // Token dispatch buffers of the MoE layer in flight: the top_k copies of this rank's tokens
      // (sequence-split over TP) in 16 bits, once as the permuted/all-to-all output and once as
      // the combine's input (Megatron-Core's token dispatcher; torchtitan's permuted and
      // unpermuted copies). Dropless routing: no capacity-factor padding.
      // Padded to capacity, each expert's slots hold capacity_factor x its share of the routed tokens.
      const double sp_tokens = tokens / (l.sequence_parallel ? std::max(1, l.tp) : 1);
      const double capacity = l.moe_capacity_factor > 0.0 ? l.moe_capacity_factor : 1.0;
      buffers += 2.0 * capacity * model.moe.top_k * sp_tokens * static_cast<double>(model.hidden) * 2.0;
    }
    buffers += o.grad_bucket_bytes;
    m.buffers = core::Bytes(buffers);
    // The input embedding's backward, the last of each micro-batch's backward on the first stage,
    // allocates the table's gradient anew before it is added into the accumulated one (see
    // MemoryOptions::embedding_grad_bytes). That micro-batch's activations are gone by then, and on
    // a single stage the head's and the loss's tensors as well; the other micro-batches in flight
    // are not. FSDP's unsharded gradient is counted with its gathered layers; a frozen embedding
    // (LoRA: no gradients) has none, nor do gradients allocated by backward (lazy_gradients, below:
    // AccumulateGrad keeps the new tensor).
    const bool lazy = o.lazy_gradients && mbs_total <= 1.0 && grads > 0.0;
    const bool accumulates = mbs_total > 1.0 || state.gradients > state.weights;
    if (stage == 0 && !zero3 && !lazy && accumulates && grads > 0.0 && o.embedding_grad_bytes > 0.0) {
      const double held =
          (in_flight - 1.0) / in_flight * (activations - (l.recompute == Recompute::Full ? s.full_layer : 0.0));
      const double fresh = o.embedding_grad_bytes * s.embedding;
      if (held + fresh > activations + loss_buffers) {
        m.embedding_grad = core::Bytes(fresh);
        m.gradients = core::Bytes(grads + fresh);
        activations = held;
        m.activations = core::Bytes(held);
        m.in_flight = in_flight - 1.0;
        buffers -= loss_buffers;
        m.buffers = core::Bytes(buffers);
      }
    }
    // The optimizer step runs after the last backward has freed the activations: its transient
    // fp32 gradient copy competes with them for the peak of live tensors. The caching allocator
    // keeps the segment it lived in (max_memory_reserved, nvidia-smi) until an allocation fails.
    m.step_grad = core::Bytes(step_grad);
    // A post-backward 16-bit copy of the gradients for their all-reduce (StateBytes::reduce_copy)
    // lives at the same point, before the step, and is freed before the step's copy is made.
    m.reduce_copy = core::Bytes(state.reduce_copy * (s.dense + s.expert));
    const double transient = std::max(step_grad, m.reduce_copy.value());
    // The gradient buckets are done by then too; only CUDA graphs' static buffers persist.
    const double released = activations + m.embedding_grad.value() + buffers - m.cuda_graphs.value();
    // Gradients allocated by backward with one micro-batch per step (MemoryOptions::lazy_gradients)
    // do not exist yet at the backward's peak, except the LM head's, which its backward (the first)
    // creates while the logits' gradient and every activation are live: the rest compete with what
    // the backward releases, as the step's transient does.
    const double head_grad =
        lazy && stage == last
            ? std::min(grads, state.gradients * static_cast<double>(model.vocab) * static_cast<double>(model.hidden) /
                                  std::max(1, l.tp) / (zero3 ? shard : 1.0))
            : 0.0;
    double cached_step = transient;
    m.backward_activations = core::Bytes(activations);
    if ((lazy ? grads - head_grad : 0.0) + transient > released) {
      m.embedding_grad = core::Bytes(0.0);
      m.gradients = core::Bytes(grads);
      if (m.reduce_copy.value() > step_grad)
        m.gradients = core::Bytes(grads + m.reduce_copy.value());
      else
        m.optimizer = core::Bytes(optim + step_grad);
      m.activations = core::Bytes(0.0);
      m.buffers = m.cuda_graphs;
      m.optimizer_step_peak = true;
      cached_step = released;
    } else if (lazy) {
      m.gradients = core::Bytes(head_grad);
      m.lazy_gradients_pending = true;
    }
    m.fragmentation = core::Bytes(o.fragmentation * m.allocated().value());
    m.cache = core::Bytes(o.cache_reserve * (m.allocated().value() + cached_step) + cached_step);
    m.nccl = core::Bytes(nccl_buffer_bytes(l, model.is_moe(), o.nccl));
    m.context = core::Bytes(o.context_gib * kGiB) + m.nccl;
    m.overhead = m.fragmentation + m.context;
    if (stage == 0 || m.total() > best.total()) best = m;
  }
  return best;
}

}  // namespace fmsim::parallelism
