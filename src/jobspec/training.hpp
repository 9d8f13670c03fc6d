// A training job from its flag values (model, cluster, parallel layout, batch, precision, or a
// --job YAML file), shared by `fmsim train`, `fmsim run`, `fmsim compare`, `fmsim plan` and the
// step prediction of `fmsim goodput`. The command layer (src/cli) declares the flags into
// TrainingJobFlags and calls resolve_training_job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/catalog.hpp"
#include "jobspec/flags.hpp"
#include "training/calibration.hpp"
#include "training/step_model.hpp"

namespace fmsim::jobspec {

/// Raw flag values of a training job; the defaults are those of `fmsim train`.
struct TrainingJobFlags {
  std::string job_file;                 ///< --job: YAML file (kind: TrainingJob); flags win over it
  std::string job_file_flag = "--job";  ///< the flag that names it (--job-file on `fmsim compare`)
  std::string model = "llama3.1-8b";    ///< preset or config.json
  std::string cluster = "p5.48xlarge:1";
  int gpus = 0;  ///< 0 = the whole cluster
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, etp = 1;
  /// Embedding / loss as pipeline slots: 1 on, 0 off, -1 as recipes do (on when the layers alone do
  /// not split evenly over pp*vp chunks but the layers + 2 do: parallelism::with_recipe_pipeline_split).
  int embedding_slot = -1, loss_slot = -1;
  int first_stage_layers = 0, last_stage_layers = 0;  ///< 0 = an even share
  std::string pipeline_split = "even";  ///< even | deepspeed | nanotron (parallelism::kPipelineSplitWords)
  int mbs = 1;
  long long gbs = 0;  ///< 0 = micro-batch x dp
  long long seq = 4096;
  long long document_tokens = 0;  ///< mean tokens of the documents packed per sequence (0 = unpacked)
  std::string precision = "bf16";
  std::string fp8_recipe = "tensorwise";  ///< scaling of FP8 GEMMs: tensorwise, rowwise, block
  std::string recompute = "selective";
  std::string recompute_modules;      ///< Megatron-Core recompute_modules, comma-separated ("" = the attention core)
  int activation_offload_layers = 0;  ///< Megatron-Core cpu_offloading_num_layers (activations to host memory)
  double optimizer_offload_fraction = 0.0;  ///< Megatron-Core --optimizer-offload-fraction (states on the CPU)
  double moe_capacity_factor = 0.0;         ///< Megatron-Core --moe-expert-capacity-factor, padded (0 = dropless)
  bool cuda_graphs = false;                 ///< layers captured as CUDA graphs (static buffers per micro-batch)
  parallelism::RecipeSwitches recipe;       ///< --full-iteration-cuda-graph ... --fp8-attention
  bool fp8_params = false;                  ///< weights held in FP8 only (NeMo fp8_params, --fp8-param-gather)
  bool grad_reduce_in_bf16 = false;         ///< gradients reduced in 16 bits (Megatron-LM --grad-reduce-in-bf16)
  std::string optimizer_dtype = "fp32";     ///< master weights and Adam moments: fp32 or bf16
  std::string sharding = "zero1";
  int shard_group = 0;
  std::string stack = "megatron";
  std::string task = "pretrain";
  int lora_rank = 16;
  std::string lora_targets = "all-linear";  ///< comma-separated LoraModules words
  std::string lora_base = "bf16";           ///< frozen weights: bf16, fp8, nf4 (QLoRA)
  bool no_sp = false;
  /// The job file named sequence_parallel / sharding: the stack's conventions do not replace them.
  bool job_sets_sp = false;
  bool job_sets_sharding = false;
  bool job_sets_mbs = false;  ///< the job file named batch.micro
  bool mtp = false;           ///< train the model's multi-token-prediction modules
  std::string power_limit;    ///< "" = TDP
  bool tp_overlap = false;
  std::string moe_dispatcher;  ///< "" = the stack's (alltoall or deduplicated)
  /// Per-expert routed-load CV of the router (0 = balanced: auxiliary loss or forced balancing):
  /// the busiest EP rank carries workload::expert_load_factor(model, ep, cv) of the mean.
  double expert_load_cv = 0.0;
  std::string calibration;  ///< "" = the shipped data/calibration/training.yaml
};

/// A resolved training job and the calibration of its stack.
struct TrainingSetup {
  training::TrainingJob job;
  training::Calibration calibration;
  std::vector<std::string> warnings;  ///< training_job_warnings: the command prints each as "warning: ..."
};

/// Copies into `f` the values of its --job file whose flags were not `given` (no-op without
/// --job). InputError naming file:line: field on a bad file.
void apply_job_file(TrainingJobFlags& f, const FlagGiven& given);

/// apply_job_file for a job file's YAML text already in memory; `file` names it in errors.
void apply_job_text(TrainingJobFlags& f, std::string_view text, const std::string& file, const FlagGiven& given);

/// The job the flags describe, its layout validated (dp derived from the GPUs). InputError naming
/// the flag, or "layout" with the reason, on bad or inconsistent values.
training::TrainingJob make_training_job(const TrainingJobFlags& f, const hardware::Catalog& catalog);

/// What the flags ask for that the job runs differently (make_training_job adjusts it), one
/// sentence each, e.g. "--vp 2 with --pp 1 has no pipeline to interleave; running vp 1". The library
/// never prints: commands print these on stderr and list them in their --json.
std::vector<std::string> training_job_warnings(const TrainingJobFlags& f);

/// The whole resolution of a training command: the --job file under the flags, the job, its
/// stack's calibration (--calibration or the shipped one) and, for an MoE model without
/// --moe-dispatcher, the stack's dispatcher recorded on the job.
TrainingSetup resolve_training_job(TrainingJobFlags f, const hardware::Catalog& catalog, const FlagGiven& given);

/// The training calibration (--calibration, or the shipped one), checked to hold `stack`;
/// InputError on --stack with the known stacks otherwise.
training::Calibration load_stack_calibration(const std::string& file, const std::string& stack);

/// The --moe-dispatcher value: nullopt for "" (the stack's); InputError naming the flag otherwise.
std::optional<training::MoeDispatcher> moe_dispatcher_flag(const std::string& value);

/// The --fp8-recipe value (tensorwise, rowwise, block); InputError naming the flag otherwise.
core::Fp8Recipe fp8_recipe_flag(const std::string& value);

/// For an MoE model without --moe-dispatcher: records the stack's dispatcher on the job, so the
/// layout line and JSON show the one the prediction used.
void resolve_moe_dispatcher(training::TrainingJob& job, const training::Calibration& calibration);

/// The --document-tokens value (mean tokens of the documents packed per sequence; 0 = unpacked),
/// shared by `fmsim train` and `fmsim plan`; InputError naming the flag when negative.
std::int64_t document_tokens_flag(long long value);

/// LoRA settings from the --task, --lora-rank, --lora-targets and --lora-base values (shared by
/// `fmsim train` and `fmsim plan`); InputError naming the flag when a value is not allowed or a
/// LoRA flag is given without --task lora.
struct LoraFlags {
  training::Task task = training::Task::Pretrain;
  int rank = 16;
  unsigned targets = 0;  ///< training::LoraModules bits
  training::LoraBase base = training::LoraBase::Bf16;
};
LoraFlags lora_flags(const std::string& task, int rank, const std::string& targets, const std::string& base);

}  // namespace fmsim::jobspec
