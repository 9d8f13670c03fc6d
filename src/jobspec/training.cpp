// Training-job flag values and job files into a validated training::TrainingJob.
#include "jobspec/training.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <vector>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "config/words.hpp"
#include "config/yaml_reader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "parallelism/layout.hpp"
#include "parallelism/stack.hpp"
#include "workload/expert_load.hpp"

namespace fmsim::jobspec {

namespace {

// A job file holds the same settings as the flags, as YAML (kind: TrainingJob).
void apply_job_document(TrainingJobFlags& o, const config::YamlDocument& doc, const FlagGiven& given) {
  const auto root = doc.node();
  root.check_keys({"kind",
                   "model",
                   "cluster",
                   "gpus",
                   "parallelism",
                   "batch",
                   "seq_len",
                   "document_tokens",
                   "precision",
                   "fp8_recipe",
                   "recompute",
                   "recompute_modules",
                   "activation_offload_layers",
                   "fp8_params",
                   "grad_reduce_in_bf16",
                   "optimizer_dtype",
                   "optimizer_offload_fraction",
                   "moe_capacity_factor",
                   "cuda_graphs",
                   "full_iteration_cuda_graph",
                   "moe_a2a_overlap",
                   "fused_grouped_mlp",
                   "fp8_attention",
                   "compile_loss",
                   "loss_chunks",
                   "stack",
                   "task",
                   "lora"});
  if (const auto k = root.find("kind"); k && k->as_string() != "TrainingJob") k->fail("expected kind: TrainingJob");
  auto flag_given = [&](const char* name) { return given(name); };
  if (const auto n = root.find("model"); n && !flag_given("--model")) o.model = n->as_string();
  if (const auto n = root.find("cluster"); n && !flag_given("--cluster")) o.cluster = n->as_string();
  if (const auto n = root.find("gpus"); n && !flag_given("--gpus")) o.gpus = n->as_int(config::Bound::Positive);
  if (const auto n = root.find("seq_len"); n && !flag_given("--seq")) o.seq = n->as_int(config::Bound::Positive);
  if (const auto n = root.find("document_tokens"); n && !flag_given("--document-tokens"))
    o.document_tokens = n->as_int(config::Bound::NonNegative);
  if (const auto n = root.find("precision"); n && !flag_given("--precision"))
    o.precision = n->as_word_name(core::kTrainingPrecisionWords);
  if (const auto n = root.find("fp8_recipe"); n && !flag_given("--fp8-recipe")) {
    o.fp8_recipe = n->as_word_name(core::kFp8RecipeWords);
  }
  if (const auto n = root.find("recompute"); n && !flag_given("--recompute"))
    o.recompute = n->as_word_name(parallelism::kRecomputeWords);
  if (const auto n = root.find("activation_offload_layers"); n && !flag_given("--activation-offload-layers")) {
    o.activation_offload_layers = n->as_int(config::Bound::NonNegative);
  }
  // The memory settings of `fmsim train`'s flags, under the same names (Megatron-Core's where it
  // has one: --optimizer-offload-fraction, --moe-expert-capacity-factor).
  if (const auto n = root.find("fp8_params"); n && !flag_given("--fp8-params")) o.fp8_params = n->as_bool();
  if (const auto n = root.find("grad_reduce_in_bf16"); n && !flag_given("--grad-reduce-in-bf16")) {
    o.grad_reduce_in_bf16 = n->as_bool();
  }
  if (const auto n = root.find("optimizer_dtype"); n && !flag_given("--optimizer-dtype"))
    o.optimizer_dtype = n->as_word_name(core::kOptimizerDtypeWords);
  // Ranges as the flags' (make_training_job), refused here with the file, line and key.
  if (const auto n = root.find("optimizer_offload_fraction"); n && !flag_given("--optimizer-offload-fraction")) {
    o.optimizer_offload_fraction = n->as_number(config::Bound::NonNegative);
    if (o.optimizer_offload_fraction > 1.0)
      n->fail(fmt::format("{} is not a fraction; allowed: 0 to 1", o.optimizer_offload_fraction));
  }
  if (const auto n = root.find("moe_capacity_factor"); n && !flag_given("--moe-capacity-factor")) {
    o.moe_capacity_factor = n->as_number(config::Bound::NonNegative);
    if (o.moe_capacity_factor > 64.0)
      n->fail(fmt::format("{} is out of range; allowed: 0 (dropless) to 64", o.moe_capacity_factor));
  }
  if (const auto n = root.find("cuda_graphs"); n && !flag_given("--cuda-graphs")) o.cuda_graphs = n->as_bool();
  for (auto [key, flag, field] :
       {std::tuple{"full_iteration_cuda_graph", "--full-iteration-cuda-graph",
                   &parallelism::RecipeSwitches::full_iteration_graph},
        std::tuple{"moe_a2a_overlap", "--moe-a2a-overlap", &parallelism::RecipeSwitches::overlap_ep_comm},
        std::tuple{"fused_grouped_mlp", "--fused-grouped-mlp", &parallelism::RecipeSwitches::fused_grouped_mlp},
        std::tuple{"fp8_attention", "--fp8-attention", &parallelism::RecipeSwitches::fp8_attention},
        std::tuple{"compile_loss", "--compile-loss", &parallelism::RecipeSwitches::compiled_loss}}) {
    if (const auto n = root.find(key); n && !flag_given(flag)) o.recipe.*field = n->as_bool();
  }
  if (const auto n = root.find("loss_chunks"); n && !flag_given("--loss-chunks")) {
    const auto chunks = n->as_int(config::Bound::Positive);
    if (chunks > (1 << 20)) n->fail(fmt::format("{} is out of range; allowed: 1 to {}", chunks, 1 << 20));
    o.recipe.loss_chunks = static_cast<int>(chunks);
  }
  if (const auto n = root.find("recompute_modules"); n && !flag_given("--recompute-modules")) {
    // A YAML list or one comma-separated string of Megatron-Core's module names.
    std::vector<std::string> names;
    if (n->is_sequence()) {
      for (const auto& item : n->items()) names.push_back(item.as_word_name(parallelism::kRecomputeModuleWords));
    } else {
      for (const auto m :
           config::word_list_flag(parallelism::kRecomputeModuleWords, n->as_string(), "recompute_modules"))
        names.emplace_back(parallelism::kRecomputeModuleWords.name(m));
    }
    o.recompute_modules = core::join(names, ",");
  }
  if (const auto n = root.find("stack"); n && !flag_given("--stack")) o.stack = n->as_string();
  if (const auto n = root.find("task"); n && !flag_given("--task")) o.task = n->as_word_name(training::kTaskWords);
  if (const auto lora = root.find("lora")) {
    lora->check_keys({"rank", "targets", "base"});
    if (const auto n = lora->find("rank"); n && !flag_given("--lora-rank"))
      o.lora_rank = n->as_int(config::Bound::Positive);
    if (const auto n = lora->find("targets"); n && !flag_given("--lora-targets")) o.lora_targets = n->as_string();
    if (const auto n = lora->find("base"); n && !flag_given("--lora-base"))
      o.lora_base = n->as_word_name(training::kLoraBaseWords);
  }
  if (const auto p = root.find("parallelism")) {
    p->check_keys({"tp", "pp", "vp", "cp", "ep", "etp", "expert_tp", "sequence_parallel", "sharding", "shard_group",
                   "tp_overlap", "moe_dispatcher", "expert_load_cv", "account_for_embedding_in_pipeline_split",
                   "account_for_loss_in_pipeline_split", "decoder_first_pipeline_num_layers",
                   "decoder_last_pipeline_num_layers", "pipeline_split"});
    auto set = [&](const char* key, const char* flag, int& into) {
      if (const auto n = p->find(key); n && !flag_given(flag)) into = n->as_int(config::Bound::Positive);
    };
    set("tp", "--tp", o.tp);
    set("pp", "--pp", o.pp);
    set("vp", "--vp", o.vp);
    set("cp", "--cp", o.cp);
    set("ep", "--ep", o.ep);
    set("etp", "--etp", o.etp);
    set("expert_tp", "--etp", o.etp);
    set("decoder_first_pipeline_num_layers", "--decoder-first-pipeline-num-layers", o.first_stage_layers);
    set("decoder_last_pipeline_num_layers", "--decoder-last-pipeline-num-layers", o.last_stage_layers);
    if (const auto n = p->find("account_for_embedding_in_pipeline_split");
        n && !flag_given("--account-for-embedding-in-pipeline-split"))
      o.embedding_slot = n->as_bool() ? 1 : 0;
    if (const auto n = p->find("account_for_loss_in_pipeline_split");
        n && !flag_given("--account-for-loss-in-pipeline-split"))
      o.loss_slot = n->as_bool() ? 1 : 0;
    if (const auto n = p->find("pipeline_split"); n && !flag_given("--pipeline-split"))
      o.pipeline_split = n->as_word_name(parallelism::kPipelineSplitWords);
    if (const auto n = p->find("shard_group"); n && !flag_given("--shard-group"))
      o.shard_group = n->as_int(config::Bound::NonNegative);
    if (const auto n = p->find("sequence_parallel"); n && !flag_given("--no-sp")) {
      o.no_sp = !n->as_bool();
      o.job_sets_sp = true;
    }
    if (const auto n = p->find("tp_overlap"); n && !flag_given("--tp-overlap")) o.tp_overlap = n->as_bool();
    if (const auto n = p->find("moe_dispatcher"); n && !flag_given("--moe-dispatcher")) {
      o.moe_dispatcher = n->as_word_name(training::kMoeDispatcherWords);
    }
    if (const auto n = p->find("expert_load_cv"); n && !flag_given("--expert-load-cv"))
      o.expert_load_cv = n->as_number(config::Bound::NonNegative);
    if (const auto n = p->find("sharding"); n && !flag_given("--sharding")) {
      o.sharding = n->as_word_name(parallelism::kShardingWords);
      o.job_sets_sharding = true;
    }
  }
  if (const auto b = root.find("batch")) {
    b->check_keys({"global", "micro"});
    if (const auto n = b->find("global"); n && !flag_given("--gbs")) o.gbs = n->as_int(config::Bound::Positive);
    if (const auto n = b->find("micro"); n && !flag_given("--mbs")) {
      o.mbs = n->as_int(config::Bound::Positive);
      o.job_sets_mbs = true;
    }
  }
}

}  // namespace

void apply_job_file(TrainingJobFlags& o, const FlagGiven& given) {
  if (o.job_file.empty()) return;
  apply_job_document(o, config::load_yaml_file(o.job_file, o.job_file_flag), given);
}

void apply_job_text(TrainingJobFlags& f, std::string_view text, const std::string& file, const FlagGiven& given) {
  apply_job_document(f, config::load_yaml_text(text, file), given);
}

std::int64_t document_tokens_flag(long long value) {
  if (value < 0) {
    throw core::InputError::flag("--document-tokens",
                                 fmt::format("{}: expected 0 (one document per sequence) or more", value));
  }
  return value;
}

training::TrainingJob make_training_job(const TrainingJobFlags& o, const hardware::Catalog& catalog) {
  training::TrainingJob job;
  job.model = config::load_model(o.model);
  job.cluster = config::parse_cluster(catalog, o.cluster);
  job.gpus = o.gpus;
  if (!o.power_limit.empty()) {
    const auto p = core::parse_power(o.power_limit);
    if (!p || p.value->value() <= 0) {
      throw core::InputError::flag("--power-limit", p ? "must be positive" : p.error);
    }
    job.cluster.gpu.power_limit = *p.value;
  }
  if (o.gpus > job.cluster.gpus()) {
    throw core::InputError::flag("--gpus",
                                 fmt::format("{} GPUs requested but the cluster has {}", o.gpus, job.cluster.gpus()));
  }
  // Bounds that keep one prediction fast and its integer nanoseconds from overflowing: 2^27
  // tokens (128 Mi, over 10x the longest published context) per sequence.
  constexpr long long kMaxSeq = 1LL << 27;
  if (o.seq > kMaxSeq) {
    throw core::InputError::flag("--seq",
                                 fmt::format("{} tokens is too long; allowed: 1 to {} (2^27)", o.seq, kMaxSeq));
  }
  job.seq_len = o.seq;
  job.document_tokens = document_tokens_flag(o.document_tokens);
  job.stack = o.stack;
  const LoraFlags lora = lora_flags(o.task, o.lora_rank, o.lora_targets, o.lora_base);
  job.task = lora.task;
  job.lora_rank = lora.rank;
  job.lora_targets = lora.targets;
  job.lora_base = lora.base;
  job.train_mtp = o.mtp;
  job.moe_dispatcher = moe_dispatcher_flag(o.moe_dispatcher);
  auto& l = job.layout;
  l.tp = o.tp;
  l.pp = o.pp;
  l.vp = o.vp;
  // Recipes set virtual_pipeline_model_parallel_size with pp 1; Megatron then runs no interleaving
  // (training_job_warnings says so).
  if (l.vp > 1 && l.pp == 1) l.vp = 1;
  l.cp = o.cp;
  l.ep = o.ep;
  l.etp = o.etp;
  l.first_stage_layers = o.first_stage_layers;
  l.last_stage_layers = o.last_stage_layers;
  l.embedding_slot = o.embedding_slot == 1;
  l.loss_slot = o.loss_slot == 1;
  switch (config::word_flag(parallelism::kPipelineSplitWords, o.pipeline_split, "--pipeline-split")) {
    case parallelism::PipelineSplit::Even:
      if (o.embedding_slot < 0 && o.loss_slot < 0) l = parallelism::with_recipe_pipeline_split(l, job.model.num_layers);
      break;
    case parallelism::PipelineSplit::DeepSpeed:
      // Either slot flag is DeepSpeed's '|embedding': both tied embedding layers weigh one.
      if (o.embedding_slot >= 0 && o.loss_slot >= 0 && o.embedding_slot != o.loss_slot) {
        throw core::InputError::flag("--pipeline-split",
                                     "deepspeed weighs both tied embedding layers or neither (partition_method "
                                     "type:transformer|embedding or type:transformer): the embedding and loss slot "
                                     "settings must agree");
      }
      l.greedy_split = l.pp > 1;
      l.embedding_slot = l.loss_slot = l.embedding_slot || l.loss_slot;
      break;
    case parallelism::PipelineSplit::Nanotron:
      if (l.pp > 1) l.balanced_head_layers = parallelism::compute_balanced_head_layers(job.model);
      break;
  }
  l.micro_batch = o.mbs;
  l.sequence_parallel = !o.no_sp && o.tp > 1;
  l.overlap_tp_comm = o.tp_overlap;
  l.sharding = config::word_flag(parallelism::kShardingWords, o.sharding, "--sharding");
  l.shard_group = o.shard_group;
  l.recompute = config::word_flag(parallelism::kRecomputeWords, o.recompute, "--recompute");
  for (const auto m :
       config::word_list_flag(parallelism::kRecomputeModuleWords, o.recompute_modules, "--recompute-modules")) {
    l.recompute_modules |= parallelism::module_bit(m);
  }
  if (l.recompute_modules != 0 && l.recompute != parallelism::Recompute::Selective) {
    // Megatron-Core reads recompute_modules only with recompute_granularity "selective".
    throw core::InputError::flag("--recompute-modules",
                                 fmt::format("applies to selective recompute (Megatron-Core's recompute_granularity "
                                             "selective); --recompute is {}",
                                             parallelism::to_string(l.recompute)));
  }
  l.offload_layers = o.activation_offload_layers;
  if (!(o.optimizer_offload_fraction >= 0.0 && o.optimizer_offload_fraction <= 1.0)) {
    throw core::InputError::flag("--optimizer-offload-fraction",
                                 fmt::format("{} is not a fraction; allowed: 0 to 1", o.optimizer_offload_fraction));
  }
  l.optimizer_offload_fraction = o.optimizer_offload_fraction;
  if (!(o.moe_capacity_factor >= 0.0 && o.moe_capacity_factor <= 64.0)) {
    throw core::InputError::flag("--moe-capacity-factor",
                                 fmt::format("{} is out of range; allowed: 0 (dropless) to 64", o.moe_capacity_factor));
  }
  if (o.moe_capacity_factor > 0.0 && !job.model.is_moe()) {
    throw core::InputError::flag(
        "--moe-capacity-factor",
        fmt::format("{} has no routed experts; the capacity factor applies to MoE models", job.model.name));
  }
  l.moe_capacity_factor = o.moe_capacity_factor;
  l.cuda_graphs = o.cuda_graphs;
  l.recipe = o.recipe;
  l.fp8_param_storage = o.fp8_params;
  l.bf16_grad_reduce = o.grad_reduce_in_bf16;
  l.bf16_optimizer_states = config::word_flag(core::kOptimizerDtypeWords, o.optimizer_dtype, "--optimizer-dtype");
  l.precision = config::word_flag(core::kTrainingPrecisionWords, o.precision, "--precision");
  l.fp8_recipe = fp8_recipe_flag(o.fp8_recipe);
  if (job.cluster.gpu.peak(l.precision).value() <= 0) {
    throw core::InputError::flag("--precision", fmt::format("{} has no {} tensor cores", job.cluster.gpu.display_name,
                                                            core::to_string(l.precision)));
  }
  l = parallelism::with_dp(l, job.job_gpus());
  if (!(o.expert_load_cv >= 0.0) || o.expert_load_cv > 10.0) {
    throw core::InputError::flag(
        "--expert-load-cv", fmt::format("{} is not a coefficient of variation; allowed: 0 to 10", o.expert_load_cv));
  }
  job.expert_load_factor = workload::expert_load_factor(job.model, l.ep, o.expert_load_cv);
  l.global_batch = o.gbs > 0 ? o.gbs : static_cast<long long>(l.micro_batch) * std::max(1, l.dp);
  if (auto why = parallelism::why_invalid(job.model, l, job.job_gpus(), job.seq_len)) {
    throw core::InputError::flag("layout", *why);
  }
  // The event simulation schedules every micro-batch of a step: 16 us and 2 KB each, so 2^16
  // (65536) of them per pipeline (1 s) is the most a prediction simulates.
  constexpr long long kMaxMicroBatches = 1LL << 16;
  const long long micro_batches = l.global_batch / (static_cast<long long>(l.micro_batch) * std::max(1, l.dp));
  if (micro_batches > kMaxMicroBatches) {
    throw core::InputError::flag("--gbs",
                                 fmt::format("global batch {} is {} micro-batches of {} per data-parallel rank; "
                                             "allowed: at most {} (raise --mbs or lower --gbs)",
                                             l.global_batch, micro_batches, l.micro_batch, kMaxMicroBatches));
  }
  return job;
}

std::vector<std::string> training_job_warnings(const TrainingJobFlags& f) {
  std::vector<std::string> out;
  if (f.vp > 1 && f.pp == 1) {
    out.push_back(fmt::format("--vp {} with --pp 1 has no pipeline to interleave; running vp 1", f.vp));
  }
  return out;
}

TrainingSetup resolve_training_job(TrainingJobFlags f, const hardware::Catalog& catalog, const FlagGiven& given) {
  apply_job_file(f, given);
  // Where neither a flag nor the job file says, the stack's conventions decide (megatron-legacy,
  // Megatron-LM of 2021-2022: no sequence parallelism, plain DDP).
  const parallelism::StackConventions conventions = parallelism::stack_conventions(f.stack);
  if (!conventions.sequence_parallel && !given("--no-sp") && !f.job_sets_sp) f.no_sp = true;
  if (conventions.default_sharding() == parallelism::Sharding::None && !given("--sharding") && !f.job_sets_sharding) {
    f.sharding = std::string(parallelism::to_string(parallelism::Sharding::None));
  }
  TrainingSetup s;
  s.job = make_training_job(f, catalog);
  if (conventions.fp16_grad_reduce_in_16_bits && s.job.layout.precision == core::Precision::FP16) {
    s.job.layout.bf16_grad_reduce = true;
  }
  s.warnings = training_job_warnings(f);
  auto& l = s.job.layout;
  const bool torchtitan = s.job.stack == parallelism::to_string(parallelism::Stack::TorchTitan);
  if (l.recipe.loss_chunks > 1 && !torchtitan) {
    s.warnings.push_back(
        fmt::format("--loss-chunks {}: a chunked loss with a backward per chunk is torchtitan's "
                    "(ChunkedLossWrapper); stack {} is taken to run one",
                    l.recipe.loss_chunks, s.job.stack));
  }
  if (torchtitan && l.precision == core::Precision::FP4) {
    s.warnings.push_back(
        "--precision fp4 under torchtitan (torchao's NVFP4 prototype): the activations per-op SAC keeps around its "
        "FP4 matrix products are not modelled; memory is estimated as for 16-bit products");
  }
  if (conventions.microbatches_equal_stages && !given("--mbs") && !f.job_sets_mbs) {
    // The stack's own split of each rank's batch where neither a flag nor the job file names a
    // micro-batch (torchtitan: pipeline_parallel_microbatches defaults to pp x stages per rank).
    if (const int mbs = parallelism::micro_batch_per_stage(l); mbs > l.micro_batch) {
      l.micro_batch = mbs;
      s.warnings.push_back(fmt::format(
          "--mbs not given: {} splits each data-parallel rank's {} sequences into {} micro-batches, one per "
          "pipeline stage (pp x vp), of {}",
          f.stack, l.global_batch / l.dp, l.micro_batches(), mbs));
    }
  }
  s.calibration = load_stack_calibration(f.calibration, s.job.stack);
  resolve_moe_dispatcher(s.job, s.calibration);
  return s;
}

training::Calibration load_stack_calibration(const std::string& file, const std::string& stack) {
  auto calibration = config::load_training_calibration(file);
  if (!calibration.stacks.count(stack)) {
    std::vector<std::string> names;
    for (const auto& [k, v] : calibration.stacks) names.push_back(k);
    throw core::InputError::flag("--stack", core::unknown_name_message("stack", stack, names));
  }
  return calibration;
}

core::Fp8Recipe fp8_recipe_flag(const std::string& value) {
  return config::word_flag(core::kFp8RecipeWords, value, "--fp8-recipe");
}

std::optional<training::MoeDispatcher> moe_dispatcher_flag(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return config::word_flag(training::kMoeDispatcherWords, value, "--moe-dispatcher");
}

void resolve_moe_dispatcher(training::TrainingJob& job, const training::Calibration& calibration) {
  if (job.model.is_moe() && !job.moe_dispatcher) job.moe_dispatcher = calibration.stack(job.stack).moe_dispatcher;
}

LoraFlags lora_flags(const std::string& task, int rank, const std::string& targets, const std::string& base) {
  LoraFlags f;
  f.task = config::word_flag(training::kTaskWords, task, "--task");
  f.rank = rank;
  for (const training::LoraModules m : config::word_list_flag(training::kLoraModuleWords, targets, "--lora-targets")) {
    f.targets |= static_cast<unsigned>(m);
  }
  if (f.targets == 0) {
    throw core::InputError::flag("--lora-targets", "expected one or more of: " + training::kLoraModuleWords.allowed());
  }
  f.base = config::word_flag(training::kLoraBaseWords, base, "--lora-base");
  const bool base_set = f.base != training::LoraBase::Bf16;
  if (f.task != training::Task::Lora &&
      (base_set || f.targets != static_cast<unsigned>(training::LoraModules::AllLinear))) {
    throw core::InputError::flag(base_set ? "--lora-base" : "--lora-targets",
                                 "applies to --task lora only (the task is " + task + ")");
  }
  return f;
}

}  // namespace fmsim::jobspec
