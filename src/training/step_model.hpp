// One training step of a dense or MoE transformer on a cluster: time, breakdown, memory, MFU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "engine/trace.hpp"
#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "parallelism/memory.hpp"
#include "training/calibration.hpp"
#include "training/comm_model.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::training {

enum class Task {
  Pretrain,  ///< full forward and backward, optimizer over all weights
  Sft,       ///< as pre-training (full fine-tuning)
  Lora,      ///< frozen base weights: no weight-gradient GEMMs, tiny optimizer
};

/// The words of --task, `task:` in job files.
inline constexpr core::Word<Task> kTaskWordList[] = {
    {Task::Pretrain, "pretrain", "pretraining, pre-train"},
    {Task::Sft, "sft", "fine-tune, finetune"},
    {Task::Lora, "lora"},
};
inline constexpr core::Vocabulary<Task> kTaskWords{"task", kTaskWordList};

/// Everything that defines one training step.
struct TrainingJob {
  workload::ModelSpec model;
  hardware::ClusterSpec cluster;
  parallelism::Layout layout;  ///< dp filled in (parallelism::with_dp)
  std::int64_t seq_len = 4096;
  Task task = Task::Pretrain;
  /// LoRA: rank of the adapters on every linear layer but the router and the output head
  /// (Megatron-Bridge's linear_qkv, linear_proj, linear_fc1, linear_fc2; PEFT's all-linear).
  int lora_rank = 16;
  std::string stack = "megatron";               ///< key into Calibration::stacks
  std::optional<MoeDispatcher> moe_dispatcher;  ///< overrides the stack's dispatcher when set
  /// Routed tokens on the busiest expert-parallel rank over the mean (1 = balanced). The expert
  /// GEMMs and the all-to-all of every MoE layer wait for that rank. Pre-training balances its
  /// router (auxiliary loss, bias updates; the calibration's rows); RL fine-tuning of a released
  /// model keeps its router as it is (rl::expert_load_factor).
  double expert_load_factor = 1.0;
  int gpus = 0;  ///< GPUs the job uses; 0 = the whole cluster
  [[nodiscard]] int job_gpus() const { return gpus > 0 ? gpus : cluster.gpus(); }
};

/// Where the step's time goes on the critical path. Sums to the step time.
struct StepBreakdown {
  core::Seconds compute{};  ///< forward, backward and recompute kernels
  core::Seconds tp_comm{};  ///< exposed tensor-parallel communication
  core::Seconds cp_comm{};  ///< exposed context-parallel communication
  core::Seconds ep_comm{};  ///< exposed MoE all-to-all
  core::Seconds pp_comm{};  ///< exposed pipeline send/recv
  core::Seconds dp_comm{};  ///< exposed data-parallel / FSDP communication
  core::Seconds bubble{};   ///< pipeline fill and drain
  core::Seconds optimizer{};
  core::Seconds other{};  ///< per-step framework overhead
  [[nodiscard]] core::Seconds total() const {
    return compute + tp_comm + cp_comm + ep_comm + pp_comm + dp_comm + bubble + optimizer + other;
  }
};

/// Communication volume per GPU per step, by kind (bytes sent).
struct CommVolume {
  core::Bytes tp{}, cp{}, ep{}, pp{}, dp{};
};

struct StepResult {
  bool feasible = false;  ///< false: invalid layout (reason says why); OOM is reported separately
  std::string reason;
  core::Seconds step_time{};
  StepBreakdown breakdown;
  parallelism::MemoryBreakdown memory;
  core::Bytes memory_capacity{};  ///< usable HBM per GPU
  bool fits_memory = false;
  CommVolume comm;
  double tokens_per_s_per_gpu = 0.0;
  double model_flops_per_step = 0.0;  ///< workload::model_flops_per_step (Megatron convention, causal), whole job
  double model_tflops_per_gpu = 0.0;
  double mfu = 0.0;  ///< model TFLOP/s per GPU / dense peak in the job's precision
  std::int64_t micro_batches = 0;
  std::size_t simulated_tasks = 0;  ///< discrete-event tasks played (0 for the analytical path)
};

/// The memory conventions of a job: its stack's (parallelism::stack_memory_options), 16-bit
/// gradient reduction when the layout asks for it, and LoRA's frozen base weights.
parallelism::MemoryOptions memory_options(const std::string& stack, Task task, const parallelism::Layout& layout);

/// Analytical step time: closed-form pipeline schedule over per-stage micro-batch costs.
/// Microseconds per call; the planner's path.
StepResult estimate_step(const TrainingJob& job, const Calibration& calibration, const CommCostFn& comm);

/// Discrete-event simulation of the step over per-stage streams (compute, tp, ep, pp, dp) of one
/// representative rank per pipeline stage, playing the 1F1B or interleaved schedule. Emits a trace
/// when `trace` is given. Cost grows with pp*vp*micro-batches, not with the GPU count.
StepResult simulate_step(const TrainingJob& job, const Calibration& calibration, const CommCostFn& comm,
                         engine::TraceSink* trace = nullptr);

}  // namespace fmsim::training
