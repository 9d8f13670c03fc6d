// Training-job flags declared on a command (the values go to jobspec::resolve_training_job).
#include "cli/training_job_flags.hpp"

#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "collectives/comm_cost.hpp"
#include "core/precision.hpp"
#include "parallelism/layout.hpp"
#include "parallelism/stack.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {

void add_recipe_switch_flags(CLI::App& cmd, parallelism::RecipeSwitches& s) {
  cmd.add_flag("--full-iteration-cuda-graph", s.full_iteration_graph,
               "Replay the whole step as one CUDA graph (Megatron-Core cuda_graph_impl full_iteration):\n"
               "no per-layer host launches or MoE host syncs");
  cmd.add_flag("--moe-a2a-overlap", s.overlap_ep_comm,
               "Overlap the MoE dispatch/combine all-to-alls with another micro-batch's compute\n"
               "(Megatron-Core overlap_moe_expert_parallel_comm, Megatron-Bridge moe_a2a_overlap); ep > 1 only");
  cmd.add_flag("--fused-grouped-mlp", s.fused_grouped_mlp,
               "Routed experts as one fused grouped MLP kernel (Megatron-Bridge cutedsl_fused_grouped_mlp):\n"
               "no separate expert activation or FP8 cast passes");
  cmd.add_flag("--fp8-attention", s.fp8_attention,
               "With an FP8 precision, run attention in FP8 too (Transformer Engine fp8_dot_product_attention)");
  cmd.add_flag("--compile-loss", s.compiled_loss,
               "The loss compiled with the model (torchtitan compile.components [model, loss]): 16-bit\n"
               "logits and gradient, 4 B per logit instead of 10 (a stack with a fused loss keeps its own)");
  cmd.add_option("--loss-chunks", s.loss_chunks,
                 "Compute the LM head and loss in this many chunks of each sequence, each chunk's backward\n"
                 "before the next (torchtitan ChunkedLossWrapper num_chunks): memory only, one chunk's logits\n"
                 "live at a time; 1 = the whole sequence. Must divide seq / cp")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
}

void add_training_job_flags(CLI::App& cmd, jobspec::TrainingJobFlags& f, const std::string& job_file_flag) {
  f.job_file_flag = job_file_flag;
  cmd.add_option(job_file_flag, f.job_file, "YAML job file (kind: TrainingJob); flags override its values")
      ->check(CLI::ExistingFile);
  cmd.add_option("--model", f.model, "Preset name (fmsim models) or a Hugging Face config.json")->capture_default_str();
  cmd.add_option("--cluster", f.cluster, "SYSTEM:COUNT (p5.48xlarge:64, u-p6e-gb200x72:4) or a cluster YAML")
      ->capture_default_str();
  cmd.add_option("--gpus", f.gpus, "GPUs the job uses (default: the whole cluster)")->check(positive(f.gpus));
  cmd.add_option("--tp", f.tp, "Tensor-parallel size")->check(positive(f.tp))->capture_default_str();
  cmd.add_option("--pp", f.pp, "Pipeline-parallel size")->check(positive(f.pp))->capture_default_str();
  cmd.add_option("--vp", f.vp, "Virtual pipeline stages per rank (interleaved 1F1B)")
      ->check(positive(f.vp))
      ->capture_default_str();
  cmd.add_option("--cp", f.cp, "Context-parallel size")->check(positive(f.cp))->capture_default_str();
  cmd.add_option("--ep", f.ep, "Expert-parallel size (MoE)")->check(positive(f.ep))->capture_default_str();
  cmd.add_option("--etp,--expert-tp", f.etp,
                 "Expert tensor-parallel size (MoE; Megatron's expert_tensor_parallel_size). Expert layers fold\n"
                 "their own etp x ep x expert-dp over the tp x cp x dp ranks: ep*etp must divide tp*cp*dp")
      ->check(positive(f.etp))
      ->capture_default_str();
  cmd.add_flag_callback(
      "--account-for-embedding-in-pipeline-split", [&f] { f.embedding_slot = 1; },
      "Count the embedding as one layer slot of the first pipeline stage (Megatron-Core). Default: on,\n"
      "with the loss, when the layers do not split evenly over pp*vp chunks but layers + 2 do\n"
      "(Llama 3.1 405B: 126 + 2 = 128 slots for --pp 16 --vp 8)");
  cmd.add_flag_callback(
      "--account-for-loss-in-pipeline-split", [&f] { f.loss_slot = 1; },
      "Count the loss (output head) as one layer slot of the last pipeline stage (Megatron-Core)");
  cmd.add_option("--pipeline-split", f.pipeline_split,
                 "How the layers split over the pipeline stages: even (Megatron: slots and counts above),\n"
                 "deepspeed (PipelineModule partition_method type:transformer: ceil(layers/pp) per stage in\n"
                 "order, the last the rest; with --account-for-embedding-in-pipeline-split it is\n"
                 "type:transformer|embedding), nanotron (compute-balanced, the LM head counted)")
      ->capture_default_str();
  cmd.add_option("--decoder-first-pipeline-num-layers", f.first_stage_layers,
                 "Layers on the first pipeline stage (Megatron); the other stages share the rest")
      ->check(positive(f.first_stage_layers));
  cmd.add_option("--decoder-last-pipeline-num-layers", f.last_stage_layers,
                 "Layers on the last pipeline stage (Megatron); the other stages share the rest")
      ->check(positive(f.last_stage_layers));
  cmd.add_option("--mbs", f.mbs, "Micro-batch size (sequences)")->check(positive(f.mbs))->capture_default_str();
  cmd.add_option("--gbs", f.gbs, "Global batch size (sequences; default: micro-batch x dp)")->check(positive(f.gbs));
  cmd.add_option("--seq", f.seq, "Sequence length (tokens)")->check(positive(f.seq))->capture_default_str();
  cmd.add_option("--document-tokens", f.document_tokens,
                 "Mean tokens of the documents packed into each sequence (SFT sequence packing: NeMo packed\n"
                 "datasets, TE THD with cu_seqlens): attention stays inside a document. 0: one per sequence")
      ->check(whole_number(0, 1LL << 27))
      ->capture_default_str();
  cmd.add_option("--precision", f.precision, "Compute precision: " + core::kTrainingPrecisionWords.allowed())
      ->capture_default_str();
  cmd.add_option("--fp8-recipe", f.fp8_recipe,
                 "FP8 scaling: tensorwise (per-tensor, delayed or current), rowwise (torchao: slower GEMMs),\n"
                 "block (MXFP8 / TE block scaling; costed as tensorwise for now, see docs/models/training.md)")
      ->capture_default_str();
  cmd.add_option("--recompute", f.recompute, "Activation recomputation: " + parallelism::kRecomputeWords.allowed())
      ->capture_default_str();
  cmd.add_option("--recompute-modules", f.recompute_modules,
                 "With --recompute selective, the submodules recomputed, comma-separated (Megatron-Core's\n"
                 "recompute_modules): " +
                     parallelism::kRecomputeModuleWords.allowed() + "; default: the attention core");
  cmd.add_option("--activation-offload-layers", f.activation_offload_layers,
                 "Layers whose activations go to host memory after their forward and come back for their\n"
                 "backward (Megatron-Core cpu_offloading_num_layers; pp 1 only), over PCIe or NVLink-C2C")
      ->check(whole_number(0, 1 << 20))
      ->capture_default_str();
  cmd.add_option("--optimizer-offload-fraction", f.optimizer_offload_fraction,
                 "Share of the optimizer states kept and stepped on the CPU, 0 to 1 (Megatron-Core\n"
                 "--optimizer-cpu-offload --optimizer-offload-fraction; DeepSpeed ZeRO-Offload: 1)")
      ->capture_default_str();
  cmd.add_option("--moe-capacity-factor", f.moe_capacity_factor,
                 "MoE expert capacity factor with padding to capacity (Megatron-Core\n"
                 "--moe-expert-capacity-factor --moe-pad-expert-input-to-capacity); 0 = dropless")
      ->capture_default_str();
  cmd.add_flag("--cuda-graphs", f.cuda_graphs,
               "Capture the layers as CUDA graphs (Megatron-Core --enable-cuda-graph): static buffers per\n"
               "layer and micro-batch");
  add_recipe_switch_flags(cmd, f.recipe);
  cmd.add_flag("--grad-reduce-in-bf16", f.grad_reduce_in_bf16,
               "Reduce the data-parallel gradients in 16 bits instead of fp32 (Megatron-LM --grad-reduce-in-bf16;\n"
               "NeMo / Megatron-Bridge grad_reduce_in_fp32: false, which NeMo's FP8 performance recipes set)");
  cmd.add_flag("--fp8-params", f.fp8_params,
               "Hold the weights in FP8 only (NeMo fp8_params, Megatron-Core --fp8-param-gather)");
  cmd.add_option("--optimizer-dtype", f.optimizer_dtype,
                 "Master weights and Adam moments: fp32, or bf16 (Apex DistributedFusedAdam dtype bf16,\n"
                 "Megatron-Core --use-precision-aware-optimizer)")
      ->capture_default_str();
  cmd.add_option("--sharding", f.sharding, "Data-parallel sharding: " + parallelism::kShardingWords.allowed())
      ->capture_default_str();
  cmd.add_option("--shard-group", f.shard_group, "FSDP hybrid sharding group size (0 = all DP ranks)");
  cmd.add_option("--stack", f.stack, "Software stack calibration: " + parallelism::kStackWords.allowed())
      ->capture_default_str();
  cmd.add_option("--task", f.task, "Task: " + training::kTaskWords.allowed())->capture_default_str();
  cmd.add_option("--lora-rank", f.lora_rank, "With --task lora: adapter rank")
      ->check(whole_number(1, 65536))
      ->capture_default_str();
  cmd.add_option("--lora-targets", f.lora_targets,
                 "With --task lora: modules with adapters, comma-separated PEFT or Megatron names,\n"
                 "e.g. q_proj,v_proj or linear_qkv,linear_proj; words: " +
                     training::kLoraModuleWords.allowed())
      ->capture_default_str();
  cmd.add_option("--lora-base", f.lora_base,
                 "With --task lora: frozen weights' storage: bf16, fp8, or nf4 (QLoRA: 4-bit NormalFloat,\n"
                 "dequantised for each GEMM)")
      ->capture_default_str();
  cmd.add_flag("--no-sp", f.no_sp, "Disable sequence parallelism");
  cmd.add_flag("--mtp", f.mtp,
               "Train the model's multi-token-prediction modules (DeepSeek-V3 pretraining: one more block,\n"
               "projection and loss on the last pipeline stage)");
  cmd.add_option("--power-limit", f.power_limit, "GPU power cap, e.g. 500W (default: TDP)");
  cmd.add_flag("--tp-overlap", f.tp_overlap, "Overlap TP communication with GEMMs (userbuffers / async TP)");
  cmd.add_option("--moe-dispatcher", f.moe_dispatcher,
                 "MoE token dispatch across NVLink domains: alltoall (a copy per expert) or deduplicated\n"
                 "(DeepEP/HybridEP: a copy per destination node); default: the stack's");
  cmd.add_option("--expert-load-cv", f.expert_load_cv,
                 "MoE router's per-expert load CV (std/mean of tokens per expert). The busiest EP rank's\n"
                 "expert GEMMs and all-to-all take 1 + z_ep cv / sqrt(E/ep) of the mean (z_ep: expected\n"
                 "maximum of ep standard normals). 0 (default): balanced, as aux-loss pretraining and the\n"
                 "forced-balance benchmark recipes run; 2.14: a released router without balancing\n"
                 "(DeepSeek-R1, TensorRT-LLM's EP measurement)");
  cmd.add_option("--calibration", f.calibration, "Calibration YAML replacing data/calibration/training.yaml")
      ->check(CLI::ExistingFile);
}

jobspec::FlagGiven given_on(const CLI::App& cmd) {
  return [&cmd](std::string_view flag) { return cmd.count(std::string(flag)) > 0; };
}

PredictedJob predict_training_job(const jobspec::TrainingJobFlags& flags, const CLI::App& cmd, Context& ctx,
                                  bool analytical) {
  PredictedJob p{.setup = jobspec::resolve_training_job(flags, ctx.catalog(), given_on(cmd)), .step = {}};
  print_warnings(p.setup.warnings);
  const auto comm = collectives::make_comm_cost(p.setup.job.cluster);
  p.step = analytical ? training::estimate_step(p.setup.job, p.setup.calibration, comm)
                      : training::simulate_step(p.setup.job, p.setup.calibration, comm);
  return p;
}

}  // namespace fmsim::cli
