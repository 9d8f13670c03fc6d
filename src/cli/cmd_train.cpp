// fmsim train: predict one training step of a model on a cluster with a parallel layout.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/train_report.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "config/yaml_reader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "engine/trace.hpp"
#include "observability/chrome_trace.hpp"
#include "observability/prometheus.hpp"
#include "training/comm_adapter.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {
namespace {

struct TrainOptions {
  std::string job_file;
  std::string model = "llama3.1-8b";
  std::string cluster = "p5.48xlarge:1";
  int gpus = 0;
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, etp = 1;
  int mbs = 1;
  long long gbs = 0;
  long long seq = 4096;
  std::string precision = "bf16";
  std::string recompute = "selective";
  std::string sharding = "zero1";
  int shard_group = 0;
  std::string stack = "megatron";
  std::string task = "pretrain";
  bool no_sp = false;
  std::string power_limit;
  bool tp_overlap = false;
  bool analytical = false;
  bool json = false;
  std::string trace;
  std::string metrics;
  std::string calibration;
};

parallelism::Sharding parse_sharding(const std::string& s, const std::string& flag) {
  const std::string v = core::to_lower(s);
  if (v == "ddp" || v == "none") return parallelism::Sharding::None;
  if (v == "zero1" || v == "distopt" || v == "distributed-optimizer") return parallelism::Sharding::DistributedOptimizer;
  if (v == "zero2" || v == "shard-grad-op") return parallelism::Sharding::Zero2;
  if (v == "zero3" || v == "fsdp" || v == "full-shard") return parallelism::Sharding::Zero3;
  throw core::InputError::flag(flag, "'" + s + "' is not a sharding; allowed: ddp, zero1, zero2, zero3 (fsdp)");
}

parallelism::Recompute parse_recompute(const std::string& s, const std::string& flag) {
  const std::string v = core::to_lower(s);
  if (v == "none") return parallelism::Recompute::None;
  if (v == "selective") return parallelism::Recompute::Selective;
  if (v == "full") return parallelism::Recompute::Full;
  throw core::InputError::flag(flag, "'" + s + "' is not a recompute policy; allowed: none, selective, full");
}

training::Task parse_task(const std::string& s, const std::string& flag) {
  const std::string v = core::to_lower(s);
  if (v == "pretrain") return training::Task::Pretrain;
  if (v == "sft") return training::Task::Sft;
  if (v == "lora") return training::Task::Lora;
  throw core::InputError::flag(flag, "'" + s + "' is not a task; allowed: pretrain, sft, lora");
}

// A job file holds the same settings as the flags, as YAML (kind: TrainingJob).
void apply_job_file(TrainOptions& o, CLI::App& cmd) {
  const auto doc = config::load_yaml_file(o.job_file, "--job");
  const auto root = doc.node();
  root.check_keys({"kind", "model", "cluster", "gpus", "parallelism", "batch", "seq_len", "precision", "recompute",
                   "stack", "task"});
  if (const auto k = root.find("kind"); k && k->as_string() != "TrainingJob") k->fail("expected kind: TrainingJob");
  auto flag_given = [&](const char* name) { return cmd.count(name) > 0; };
  if (const auto n = root.find("model"); n && !flag_given("--model")) o.model = n->as_string();
  if (const auto n = root.find("cluster"); n && !flag_given("--cluster")) o.cluster = n->as_string();
  if (const auto n = root.find("gpus"); n && !flag_given("--gpus")) o.gpus = n->as_int(config::Bound::Positive);
  if (const auto n = root.find("seq_len"); n && !flag_given("--seq")) o.seq = n->as_int(config::Bound::Positive);
  if (const auto n = root.find("precision"); n && !flag_given("--precision")) o.precision = n->as_enum({"bf16", "fp16", "fp8", "fp4"});
  if (const auto n = root.find("recompute"); n && !flag_given("--recompute")) o.recompute = n->as_enum({"none", "selective", "full"});
  if (const auto n = root.find("stack"); n && !flag_given("--stack")) o.stack = n->as_string();
  if (const auto n = root.find("task"); n && !flag_given("--task")) o.task = n->as_enum({"pretrain", "sft", "lora"});
  if (const auto p = root.find("parallelism")) {
    p->check_keys({"tp", "pp", "vp", "cp", "ep", "etp", "sequence_parallel", "sharding", "shard_group", "tp_overlap"});
    auto set = [&](const char* key, const char* flag, int& into) {
      if (const auto n = p->find(key); n && !flag_given(flag)) into = n->as_int(config::Bound::Positive);
    };
    set("tp", "--tp", o.tp);
    set("pp", "--pp", o.pp);
    set("vp", "--vp", o.vp);
    set("cp", "--cp", o.cp);
    set("ep", "--ep", o.ep);
    set("etp", "--etp", o.etp);
    if (const auto n = p->find("shard_group"); n && !flag_given("--shard-group")) o.shard_group = n->as_int(config::Bound::NonNegative);
    if (const auto n = p->find("sequence_parallel"); n && !flag_given("--no-sp")) o.no_sp = !n->as_bool();
    if (const auto n = p->find("tp_overlap"); n && !flag_given("--tp-overlap")) o.tp_overlap = n->as_bool();
    if (const auto n = p->find("sharding"); n && !flag_given("--sharding")) o.sharding = n->as_enum({"ddp", "zero1", "zero2", "zero3", "fsdp"});
  }
  if (const auto b = root.find("batch")) {
    b->check_keys({"global", "micro"});
    if (const auto n = b->find("global"); n && !flag_given("--gbs")) o.gbs = n->as_int(config::Bound::Positive);
    if (const auto n = b->find("micro"); n && !flag_given("--mbs")) o.mbs = n->as_int(config::Bound::Positive);
  }
}

std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:5.1f}%", 100.0 * part / whole) : ""; }

}  // namespace

void print_step(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& l = job.layout;
  const auto& c = job.cluster;
  fmt::print("fmsim train: {} on {} x {} ({} x {}, {} GPUs used)\n", job.model.name, c.count, c.system.name, c.gpus(),
             c.gpu.display_name, job.job_gpus());
  fmt::print("layout      tp{} pp{} vp{} cp{} ep{} etp{} dp{}{} | mbs {} gbs {} ({} micro-batches) | seq {} | {} | "
             "recompute {} | {} | stack {}\n",
             l.tp, l.pp, l.vp, l.cp, l.ep, l.etp, l.dp, l.sequence_parallel && l.tp > 1 ? " +sp" : "", l.micro_batch,
             l.global_batch, r.micro_batches, job.seq_len, core::to_string(l.precision), parallelism::to_string(l.recompute),
             parallelism::to_string(l.sharding), job.stack);
  const double step = r.step_time.value();
  fmt::print("\n{:<24}{:>14}\n", "step time", core::format_duration(r.step_time));
  fmt::print("{:<24}{:>14.0f}\n", "tokens/s/GPU", r.tokens_per_s_per_gpu);
  fmt::print("{:<24}{:>14.1f}\n", "model TFLOP/s/GPU", r.model_tflops_per_gpu);
  fmt::print("{:<24}{:>13.1f}%  (of the {} dense peak)\n", "MFU", 100.0 * r.mfu, core::to_string(l.precision));
  fmt::print("\nwhere the time goes (critical path)\n");
  const auto& b = r.breakdown;
  const std::pair<const char*, core::Seconds> rows[] = {
      {"compute", b.compute},        {"exposed TP comm", b.tp_comm}, {"exposed CP comm", b.cp_comm},
      {"exposed EP all-to-all", b.ep_comm}, {"exposed PP send/recv", b.pp_comm}, {"exposed DP/FSDP comm", b.dp_comm},
      {"pipeline bubble", b.bubble}, {"optimizer", b.optimizer},       {"other (framework)", b.other}};
  for (const auto& [name, t] : rows) {
    fmt::print("  {:<24}{:>12}  {}\n", name, core::format_duration(t), pct(t.value(), step));
  }
  const auto& m = r.memory;
  fmt::print("\nmemory per GPU (first pipeline stage)  {} of {} usable: {}\n", core::format_bytes(m.total()),
             core::format_bytes(r.memory_capacity), r.fits_memory ? "fits" : "DOES NOT FIT (out of memory)");
  const std::pair<const char*, core::Bytes> mem[] = {{"weights", m.weights},         {"gradients", m.gradients},
                                                    {"optimizer states", m.optimizer}, {"activations", m.activations},
                                                    {"buffers", m.buffers},           {"context + fragmentation", m.overhead}};
  for (const auto& [name, v] : mem) fmt::print("  {:<24}{:>12}\n", name, core::format_bytes(v));
  if (r.simulated_tasks > 0) fmt::print("\n(discrete-event simulation of {} tasks)\n", r.simulated_tasks);
}

namespace {

nlohmann::json to_json(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& l = job.layout;
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  return nlohmann::json{
      {"model", job.model.name},
      {"system", job.cluster.system.name},
      {"gpus", job.job_gpus()},
      {"layout",
       {{"tp", l.tp}, {"pp", l.pp}, {"vp", l.vp}, {"cp", l.cp}, {"ep", l.ep}, {"etp", l.etp}, {"dp", l.dp},
        {"sequence_parallel", l.sequence_parallel}, {"micro_batch", l.micro_batch}, {"global_batch", l.global_batch},
        {"micro_batches", r.micro_batches}, {"seq_len", job.seq_len}, {"precision", core::to_string(l.precision)},
        {"recompute", parallelism::to_string(l.recompute)}, {"sharding", parallelism::to_string(l.sharding)},
        {"stack", job.stack}}},
      {"step_time_s", r.step_time.value()},
      {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
      {"model_tflops_per_gpu", r.model_tflops_per_gpu},
      {"mfu", r.mfu},
      {"breakdown_s",
       {{"compute", b.compute.value()}, {"tp_comm", b.tp_comm.value()}, {"cp_comm", b.cp_comm.value()},
        {"ep_comm", b.ep_comm.value()}, {"pp_comm", b.pp_comm.value()}, {"dp_comm", b.dp_comm.value()},
        {"bubble", b.bubble.value()}, {"optimizer", b.optimizer.value()}, {"other", b.other.value()}}},
      {"memory_bytes",
       {{"weights", m.weights.value()}, {"gradients", m.gradients.value()}, {"optimizer", m.optimizer.value()},
        {"activations", m.activations.value()}, {"buffers", m.buffers.value()}, {"overhead", m.overhead.value()},
        {"total", m.total().value()}, {"capacity", r.memory_capacity.value()}}},
      {"fits_memory", r.fits_memory},
      {"comm_bytes_per_gpu",
       {{"tp", r.comm.tp.value()}, {"cp", r.comm.cp.value()}, {"ep", r.comm.ep.value()}, {"pp", r.comm.pp.value()},
        {"dp", r.comm.dp.value()}}},
      {"simulated_tasks", r.simulated_tasks}};
}

std::vector<observability::Metric> to_metrics(const training::TrainingJob& job, const training::StepResult& r) {
  using observability::gauge;
  const std::vector<std::pair<std::string, std::string>> labels{{"model", job.model.name},
                                                                {"system", job.cluster.system.name}};
  auto with = [&](std::vector<std::pair<std::string, std::string>> extra) {
    auto all = labels;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  std::vector<observability::Metric> out;
  out.push_back(gauge("fmsim_step_time_seconds", "Predicted time of one optimizer step", r.step_time.value(), labels));
  out.push_back(gauge("fmsim_tokens_per_second_per_gpu", "Predicted training throughput per GPU", r.tokens_per_s_per_gpu, labels));
  out.push_back(gauge("fmsim_model_flops_utilization_ratio", "Model FLOPs utilisation (0-1)", r.mfu, labels));
  const auto& b = r.breakdown;
  const std::pair<const char*, core::Seconds> parts[] = {
      {"compute", b.compute}, {"tp_comm", b.tp_comm}, {"cp_comm", b.cp_comm}, {"ep_comm", b.ep_comm},
      {"pp_comm", b.pp_comm}, {"dp_comm", b.dp_comm}, {"bubble", b.bubble}, {"optimizer", b.optimizer},
      {"other", b.other}};
  for (const auto& [k, v] : parts) {
    out.push_back(gauge("fmsim_step_time_breakdown_seconds", "Critical-path time of one step by component", v.value(),
                        with({{"component", k}})));
  }
  const auto& m = r.memory;
  const std::pair<const char*, core::Bytes> mem[] = {{"weights", m.weights},     {"gradients", m.gradients},
                                                    {"optimizer", m.optimizer}, {"activations", m.activations},
                                                    {"buffers", m.buffers},     {"overhead", m.overhead}};
  for (const auto& [k, v] : mem) {
    out.push_back(gauge("fmsim_memory_bytes", "Predicted memory per GPU by kind", v.value(), with({{"kind", k}})));
  }
  out.push_back(gauge("fmsim_memory_capacity_bytes", "Usable HBM per GPU", r.memory_capacity.value(), labels));
  return out;
}

}  // namespace

void add_train_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<TrainOptions>();
  auto* cmd = app.add_subcommand("train", "Predict one training step: time, throughput, MFU, breakdown, memory");
  cmd->footer(
      "The step is simulated event by event over per-stage streams (compute, tp, ep, pp, dp) of one\n"
      "representative rank per pipeline stage; --analytical uses the closed-form schedule instead.\n"
      "MFU = model FLOPs (Megatron formula, no recompute) / (step time x GPUs x dense peak).\n\n"
      "Examples:\n"
      "  fmsim train --model llama3.1-70b --cluster p5.48xlarge:64 --tp 8 --pp 4 --vp 5 --gbs 512 \\\n"
      "              --mbs 1 --seq 8192 --precision fp8 --recompute selective\n"
      "  fmsim train --job examples/llama70b_job.yaml --trace step.json");
  cmd->add_option("--job", opts->job_file, "YAML job file (kind: TrainingJob); flags override its values")
      ->check(CLI::ExistingFile);
  cmd->add_option("--model", opts->model, "Preset name (fmsim models) or a Hugging Face config.json")->capture_default_str();
  cmd->add_option("--cluster", opts->cluster, "SYSTEM:COUNT (p5.48xlarge:64, u-p6e-gb200x72:4) or a cluster YAML")
      ->capture_default_str();
  cmd->add_option("--gpus", opts->gpus, "GPUs the job uses (default: the whole cluster)")->check(CLI::PositiveNumber);
  cmd->add_option("--tp", opts->tp, "Tensor-parallel size")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--pp", opts->pp, "Pipeline-parallel size")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--vp", opts->vp, "Virtual pipeline stages per rank (interleaved 1F1B)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--cp", opts->cp, "Context-parallel size")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--ep", opts->ep, "Expert-parallel size (MoE)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--etp", opts->etp, "Expert tensor-parallel size (MoE)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--mbs", opts->mbs, "Micro-batch size (sequences)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--gbs", opts->gbs, "Global batch size (sequences; default: micro-batch x dp)")->check(CLI::PositiveNumber);
  cmd->add_option("--seq", opts->seq, "Sequence length (tokens)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--precision", opts->precision, "Compute precision: bf16, fp16, fp8, fp4")->capture_default_str();
  cmd->add_option("--recompute", opts->recompute, "Activation recomputation: none, selective, full")->capture_default_str();
  cmd->add_option("--sharding", opts->sharding, "ddp, zero1 (distributed optimizer), zero2, zero3/fsdp")->capture_default_str();
  cmd->add_option("--shard-group", opts->shard_group, "FSDP hybrid sharding group size (0 = all DP ranks)");
  cmd->add_option("--stack", opts->stack, "Software stack calibration: megatron, torchtitan, llm-foundry")->capture_default_str();
  cmd->add_option("--task", opts->task, "pretrain, sft or lora")->capture_default_str();
  cmd->add_flag("--no-sp", opts->no_sp, "Disable sequence parallelism");
  cmd->add_option("--power-limit", opts->power_limit, "GPU power cap, e.g. 500W (default: TDP)");
  cmd->add_flag("--tp-overlap", opts->tp_overlap, "Overlap TP communication with GEMMs (userbuffers / async TP)");
  cmd->add_flag("--analytical", opts->analytical, "Closed-form schedule instead of the event simulation");
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  cmd->add_option("--trace", opts->trace, "Write a Chrome/Perfetto trace of the step (JSON)");
  cmd->add_option("--metrics", opts->metrics, "Write the predictions in Prometheus text format");
  cmd->add_option("--calibration", opts->calibration, "Calibration YAML replacing data/calibration/training.yaml")
      ->check(CLI::ExistingFile);

  cmd->callback([opts, &ctx, cmd]() {
    TrainOptions o = *opts;
    if (!o.job_file.empty()) apply_job_file(o, *cmd);
    training::TrainingJob job;
    job.model = config::load_model(o.model);
    job.cluster = config::parse_cluster(ctx.catalog(), o.cluster);
    job.gpus = o.gpus;
    if (!o.power_limit.empty()) {
      const auto p = core::parse_power(o.power_limit);
      if (!p || p.value->value() <= 0) {
        throw core::InputError::flag("--power-limit", p ? "must be positive" : p.error);
      }
      job.cluster.gpu.power_limit = *p.value;
    }
    if (o.gpus > job.cluster.gpus()) {
      throw core::InputError::flag("--gpus", fmt::format("{} GPUs requested but the cluster has {}", o.gpus, job.cluster.gpus()));
    }
    job.seq_len = o.seq;
    job.stack = o.stack;
    job.task = parse_task(o.task, "--task");
    auto& l = job.layout;
    l.tp = o.tp;
    l.pp = o.pp;
    l.vp = o.vp;
    l.cp = o.cp;
    l.ep = o.ep;
    l.etp = o.etp;
    l.micro_batch = o.mbs;
    l.sequence_parallel = !o.no_sp && o.tp > 1;
    l.overlap_tp_comm = o.tp_overlap;
    l.sharding = parse_sharding(o.sharding, "--sharding");
    l.shard_group = o.shard_group;
    l.recompute = parse_recompute(o.recompute, "--recompute");
    const auto prec = core::parse_precision(o.precision);
    if (!prec) throw core::InputError::flag("--precision", "'" + o.precision + "' is not a precision; allowed: bf16, fp16, fp8, fp4");
    l.precision = *prec;
    if (job.cluster.gpu.peak(l.precision).value() <= 0) {
      throw core::InputError::flag("--precision", fmt::format("{} has no {} tensor cores", job.cluster.gpu.display_name,
                                                              core::to_string(l.precision)));
    }
    l = parallelism::with_dp(l, job.job_gpus());
    l.global_batch = o.gbs > 0 ? o.gbs : static_cast<long long>(l.micro_batch) * std::max(1, l.dp);
    if (auto why = parallelism::why_invalid(job.model, l, job.job_gpus(), job.seq_len)) {
      throw core::InputError::flag("layout", *why);
    }
    const auto calibration = config::load_training_calibration(o.calibration);
    if (!calibration.stacks.count(job.stack)) {
      std::vector<std::string> names;
      for (const auto& [k, v] : calibration.stacks) names.push_back(k);
      throw core::InputError::flag("--stack", core::unknown_name_message("stack", job.stack, names));
    }
    const auto comm = training::make_comm_cost(job.cluster);
    engine::TraceBuffer buffer;
    const auto result = o.analytical ? training::estimate_step(job, calibration, comm)
                                     : training::simulate_step(job, calibration, comm, o.trace.empty() ? nullptr : &buffer);
    if (!o.trace.empty()) {
      observability::TraceMetadata meta;
      meta.other_data = {{"model", job.model.name}, {"system", job.cluster.system.name},
                         {"step_time_s", fmt::format("{:.6f}", result.step_time.value())}};
      write_file_atomically(o.trace, observability::to_chrome_trace_json(buffer.events(), meta), "--trace");
    }
    if (!o.metrics.empty()) {
      write_file_atomically(o.metrics, observability::to_prometheus_text(to_metrics(job, result)), "--metrics");
    }
    if (o.json) {
      std::cout << to_json(job, result).dump(2) << "\n";
    } else {
      print_step(job, result);
    }
  });
}

}  // namespace fmsim::cli
