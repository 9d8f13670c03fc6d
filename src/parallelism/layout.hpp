// Parallel layouts (DP, ZeRO/FSDP, TP+SP, PP with virtual stages, CP, EP with expert TP) and
// their validity against a model and a GPU count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/precision.hpp"
#include "core/vocabulary.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::parallelism {

/// How weights, gradients and optimizer states are sharded across data-parallel ranks.
enum class Sharding {
  None,                  ///< DDP: everything replicated
  DistributedOptimizer,  ///< ZeRO-1 / Megatron distributed optimizer: optimizer states sharded
  Zero2,                 ///< + gradients sharded (FSDP SHARD_GRAD_OP)
  Zero3,                 ///< + weights sharded, gathered per layer (FSDP FULL_SHARD, FSDP2)
};

/// Activation recomputation policy.
enum class Recompute {
  None,       ///< keep every activation
  Selective,  ///< recompute cheap, memory-heavy ops (attention core, activations)
  Full,       ///< keep only each layer's input; recompute the whole forward in backward
};

/// Pipeline schedule.
enum class PipelineSchedule { OneFOneB, Interleaved };

/// The words of --sharding (train, plan, run, checkpoint, goodput), job files and CSVs.
inline constexpr core::Word<Sharding> kShardingWordList[] = {
    {Sharding::None, "ddp", "none, zero0"},
    {Sharding::DistributedOptimizer, "zero1", "distopt, distributed-optimizer, optimizer"},
    {Sharding::Zero2, "zero2", "shard-grad-op"},
    {Sharding::Zero3, "fsdp", "zero3, full-shard, full"},
};
inline constexpr core::Vocabulary<Sharding> kShardingWords{"sharding", kShardingWordList};

/// The words of --recompute, job files and CSVs.
inline constexpr core::Word<Recompute> kRecomputeWordList[] = {
    {Recompute::None, "none", "no, off"},
    {Recompute::Selective, "selective", "sel"},
    {Recompute::Full, "full"},
};
inline constexpr core::Vocabulary<Recompute> kRecomputeWords{"recompute policy", kRecomputeWordList};

/// Megatron-Core's recompute_modules: the submodules selective recompute repeats in backward.
enum class RecomputeModule : std::uint8_t { CoreAttn, MoeAct, Layernorm, MlaUpProj, Mlp, Moe, SharedExperts };

/// The words of --recompute-modules and `recompute_modules:` (Megatron-Core's names).
inline constexpr core::Word<RecomputeModule> kRecomputeModuleWordList[] = {
    {RecomputeModule::CoreAttn, "core_attn"},
    {RecomputeModule::MoeAct, "moe_act"},
    {RecomputeModule::Layernorm, "layernorm"},
    {RecomputeModule::MlaUpProj, "mla_up_proj"},
    {RecomputeModule::Mlp, "mlp"},
    {RecomputeModule::Moe, "moe"},
    {RecomputeModule::SharedExperts, "shared_experts"},
};
inline constexpr core::Vocabulary<RecomputeModule> kRecomputeModuleWords{"recompute module", kRecomputeModuleWordList};
constexpr std::uint8_t module_bit(RecomputeModule m) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(m));
}

/// Canonical names: "ddp", "zero1", "zero2", "fsdp"; "none", "selective", "full".
constexpr std::string_view to_string(Sharding s) { return kShardingWords.name(s); }
constexpr std::string_view to_string(Recompute r) { return kRecomputeWords.name(r); }

/// How a pipeline's layers are split over its stages (`--pipeline-split`, job key
/// `parallelism.pipeline_split`): Megatron's even split (with the embedding/loss slots and
/// first/last stage counts), DeepSpeed's split by layer type (Layout::greedy_split) or nanotron's
/// compute-balanced split (Layout::balanced_head_layers).
enum class PipelineSplit { Even, DeepSpeed, Nanotron };

inline constexpr core::Word<PipelineSplit> kPipelineSplitWordList[] = {
    {PipelineSplit::Even, "even", "megatron"},
    {PipelineSplit::DeepSpeed, "deepspeed", "type:transformer"},
    {PipelineSplit::Nanotron, "nanotron", "compute"},
};
inline constexpr core::Vocabulary<PipelineSplit> kPipelineSplitWords{"pipeline split", kPipelineSplitWordList};

/// Megatron-Bridge's performance-recipe switches (scripts/performance/configs, WorkloadBaseConfig):
/// features its MoE recipes turn on by release and GPU, which `fmsim train` and `fmsim plan` take as
/// flags and job keys and validation/training.csv as recipe_settings.
struct RecipeSwitches {
  /// One CUDA graph over the forward and backward of every micro-batch of the step (Megatron-Core
  /// cuda_graph_impl "full_iteration", with paged stashing of the MoE token buffers): no host
  /// launches and no host synchronisation inside the step, so the per-layer host overheads go.
  bool full_iteration_graph = false;
  /// The MoE dispatch and combine all-to-alls of one micro-batch run while another micro-batch
  /// computes (Megatron-Core overlap_moe_expert_parallel_comm, Megatron-Bridge moe_a2a_overlap:
  /// the forward of one micro-batch and the backward of the next are merged layer by layer).
  bool overlap_ep_comm = false;
  /// Routed experts as one fused grouped MLP kernel (Megatron-Bridge cutedsl_fused_grouped_mlp):
  /// FC1, the gated activation, the FP8 quantisation of FC2's input and FC2 in one kernel, so the
  /// expert activation's HBM passes and the expert GEMMs' separate FP8 casts go.
  bool fused_grouped_mlp = false;
  /// Attention's matrix products in FP8 (Transformer Engine fp8_dot_product_attention, cuDNN FP8
  /// fused attention), at GpuCalibration::fp8_attention_factor of the FP8 peak's gain.
  bool fp8_attention = false;
  /// The loss compiled with the model (torchtitan compile.components ["model", "loss"], from
  /// 2025-04-02 whenever compile is on): Inductor fuses the fp32 upcast into the log-softmax and
  /// keeps the 16-bit logits and a 16-bit gradient, 4 B per logit instead of the eager loss's 10.
  /// A stack whose loss is already fused (Megatron with Transformer Engine, 2 B) keeps its own.
  bool compiled_loss = false;
  /// The LM head and loss computed in this many chunks of the tokens, each chunk's backward run
  /// before the next chunk's forward (torchtitan ChunkedLossWrapper, num_chunks 8 in its 2026
  /// Llama 3 and Qwen3 recipes): one chunk's logits live at a time. 1: the whole sequence at once.
  int loss_chunks = 1;
  friend bool operator==(const RecipeSwitches&, const RecipeSwitches&) = default;
};

/// One parallel layout. dp is derived: gpus / (tp * pp * cp). Megatron conventions: EP is carved
/// out of DP*CP (and TP when etp < tp), rank order TP innermost, then CP, DP, PP outermost.
struct Layout {
  int tp = 1;
  int pp = 1;
  int vp = 1;  ///< virtual stages (model chunks) per pipeline rank; 1 = plain 1F1B
  int cp = 1;
  int ep = 1;
  int etp = 1;  ///< expert tensor parallelism
  int dp = 1;   ///< derived by make_layout / validate
  /// Pipeline split as Megatron-Core's TransformerConfig: the embedding and the loss may each
  /// count as one layer slot (account_for_embedding_in_pipeline_split,
  /// account_for_loss_in_pipeline_split), or the first/last stage take a given number of layers
  /// (decoder_first_pipeline_num_layers, decoder_last_pipeline_num_layers; 0 = an even share).
  bool embedding_slot = false;
  bool loss_slot = false;
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  /// nanotron's compute-balanced split (models/base.py build_model): each pipeline block costs its
  /// compute (a layer 4 a d h + 3 f h, the LM head V h, the embedding and the norms 0), rank k
  /// takes blocks until their running total first exceeds (k + 1) / pp of the whole (the block that
  /// crosses stays), so the first ranks hold one layer more than an even share. The LM head's cost
  /// in layers, V / (4 a d + 3 f); 0 = the even split above. One chunk per stage (vp 1).
  double balanced_head_layers = 0.0;
  /// DeepSpeed's PipelineModule split by layer type (partition_method 'type:transformer', the
  /// Megatron-DeepSpeed default; 'type:transformer|embedding' with the embedding slots above):
  /// partition_balanced over unit weights finds the smallest bottleneck B = ceil(slots / pp) and
  /// fills the stages in order up to B slots each, so the last stage takes what is left (BigScience
  /// tr11 chronicles: "78/12=6.5 - so the last stage has 1 block, while the rest have 7"). One chunk
  /// per stage (vp 1); every stage needs a transformer layer (Megatron-DeepSpeed's GPTModelPipe).
  bool greedy_split = false;
  bool sequence_parallel = true;
  Sharding sharding = Sharding::DistributedOptimizer;
  int shard_group = 0;            ///< FSDP hybrid sharding: shard within groups of this many DP ranks (0 = all)
  int micro_batch = 1;            ///< sequences per micro-batch
  std::int64_t global_batch = 1;  ///< sequences per optimizer step
  core::Precision precision = core::Precision::BF16;
  core::Fp8Recipe fp8_recipe = core::Fp8Recipe::Tensorwise;  ///< scaling of FP8 GEMMs (ignored at other precisions)
  Recompute recompute = Recompute::Selective;
  /// Under Recompute::Selective, the module_bit()s of the submodules recomputed (Megatron-Core's
  /// recompute_modules); 0 = the default selective policy (the attention core).
  std::uint8_t recompute_modules = 0;
  /// Activation offloading (Megatron-Core cpu_offloading_num_layers, NeMo's
  /// activation_offload_layers): the activations of this many layers go to host memory after
  /// their forward and come back before their backward. Megatron-Core allows it with pp 1 only.
  int offload_layers = 0;
  /// Share (0 to 1) of the optimizer states, master weights included, kept in host memory and
  /// stepped by the CPU (Megatron-Core --optimizer-cpu-offload --optimizer-offload-fraction;
  /// DeepSpeed ZeRO-Offload: 1): each step the gradient shard goes to the host and the updated
  /// parameters come back over the host link.
  double optimizer_offload_fraction = 0.0;
  /// Weights held only in FP8 (NeMo fp8_params, Megatron-Core --fp8-param-gather: Transformer
  /// Engine Float8Tensor parameters): 1 byte per parameter instead of 16-bit weights plus an FP8
  /// cache; the optimizer's master copy keeps the precision.
  bool fp8_param_storage = false;
  /// Master weights and Adam moments in 16 bits (Apex DistributedFusedAdam dtype=bf16 as NeMo's SFT
  /// recipes set it; Megatron-Core --use-precision-aware-optimizer with bf16 main params and
  /// moments): 6 bytes per parameter instead of 12.
  bool bf16_optimizer_states = false;
  /// MoE token capacity factor with padding to capacity (Megatron-Core
  /// --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity): every expert receives
  /// capacity = factor x tokens x top_k / experts slots, so the dispatch buffers and the routed
  /// experts' activations scale by the factor. 0 = dropless (no padding).
  double moe_capacity_factor = 0.0;
  /// CUDA graphs over the transformer layers (Megatron-Core --enable-cuda-graph / --external-cuda-graph,
  /// Transformer Engine make_graphed_callables): each layer is captured once per micro-batch of the
  /// step, and each graph keeps static buffers for its input and output hidden states and, for the
  /// backward graph, their gradients.
  bool cuda_graphs = false;
  /// Megatron-Bridge's performance-recipe switches (full-iteration CUDA graph, MoE all-to-all
  /// overlap, fused grouped MLP, FP8 attention).
  RecipeSwitches recipe;
  // Overlaps (the usual framework defaults: on).
  bool overlap_dp_comm = true;    ///< gradient reduce-scatter overlaps backward; param all-gather overlaps forward
  bool overlap_tp_comm = false;   ///< TP communication overlapped with GEMMs (userbuffers / async TP)
  bool overlap_pp_comm = true;    ///< PP send/recv overlapped with compute
  bool fsdp_prefetch = true;      ///< FSDP all-gathers the next layer while computing this one
  bool bf16_grad_reduce = false;  ///< reduce gradients in 16-bit (FSDP "pure" mixed precision) instead of fp32

  [[nodiscard]] int model_parallel() const { return tp * pp * cp; }
  [[nodiscard]] int gpus() const { return tp * pp * cp * dp; }
  /// Micro-batches per optimizer step on each pipeline (gradient accumulation steps).
  [[nodiscard]] std::int64_t micro_batches() const {
    return global_batch / (static_cast<std::int64_t>(micro_batch) * dp);
  }
  /// Data-parallel ranks that each expert is replicated over.
  [[nodiscard]] int expert_dp() const { return (tp * cp * dp) / (ep * etp); }
  [[nodiscard]] int fsdp_shard_size() const { return shard_group > 0 && shard_group < dp ? shard_group : dp; }
  /// Whether selective recompute repeats module `m` (explicit recompute_modules only).
  [[nodiscard]] bool recomputes(RecomputeModule m) const {
    return recompute == Recompute::Selective && (recompute_modules & module_bit(m)) != 0;
  }
  [[nodiscard]] PipelineSchedule schedule() const {
    return vp > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
  }
};

/// Transformer layers [first, last) of one model chunk; first == last for a chunk that holds only
/// the embedding or the loss.
struct LayerRange {
  int first = 0;
  int last = 0;
  [[nodiscard]] int count() const { return last - first; }
  friend bool operator==(const LayerRange&, const LayerRange&) = default;
};

/// The layers of virtual chunk `chunk` on pipeline stage `stage`. Chunks run in the order
/// k = chunk * pp + stage (Megatron's interleaved assignment). Default: the num_layers (+1 for an
/// embedding slot, +1 for a loss slot) slots split as evenly as integers allow, the remainder
/// spread over the chunks; with first/last stage counts: those stages take them, the middle stages
/// share the rest, and each stage's layers are split over its vp chunks. O(pp) per call.
LayerRange chunk_layers(int num_layers, const Layout& layout, int stage, int chunk);

/// Megatron recipes whose layers do not split evenly over pp*vp chunks but do once the embedding
/// and the loss count as layers (Llama 3.1 405B: 126 + 2 = 128 slots for pp 16 x vp 8; Qwen3
/// 235B: 94 + 2 over pp 4 x vp 12) set account_for_embedding/loss_in_pipeline_split. Returns the
/// layout with both slots on in exactly that case and no explicit first/last stage counts.
Layout with_recipe_pipeline_split(Layout layout, int num_layers);

/// The micro-batch size that splits each data-parallel rank's batch (global / dp) into one
/// micro-batch per pipeline stage, pp x vp (torchtitan's pipeline_parallel_microbatches default;
/// StackConventions::microbatches_equal_stages); 0 without pipelining or when the batch does not
/// split evenly.
int micro_batch_per_stage(const Layout& layout);

/// The LM head's cost in layers under nanotron's compute-balanced split (Layout::balanced_head_layers):
/// nanotron's get_block_compute_costs prices a decoder layer at 4 a d h + 3 f h (a d = h: Q, K, V and O
/// as if every head had its own K and V) and the head at V h, so V / (4 h + 3 f).
double compute_balanced_head_layers(const workload::ModelSpec& model);

/// Word-embedding parameters per GPU that tied embeddings hold at both ends of a pipeline: the last
/// stage keeps its own copy for the output layer, kept equal to the first stage's by an all-reduce
/// of their gradients (Megatron-Core LanguageModule.setup_embeddings_and_output_layer; DeepSpeed
/// TiedLayerSpec). vocab x hidden / tp when tied and pp > 1, else 0.
double tied_embedding_copy(const workload::ModelSpec& model, const Layout& layout);

/// Why a layout cannot run this model on this many GPUs, or nullopt when it can.
/// Checks: sizes positive; tp*pp*cp divides gpus; tp divides heads and KV heads (or KV heads divide
/// tp with replication); pp*vp at most the layer slots (layers + embedding/loss slots; uneven splits
/// allowed) or first/last stage counts that leave the middle stages a share; ep divides experts and tp*cp*dp; etp
/// divides expert FFN; global batch divisible by micro_batch*dp; cp divides seq_len (2*cp for load balance);
/// the loss's chunks (RecipeSwitches::loss_chunks) divide seq_len / cp.
std::optional<std::string> why_invalid(const workload::ModelSpec& model, const Layout& layout, int gpus,
                                       std::int64_t seq_len);

/// Fills layout.dp from the GPU count (gpus / (tp*pp*cp), or 0 when it does not divide).
Layout with_dp(Layout layout, int gpus);

}  // namespace fmsim::parallelism
