// The software stacks fmsim is calibrated for, as a vocabulary, and what each does by default: the
// conventions the models read instead of testing a stack's name. A stack's name is also its key
// into the training calibration (data/calibration/training.yaml `stacks:`), where its fitted
// efficiencies and overheads live; a calibration may add stacks of its own, which have no
// conventions of a known stack (kNoStackConventions).
#pragma once

#include <optional>
#include <string_view>

#include "core/vocabulary.hpp"
#include "parallelism/layout.hpp"

namespace fmsim::parallelism {

enum class Stack {
  Megatron,    ///< Megatron-LM / Megatron-Core, NeMo, Megatron-Bridge, Megatron-DeepSpeed
  TorchTitan,  ///< PyTorch torchtitan (FSDP2, torch.compile, Float8)
  LlmFoundry,  ///< MosaicML llm-foundry / Composer (FSDP)
  /// Megatron-LM before FlashAttention and Transformer Engine (2019-2022: Narayanan et al. SC21,
  /// Korthikanti et al. 2022, Megatron-DeepSpeed): unfused attention, no TP or DP overlap.
  MegatronLegacy,
};

/// The words of --stack, job files and calibration files.
inline constexpr core::Word<Stack> kStackWordList[] = {
    {Stack::Megatron, "megatron"},
    {Stack::TorchTitan, "torchtitan"},
    {Stack::LlmFoundry, "llm-foundry"},
    {Stack::MegatronLegacy, "megatron-legacy"},
};
inline constexpr core::Vocabulary<Stack> kStackWords{"software stack", kStackWordList};

constexpr std::string_view to_string(Stack s) { return kStackWords.name(s); }

/// What a stack does when a job (or a published run) does not say otherwise.
struct StackConventions {
  /// Its kernels define the architecture's GEMM/attention efficiencies, so its compute_efficiency
  /// is 1 by definition and not fitted (Megatron-Core: Transformer Engine, cuBLASLt, cuDNN).
  bool reference_kernels = false;
  /// Data parallelism shards parameters, gradients and optimizer states (FSDP / ZeRO-3) rather
  /// than the optimizer only (Megatron-Core's distributed optimizer).
  bool fully_sharded = false;
  /// TP communication overlaps the GEMMs (Transformer Engine userbuffers: NeMo's performance
  /// recipes set tp_comm_overlap; the FSDP stacks have no TP overlap).
  bool tp_comm_overlap = false;
  /// Activation recomputation of a published run that names none: Megatron/NeMo performance
  /// recipes recompute nothing; torchtitan's configs default to activation_checkpoint.mode
  /// "selective"; llm-foundry's FSDP configs set activation_checkpointing: true (full).
  Recompute published_recompute = Recompute::None;
  /// Under pipeline parallelism FSDP keeps each stage's gathered weights from the first
  /// micro-batch's forward to the step's end and reduce-scatters the accumulated gradients once,
  /// instead of gathering again for every micro-batch (torchtitan: reshard_after_forward = not
  /// pp_enabled, torchtitan/models/llama3/infra/parallelize.py apply_fsdp, "default" policy).
  bool fsdp_gather_once_with_pp = false;
  /// Sequence parallelism with TP when a run does not say (Megatron-LM from 2022, Korthikanti et
  /// al.; torchtitan); Megatron-LM of 2021 (SC21) had none.
  bool sequence_parallel = true;
  /// Without full sharding, the optimizer is sharded over data parallelism (Megatron-Core's
  /// distributed optimizer) when a run does not say; false: plain DDP (Megatron-LM before 2022).
  bool distributed_optimizer = true;
  /// FP16 runs reduce their gradients in 16 bits (Megatron-LM before Megatron-Core kept the FP16
  /// gradient buffer in the parameters' type: --accumulate-allreduce-grads-in-fp32 was forced on
  /// only for BF16, megatron/arguments.py).
  bool fp16_grad_reduce_in_16_bits = false;
  /// Under pipeline parallelism, a run that states no micro-batch size splits each data-parallel
  /// rank's batch into as many micro-batches as there are pipeline stages, pp x stages per rank
  /// (torchtitan: pipeline_parallel_microbatches defaults to num_total_stages in
  /// build_pipeline_schedule, and a looped schedule such as Interleaved1F1B gets 2 stages per rank
  /// when no split points are given). Megatron and NeMo recipes always state the micro-batch size.
  bool microbatches_equal_stages = false;

  /// The sharding a run gets when it does not say: FSDP for the fully sharded stacks, else the
  /// distributed optimizer, else plain DDP.
  [[nodiscard]] constexpr Sharding default_sharding() const {
    return fully_sharded ? Sharding::Zero3 : distributed_optimizer ? Sharding::DistributedOptimizer : Sharding::None;
  }
};

/// A stack of none of the known kinds (a calibration's own): no overlap, no full sharding.
inline constexpr StackConventions kNoStackConventions{};

constexpr StackConventions stack_conventions(Stack s) {
  switch (s) {
    case Stack::Megatron:
      return {.reference_kernels = true,
              .fully_sharded = false,
              .tp_comm_overlap = true,
              .published_recompute = Recompute::None};
    case Stack::TorchTitan:
      return {.reference_kernels = false,
              .fully_sharded = true,
              .tp_comm_overlap = false,
              .published_recompute = Recompute::Selective,
              .fsdp_gather_once_with_pp = true,
              .microbatches_equal_stages = true};
    case Stack::LlmFoundry:
      return {.reference_kernels = false,
              .fully_sharded = true,
              .tp_comm_overlap = false,
              .published_recompute = Recompute::Full};
    case Stack::MegatronLegacy:
      // Same cuBLAS GEMMs as Megatron-Core (its efficiencies are the architecture's); SC21 ran
      // every configuration with activation recomputation (Narayanan et al. 2021, Sec. 5.1).
      return {.reference_kernels = true,
              .fully_sharded = false,
              .tp_comm_overlap = false,
              .published_recompute = Recompute::Full,
              .sequence_parallel = false,
              .distributed_optimizer = false,
              .fp16_grad_reduce_in_16_bits = true};
  }
  return kNoStackConventions;
}

/// The conventions of the stack a calibration key names; kNoStackConventions for a name that is
/// not a known stack.
inline StackConventions stack_conventions(std::string_view name) {
  const std::optional<Stack> s = kStackWords.parse(name);
  return s ? stack_conventions(*s) : kNoStackConventions;
}

}  // namespace fmsim::parallelism
