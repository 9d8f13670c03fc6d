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

/// Groups of linear layers that carry LoRA adapters (bits of TrainingJob::lora_targets).
enum class LoraModules : unsigned {
  Qkv = 1,        ///< q/k/v projections (MLA's down/up projections): PEFT q_proj, k_proj, v_proj; Megatron linear_qkv
  Proj = 2,       ///< attention output projection: PEFT o_proj; Megatron linear_proj
  Fc1 = 4,        ///< FFN gate and up (experts' too): PEFT gate_proj, up_proj; Megatron linear_fc1
  Fc2 = 8,        ///< FFN down (experts' too): PEFT down_proj; Megatron linear_fc2
  MixerIn = 16,   ///< Mamba / gated DeltaNet input projections (in_proj, x_proj, dt_proj)
  MixerOut = 32,  ///< Mamba / gated DeltaNet out_proj
  Attention = Qkv | Proj,
  Mlp = Fc1 | Fc2,
  AllLinear = Qkv | Proj | Fc1 | Fc2 | MixerIn | MixerOut,  ///< PEFT "all-linear": every linear but the head and router
};

/// The words of --lora-targets (a comma-separated list) and `lora.targets:` in job files: Hugging
/// Face PEFT module names and Megatron-Bridge's.
inline constexpr core::Word<LoraModules> kLoraModuleWordList[] = {
    {LoraModules::AllLinear, "all-linear", "all, all_linear"},
    {LoraModules::Attention, "attention", "attn"},
    {LoraModules::Mlp, "mlp", "ffn"},
    {LoraModules::Qkv, "qkv", "q_proj, k_proj, v_proj, linear_qkv, query_key_value"},
    {LoraModules::Proj, "o", "o_proj, linear_proj, dense, out_proj_attention"},
    {LoraModules::Fc1, "fc1", "gate_proj, up_proj, linear_fc1, gate_up_proj"},
    {LoraModules::Fc2, "fc2", "down_proj, linear_fc2"},
    {LoraModules::MixerIn, "in_proj", "mixer_in, x_proj, dt_proj"},
    {LoraModules::MixerOut, "out_proj", "mixer_out"},
};
inline constexpr core::Vocabulary<LoraModules> kLoraModuleWords{"LoRA target module", kLoraModuleWordList};

/// Names of the single-module groups set in `targets` ("qkv,o,fc1,fc2"), or "all-linear".
[[nodiscard]] inline std::string lora_targets_label(unsigned targets) {
  if (targets == static_cast<unsigned>(LoraModules::AllLinear)) return "all-linear";
  std::string out;
  for (const LoraModules m : {LoraModules::Qkv, LoraModules::Proj, LoraModules::Fc1, LoraModules::Fc2,
                              LoraModules::MixerIn, LoraModules::MixerOut}) {
    if ((targets & static_cast<unsigned>(m)) == 0) continue;
    if (!out.empty()) out += ",";
    out += kLoraModuleWords.name(m);
  }
  return out;
}

/// Storage of the frozen base weights under LoRA.
enum class LoraBase {
  Bf16,  ///< 16-bit frozen weights (LoRA)
  Fp8,   ///< FP8 frozen weights: used directly by FP8 GEMMs, cast up for 16-bit ones
  Nf4,   ///< QLoRA: 4-bit NormalFloat with double-quantised block scales, dequantised per GEMM
};

/// The words of --lora-base, `lora.base:` in job files.
inline constexpr core::Word<LoraBase> kLoraBaseWordList[] = {
    {LoraBase::Bf16, "bf16", "16-bit, fp16"},
    {LoraBase::Fp8, "fp8", "float8, e4m3"},
    {LoraBase::Nf4, "nf4", "qlora, 4bit, 4-bit"},
};
inline constexpr core::Vocabulary<LoraBase> kLoraBaseWords{"LoRA base precision", kLoraBaseWordList};

/// Bytes per frozen base parameter. NF4 (Dettmers et al. 2023, QLoRA, arXiv:2305.14314, §3
/// "Double Quantization"): 4 bits plus an 8-bit absmax per 64-weight block and an fp32 scale per
/// 256 blocks, 4 + 8/64 + 32/(64·256) = 4.127 bits.
[[nodiscard]] constexpr double lora_base_bytes(LoraBase b) {
  switch (b) {
    case LoraBase::Fp8: return 1.0;
    case LoraBase::Nf4: return (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
    case LoraBase::Bf16: break;
  }
  return 2.0;
}

/// Everything that defines one training step.
struct TrainingJob {
  workload::ModelSpec model;
  hardware::ClusterSpec cluster;
  parallelism::Layout layout;  ///< dp filled in (parallelism::with_dp)
  std::int64_t seq_len = 4096;
  /// Mean tokens of the documents packed into each sequence (SFT sequence packing): attention stays
  /// inside a document (workload::ShardContext::document_tokens). 0 = one document per sequence.
  std::int64_t document_tokens = 0;
  Task task = Task::Pretrain;
  /// LoRA: rank of the adapters on the `lora_targets` modules (default every linear layer but the
  /// router and the output head: Megatron-Bridge's linear_qkv, linear_proj, linear_fc1, linear_fc2;
  /// PEFT's all-linear).
  int lora_rank = 16;
  unsigned lora_targets = static_cast<unsigned>(LoraModules::AllLinear);  ///< LoraModules bits with adapters
  LoraBase lora_base = LoraBase::Bf16;                                    ///< frozen weights' storage
  /// Train the model's multi-token-prediction modules (DeepSeek-V3's one, as its pretraining and
  /// Megatron-Bridge's DeepSeek-V3 recipes with mtp_num_layers 1 do): each adds a block of the last
  /// layer's kind, eh_proj and a loss on the last pipeline stage. Off by default (fine-tuning and
  /// RL drop them).
  bool train_mtp = false;
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
  core::Seconds offload{};  ///< exposed host-link traffic: offloaded activations (beyond their overlap), offloaded
                            ///< optimizer states
  core::Seconds other{};    ///< per-step framework overhead
  [[nodiscard]] core::Seconds total() const {
    return compute + tp_comm + cp_comm + ep_comm + pp_comm + dp_comm + bubble + optimizer + offload + other;
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
parallelism::MemoryOptions memory_options(const std::string& stack, Task task, const parallelism::Layout& layout,
                                          LoraBase lora_base = LoraBase::Bf16);

/// The largest micro-batch (sequences, 1 to `limit`) whose memory fits the job's GPUs with every
/// other setting kept (the global batch too: fewer micro-batches in flight as it grows); 0 when not
/// even one sequence fits. Memory grows with the micro-batch, so a doubling then a bisection finds
/// it in O(log limit) memory estimates.
int largest_fitting_micro_batch(const TrainingJob& job, int limit = 1024);

/// Where the memory peak falls in the schedule: "pp - s warm-up forwards in flight, first
/// backward" on stage s, or "loss and LM-head backward (logits live)" on the last stage when the
/// logits make it the peak.
std::string memory_peak_phase(const TrainingJob& job, const parallelism::MemoryBreakdown& memory);

/// One (grouped) GEMM of `groups` products (m x k) @ (k x n) on one GPU, `flops` in all: the FLOPs at
/// the precision's dense peak (scaled by the power cap) times gemm_efficiency, the FP8 recipe factor,
/// the stack's compute efficiency and the tile-shape factors x / (x + gemm_half_dim) of m, n and k;
/// never faster than its HBM traffic (both inputs in the GEMM's precision, the 16-bit output, once
/// per group) at memory_efficiency; plus one kernel_overhead per group. The training step costs every
/// linear layer with it; validation/kernels/h200 holds the measurements it is checked against.
[[nodiscard]] double gemm_seconds(const hardware::GpuSpec& gpu, const GpuCalibration& gc, double stack_efficiency,
                                  core::Precision p, core::Fp8Recipe recipe, double m, double n, double k,
                                  double groups, double flops);

/// Analytical step time: closed-form pipeline schedule over per-stage micro-batch costs.
/// Microseconds per call; the planner's path.
StepResult estimate_step(const TrainingJob& job, const Calibration& calibration, const collectives::CommCostFn& comm);

/// The job's memory per GPU: parallelism::estimate_memory under the job's memory_options.
parallelism::MemoryBreakdown job_memory(const TrainingJob& job);

/// estimate_step for a search that has estimated the layout's memory already (`memory`, from
/// job_memory): the same validity check, step time and breakdown, without a second memory
/// estimate or the FLOP metrics (tokens/s, model FLOPs, MFU stay 0), which a ranking by time or
/// cost does not need. The planner's inner loop.
StepResult estimate_step_time(const TrainingJob& job, const Calibration& calibration,
                              const collectives::CommCostFn& comm, const parallelism::MemoryBreakdown& memory);

/// Discrete-event simulation of the step over per-stage streams (compute, tp, ep, pp, dp) of one
/// representative rank per pipeline stage, playing the 1F1B or interleaved schedule. Emits a trace
/// when `trace` is given. Cost grows with pp*vp*micro-batches, not with the GPU count.
StepResult simulate_step(const TrainingJob& job, const Calibration& calibration, const collectives::CommCostFn& comm,
                         engine::TraceSink* trace = nullptr);

}  // namespace fmsim::training
