// Memory per GPU: weights, gradients, optimizer states, activations and buffers, by layout.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/units.hpp"
#include "parallelism/layout.hpp"
#include "parallelism/stack.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::parallelism {

/// Bytes per parameter of each training state. Defaults: mixed-precision Adam as Megatron-Core's
/// distributed optimizer with grad_reduce_in_fp32 (Megatron-LM docs/distrib_optimizer.md: bf16
/// params with fp32 grads = 6 + 12/d bytes per parameter).
struct StateBytes {
  double weights = 2.0;     ///< working weights (2: 16-bit; 4: FSDP2 keeps sharded fp32 parameters)
  double gradients = 4.0;   ///< gradient buffer: 4 fp32 main grads (grad_reduce_in_fp32), 2 bf16/fp16
  double optimizer = 12.0;  ///< fp32 master weights + Adam m and v (+ 4 for the optimizer's fp32 copy of 16-bit grads)
  double fp8_extra = 1.0;   ///< FP8 training: cached FP8 copies of the weights (Transformer Engine)
  /// An fp32 copy of the 16-bit gradient shard that exists only during the optimizer step, sharded
  /// like the optimizer states: Megatron-Core's distributed optimizer with 16-bit main grads
  /// (_copy_model_grads_to_main_grads: shard_model_grad.float(), dropped by the next zero_grad),
  /// DeepSpeed ZeRO-1/2 (stage_1_and_2.py: the fp32 single_grad_partition built in step() and
  /// freed after it). Activations are gone by then, so it competes with them, not adds to them.
  double step_grad = 0.0;
  /// A 16-bit copy of the unsharded gradients made to all-reduce them after the last backward, freed
  /// once reduced: DeepSpeed's pipeline engine with bf16 (_bf16_reduce_grads -> allreduce_bucket
  /// casts BF16_Optimizer's flat fp32 gradient groups to communication_data_type = bf16, until
  /// DeepSpeed PR #2970, 2023): 2 bytes per parameter. It lives while activations are freed, so it
  /// competes with them for the peak, as step_grad does.
  double reduce_copy = 0.0;
};

/// NCCL's device buffers, allocated by NCCL itself (outside the caching allocator) for every
/// connection of a communicator: per channel and connection one buffer per protocol, of the
/// defaults in NCCL src/init.cc (DEFAULT_BUFFSIZE = NCCL_BUFFSIZE 4 MiB for Simple;
/// DEFAULT_LL128_BUFFSIZE = 120 x 640 x 8 steps x 8 B = 4,915,200 B; DEFAULT_LL_BUFFSIZE =
/// 8 x 512 x 8 steps x 16 B = 512 KiB). A collective ring holds one connection's buffers per channel
/// on each rank (it receives from one neighbour); point-to-point peers (pipeline send/recv, context
/// ring, expert all-to-all) use the Simple protocol on p2p channels, a send and a receive buffer each.
struct NcclBuffers {
  double simple = 4194304.0;      ///< NCCL_BUFFSIZE (bytes)
  double ll128 = 4915200.0;       ///< NCCL_LL128_BUFFSIZE (bytes)
  double ll = 524288.0;           ///< NCCL_LL_BUFFSIZE (bytes)
  int ring_channels = 16;         ///< channels of a collective ring (NCCL on 8-GPU NVLink nodes with 8 NICs: 16)
  int p2p_channels_per_peer = 2;  ///< NCCL_NCHANNELS_PER_NET_PEER default
};

/// The communicators a layout's ranks use and NCCL's buffers for them, per GPU: one ring each for
/// the tensor-parallel, the gradient-reduction (dp x cp) and the expert-data-parallel group and
/// the world group (barriers, the loss all-reduce), and point-to-point peers for pipeline stages
/// (2), the context-parallel ring (2) and the expert all-to-all (ep - 1). Groups of one rank have
/// no communicator. Bytes = rings x ring_channels x (simple + ll128 + ll) + peers x
/// p2p_channels_per_peer x 2 x simple.
double nccl_buffer_bytes(const Layout& layout, bool moe, const NcclBuffers& nccl = {});

/// Framework conventions beyond the per-parameter state bytes.
struct MemoryOptions {
  StateBytes state;
  bool flash_attention = true;   ///< fused attention: no s^2 score/softmax/dropout tensors kept
  bool fp8_activations = false;  ///< FP8 GEMM inputs saved for backward in 8 bits (Transformer Engine)
  /// DTensor tensor parallelism (torchtitan): column-parallel GEMMs keep their all-gathered inputs
  /// (workload::ActivationOptions::gathered_tp_inputs).
  bool gathered_tp_inputs = false;
  bool optimizer_over_cp = true;  ///< distributed optimizer shards over dp x cp (Megatron-Core); false: dp only
  bool selective_op_sac =
      false;  ///< "selective" is torch per-op checkpointing (torchtitan), not Megatron's attention core
  /// Caching-allocator blocks that cannot be released at the peak (fragmentation), as a fraction
  /// of the live tensors: what an out-of-memory verdict adds to the allocated peak.
  double fragmentation = 0.05;
  /// Cached blocks held beyond that when memory is plentiful: torch's max_memory_reserved runs
  /// this far above max_memory_allocated; the allocator releases them and retries before an OOM.
  double cache_reserve = 0.10;
  /// Loss on the 16-bit logits with their gradient written in place (Transformer Engine's
  /// parallel_cross_entropy, Megatron-Core's cross_entropy_loss_fusion, on in the NeMo /
  /// Megatron-Bridge performance recipes): 2 bytes per logit instead of 10 (16-bit logits, their
  /// fp32 copy for the softmax and its fp32 gradient).
  bool fused_cross_entropy = false;
  /// The fused loss writes the logits' gradient over the logits (TE parallel_cross_entropy); false:
  /// into a new 16-bit tensor (flash-attn's xentropy kernel as llm-foundry's FusedCrossEntropyLoss
  /// calls it, inplace_backward=False): 4 bytes per logit.
  bool fused_loss_in_place = true;
  /// The pipeline engine keeps each in-flight micro-batch's stage output until its backward
  /// (DeepSpeed's PipelineEngine pipe_buffers["outputs"]); Megatron-Core frees the output's data
  /// once sent (deallocate_pipeline_outputs), keeping only its autograd node.
  bool keeps_pipeline_outputs = false;
  /// The gradients are tensors backward allocates, cleared with zero_grad(set_to_none=True), with no
  /// persistent gradient buffer (plain PyTorch loops: torchtune's recipes). With one micro-batch per
  /// step none exists at the start of backward, when the activations and the loss's buffers peak,
  /// but the LM head's, which the head's backward creates first, and all exist at its end, when
  /// those are freed: above the weights and optimizer states the peak is max(activations +
  /// buffers + the head's gradient, gradients + the step's transient), not their sum. FSDP's
  /// sharded gradients (torchtune's distributed recipe) are allocated the same way.
  bool lazy_gradients = false;
  /// Bytes per input-embedding parameter that the embedding's backward allocates on the first stage
  /// before adding them into the gradient already accumulated: 2, the 16-bit gradient of the table
  /// (torch AccumulateGrad adds a new gradient into an existing .grad in place; Megatron's main_grad
  /// hook adds .grad into main_grad and frees it); 4, its fp32 copy (DeepSpeed's BF16_Optimizer
  /// update_hp_grads: hp_grad.add_(lp.grad.to(fp32)) after each backward). 0: none.
  double embedding_grad_bytes = 2.0;
  /// CUDA context (its loaded kernels) and library workspaces outside the allocator; NCCL's
  /// buffers are counted apart (`nccl`).
  double context_gib = 0.75;
  NcclBuffers nccl;  ///< NCCL buffers per communicator (outside the allocator)
  /// Gradient buckets of the data-parallel reduction held at the peak (Megatron-Core DDP's
  /// buckets being reduced; DeepSpeed's reduce_bucket_size, 5e8 elements by default).
  double grad_bucket_bytes = 256.0 * 1024 * 1024;
  /// Multi-token-prediction modules trained on the last stage (DeepSeek-V3 mtp_num_layers; the job's
  /// train_mtp): each adds one transformer layer, its input projection and norms, and one more
  /// logits tensor through the shared output head.
  int mtp_layers = 0;
  bool offload_optimizer = false;  ///< optimizer states and master weights in host memory (CPU Adam)
  bool offload_params = false;     ///< sharded parameters and gradients in host memory as well (FSDP CPU offload)
  /// The pipeline stages whose GPUs are read: 0 = every stage (the job's peak, the verdict); n > 0 =
  /// stages 0..n-1 only, the GPUs of the first node when the ranks are laid out pipeline-outermost
  /// (Megatron, DeepSpeed), as a snapshot of that node's GPUs reports them.
  int stages_read = 0;
};

/// The memory conventions of a software stack ("megatron", "torchtitan", "llm-foundry", ...):
/// megatron = NeMo/Megatron-Bridge performance recipes (bf16 gradient buffer, grad_reduce_in_fp32
/// False; Transformer Engine FP8 weight caches and FP8-saved GEMM inputs); torchtitan = FSDP2 with
/// fp32 sharded parameters and gradients; llm-foundry = FSDP FULL_SHARD mixed precision (same states).
/// A name that is not a known stack (parallelism::kStackWords) gets the defaults.
MemoryOptions stack_memory_options(std::string_view stack);

/// A loss compiled with the model (RecipeSwitches::compiled_loss; torchtitan with compile from
/// 2025-04-02, bbb1b616e, build_cross_entropy_loss: torch.compile(cross_entropy(pred.float(),
/// labels))): Inductor fuses the fp32 upcast into the log-softmax and saves the 16-bit logits and a
/// per-row log-sum-exp for the backward, which writes a 16-bit gradient: 4 B per logit, as
/// llm-foundry's fused loss. A stack whose loss is already fused keeps its own.
void apply_compiled_loss(MemoryOptions& options);

/// Memory on the most loaded GPU.
struct MemoryBreakdown {
  core::Bytes weights{};
  core::Bytes gradients{};
  core::Bytes optimizer{};
  core::Bytes activations{};
  core::Bytes buffers{};        ///< communication buckets, FSDP gathered layers, logits, workspace
  core::Bytes fragmentation{};  ///< caching-allocator blocks that cannot be released at the peak
  core::Bytes cache{};          ///< releasable cached blocks (in max_memory_reserved, not in the verdict)
  core::Bytes context{};        ///< CUDA context, workspaces and NCCL buffers (outside the allocator)
  core::Bytes nccl{};           ///< of which NCCL's buffers (nccl_buffer_bytes)
  core::Bytes cuda_graphs{};    ///< CUDA-graph static input/output buffers (in `buffers`)
  core::Bytes overhead{};       ///< context + fragmentation
  core::Bytes host{};           ///< states and activations offloaded to host memory
  /// Activation offloading: bytes each offloaded micro-batch moves to the host in its forward (and
  /// back in its backward), and the share of the stage's layers (so of its compute) they belong to.
  double offload_bytes_per_mb = 0.0;
  double offload_share = 0.0;
  double params_on_gpu = 0.0;        ///< parameters held (before sharding by DP)
  int peak_stage = 0;                ///< pipeline stage with the peak (0 = first)
  bool optimizer_step_peak = false;  ///< the peak is the optimizer step (its transient copies), not the backward
  /// The peak is the start of backward, before it allocates the gradients (MemoryOptions::lazy_gradients):
  /// `gradients` holds only the LM head's there (on the last stage).
  bool lazy_gradients_pending = false;
  /// The optimizer step's fp32 gradient copy (StateBytes::step_grad): alive from the step to the
  /// next zero_grad (Megatron-Core clears it before the next forward), so part of the trainer state
  /// between steps; in `optimizer` when the step is the peak.
  core::Bytes step_grad{};
  /// The post-backward 16-bit gradient copy (StateBytes::reduce_copy); in `gradients` when it is
  /// the peak.
  core::Bytes reduce_copy{};
  /// The input embedding's fresh gradient (MemoryOptions::embedding_grad_bytes); in `gradients`
  /// when its backward is the peak (the other in-flight micro-batches' activations held, `in_flight`
  /// of them).
  core::Bytes embedding_grad{};
  double in_flight = 1.0;  ///< micro-batches whose activations that stage holds at its peak
  /// Activations at the backward's peak, also when the optimizer step is the stage's peak (where
  /// `activations` is 0: the last backward has freed them): what a larger micro-batch grows.
  core::Bytes backward_activations{};
  /// Live tensors at the peak (torch max_memory_allocated; max_active is the same quantity).
  [[nodiscard]] core::Bytes allocated() const { return weights + gradients + optimizer + activations + buffers; }
  /// The caching allocator's peak (torch max_memory_reserved).
  [[nodiscard]] core::Bytes reserved() const { return allocated() + fragmentation + cache; }
  /// What nvidia-smi shows: reserved + context.
  [[nodiscard]] core::Bytes device() const { return reserved() + context; }
  /// What must fit in usable HBM: allocated + fragmentation + context (no releasable cache).
  [[nodiscard]] core::Bytes total() const { return allocated() + fragmentation + context; }
};

/// Estimates memory for one GPU, on the first and the last pipeline stage (the peak of the two; every
/// stage with explicit first/last stage layer counts; the first options.stages_read stages only when set).
/// Activations per layer kind by recompute policy (Korthikanti et al. 2022, Table 2) times the
/// micro-batches in flight on that stage (1F1B: pp - s on stage s; interleaved: pp + (pp-1)/vp on
/// stage 0), capped by the micro-batch count; plus one layer's full activations during its backward
/// under full recompute. States by sharding: the distributed optimizer (ZeRO-1) shards optimizer
/// states over dp (x cp), ZeRO-2 also gradients, ZeRO-3/FSDP also weights (plus two gathered
/// layers and one unsharded gradient). Expert states shard over expert-DP.
MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& layout, std::int64_t seq_len,
                                const MemoryOptions& options);
MemoryBreakdown estimate_memory(const workload::ModelSpec& model, const Layout& layout, std::int64_t seq_len,
                                const StateBytes& state = {});

}  // namespace fmsim::parallelism
