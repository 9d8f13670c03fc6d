// fmsim train: predict one training step of a model on a cluster with a parallel layout.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/train_report.hpp"
#include "cli/training_job_flags.hpp"
#include "collectives/comm_cost.hpp"
#include "core/strings.hpp"
#include "engine/trace.hpp"
#include "observability/chrome_trace.hpp"
#include "observability/prometheus.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {
namespace {

struct TrainOptions {
  jobspec::TrainingJobFlags job;
  bool analytical = false;
  bool json = false;
  std::string trace;
  std::string metrics;
};

std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:5.1f}%", 100.0 * part / whole) : ""; }

}  // namespace

std::string job_line(const training::TrainingJob& job) {
  const auto& c = job.cluster;
  return fmt::format("{} on {} x {} ({} x {}, {} GPUs used)", job.model.name, c.count, c.system.name, c.gpus(),
                     c.gpu.display_name, job.job_gpus());
}

// How the layers split over the pipeline when not evenly by count: " | pipeline slots embedding+loss"
// (Megatron's account_for_*_in_pipeline_split) or " | first stage N layers, last stage M".
// " (mlp, moe_act)" after "selective" when explicit recompute_modules are set.
static std::string recompute_modules_note(const parallelism::Layout& l) {
  std::vector<std::string> names;
  for (const auto& w : parallelism::kRecomputeModuleWords.words()) {
    if (l.recomputes(w.value)) names.emplace_back(w.name);
  }
  return names.empty() ? std::string() : " (" + core::join(names, ", ") + ")";
}

static parallelism::PipelineSplit pipeline_split_of(const parallelism::Layout& l) {
  return l.greedy_split                 ? parallelism::PipelineSplit::DeepSpeed
         : l.balanced_head_layers > 0.0 ? parallelism::PipelineSplit::Nanotron
                                        : parallelism::PipelineSplit::Even;
}

static std::string pipeline_split_note(const parallelism::Layout& l) {
  std::string out;
  if (const auto split = pipeline_split_of(l); split != parallelism::PipelineSplit::Even)
    out += fmt::format(" | {} pipeline split", parallelism::kPipelineSplitWords.name(split));
  if (l.embedding_slot || l.loss_slot) {
    out += fmt::format(" | pipeline slots {}", l.embedding_slot && l.loss_slot ? "embedding+loss"
                                               : l.embedding_slot              ? "embedding"
                                                                               : "loss");
  }
  if (l.first_stage_layers > 0) out += fmt::format(" | first stage {} layers", l.first_stage_layers);
  if (l.last_stage_layers > 0) out += fmt::format(" | last stage {} layers", l.last_stage_layers);
  return out;
}

// The step-wide switches of Megatron-Bridge's MoE recipes, as " | ..." when any is on.
std::string overlap_note(const parallelism::Layout& l) {
  std::string out;
  if (l.recipe.full_iteration_graph) out += " | full-iteration CUDA graph";
  if (l.recipe.overlap_ep_comm) out += " | MoE a2a overlap";
  if (l.recipe.fused_grouped_mlp) out += " | fused grouped MLP";
  if (l.recipe.fp8_attention) out += " | FP8 attention";
  if (l.recipe.compiled_loss) out += " | compiled loss";
  if (l.recipe.loss_chunks > 1) out += fmt::format(" | loss in {} chunks", l.recipe.loss_chunks);
  return out;
}

std::string layout_line(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& l = job.layout;
  return fmt::format(
             "layout      tp{} pp{} vp{} cp{} ep{} etp{} dp{}{} | mbs {} gbs {} ({} micro-batches) | seq {}{} | {} | "
             "recompute {}{} | {} | stack {}",
             l.tp, l.pp, l.vp, l.cp, l.ep, l.etp, l.dp, l.sequence_parallel && l.tp > 1 ? " +sp" : "", l.micro_batch,
             l.global_batch, r.micro_batches, job.seq_len,
             job.document_tokens > 0 ? fmt::format(" (packed documents of {} tokens)", job.document_tokens) : "",
             core::precision_label(l.precision, l.fp8_recipe), parallelism::to_string(l.recompute),
             recompute_modules_note(l), parallelism::to_string(l.sharding), job.stack) +
         (job.model.is_moe() && job.moe_dispatcher ? fmt::format(" | moe dispatch {}", to_string(*job.moe_dispatcher))
                                                   : std::string()) +
         (job.task == training::Task::Lora
              ? fmt::format(" | lora r{} {} base {}", job.lora_rank, training::lora_targets_label(job.lora_targets),
                            training::kLoraBaseWords.name(job.lora_base))
              : std::string()) +
         pipeline_split_note(l) + overlap_note(l);
}

nlohmann::json layout_json(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& l = job.layout;
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"vp", l.vp},
          {"cp", l.cp},
          {"ep", l.ep},
          {"etp", l.etp},
          {"dp", l.dp},
          {"sequence_parallel", l.sequence_parallel},
          {"micro_batch", l.micro_batch},
          {"global_batch", l.global_batch},
          {"micro_batches", r.micro_batches},
          {"seq_len", job.seq_len},
          {"document_tokens", job.document_tokens > 0 ? nlohmann::json(job.document_tokens) : nlohmann::json()},
          {"precision", core::to_string(l.precision)},
          {"fp8_recipe",
           l.precision == core::Precision::FP8 ? nlohmann::json(core::to_string(l.fp8_recipe)) : nlohmann::json()},
          {"recompute", parallelism::to_string(l.recompute)},
          {"recompute_modules",
           [&l] {
             nlohmann::json a = nlohmann::json::array();
             for (const auto& w : parallelism::kRecomputeModuleWords.words())
               if (l.recomputes(w.value)) a.push_back(std::string(w.name));
             return a;
           }()},
          {"sharding", parallelism::to_string(l.sharding)},
          {"full_iteration_cuda_graph", l.recipe.full_iteration_graph},
          {"moe_a2a_overlap", l.recipe.overlap_ep_comm},
          {"fused_grouped_mlp", l.recipe.fused_grouped_mlp},
          {"fp8_attention", l.recipe.fp8_attention},
          {"compile_loss", l.recipe.compiled_loss},
          {"loss_chunks", l.recipe.loss_chunks},
          {"stack", job.stack},
          {"pipeline_split", parallelism::kPipelineSplitWords.name(pipeline_split_of(l))},
          {"account_for_embedding_in_pipeline_split", l.embedding_slot},
          {"account_for_loss_in_pipeline_split", l.loss_slot},
          {"decoder_first_pipeline_num_layers",
           l.first_stage_layers > 0 ? nlohmann::json(l.first_stage_layers) : nlohmann::json()},
          {"decoder_last_pipeline_num_layers",
           l.last_stage_layers > 0 ? nlohmann::json(l.last_stage_layers) : nlohmann::json()},
          {"moe_dispatcher", job.model.is_moe() && job.moe_dispatcher ? nlohmann::json(to_string(*job.moe_dispatcher))
                                                                      : nlohmann::json()},
          {"task", training::kTaskWords.name(job.task)},
          {"lora", job.task == training::Task::Lora
                       ? nlohmann::json{{"rank", job.lora_rank},
                                        {"targets", training::lora_targets_label(job.lora_targets)},
                                        {"base", training::kLoraBaseWords.name(job.lora_base)}}
                       : nlohmann::json()}};
}

void print_step(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& l = job.layout;
  fmt::print("fmsim train: {}\n{}\n", job_line(job), layout_line(job, r));
  const double step = r.step_time.value();
  fmt::print("\n{:<24}{:>14}\n", "step time", core::format_duration(r.step_time));
  fmt::print("{:<24}{:>14.0f}\n", "tokens/s/GPU", r.tokens_per_s_per_gpu);
  fmt::print("{:<24}{:>14.1f}\n", "model TFLOP/s/GPU", r.model_tflops_per_gpu);
  fmt::print("{:<24}{:>13.1f}%  (of the {} dense peak)\n", "MFU", 100.0 * r.mfu, core::to_string(l.precision));
  fmt::print("\nwhere the time goes (critical path)\n");
  const auto& b = r.breakdown;
  const std::pair<const char*, core::Seconds> rows[] = {{"compute", b.compute},
                                                        {"exposed TP comm", b.tp_comm},
                                                        {"exposed CP comm", b.cp_comm},
                                                        {"exposed EP all-to-all", b.ep_comm},
                                                        {"exposed PP send/recv", b.pp_comm},
                                                        {"exposed DP/FSDP comm", b.dp_comm},
                                                        {"pipeline bubble", b.bubble},
                                                        {"optimizer", b.optimizer},
                                                        {"host offload", b.offload},
                                                        {"other (framework)", b.other}};
  for (const auto& [name, t] : rows) {
    fmt::print("  {:<24}{:>12}  {}\n", name, core::format_duration(t), pct(t.value(), step));
  }
  const auto& m = r.memory;
  fmt::print("\nmemory per GPU  {} of {} usable: {}\n", core::format_bytes(m.total()),
             core::format_bytes(r.memory_capacity), r.fits_memory ? "fits" : "DOES NOT FIT (out of memory)");
  fmt::print("  peak on pipeline stage {} of {}: {}\n", m.peak_stage, l.pp, training::memory_peak_phase(job, m));
  const int best_mbs = training::largest_fitting_micro_batch(job);
  fmt::print("  largest micro-batch that fits: {}\n",
             best_mbs > 0 ? fmt::format("{}", best_mbs) : std::string("none (not even 1 sequence)"));
  const std::pair<const char*, core::Bytes> mem[] = {
      {"weights", m.weights},         {"gradients", m.gradients}, {"optimizer states", m.optimizer},
      {"activations", m.activations}, {"buffers", m.buffers},     {"context + fragmentation", m.overhead}};
  for (const auto& [name, v] : mem) {
    fmt::print("  {:<24}{:>12}\n", name, core::format_bytes(v));
    // At the optimizer step's peak the activations are freed; say what they were at the backward's.
    if (std::string_view(name) == "activations" && m.optimizer_step_peak && m.backward_activations.value() > 0)
      fmt::print("  {:<24}{:>12}\n", "  at the backward peak", core::format_bytes(m.backward_activations));
  }
  // Parts of the rows above: NCCL's buffers (context), CUDA graphs' static buffers (buffers).
  fmt::print("  {:<24}{:>12}\n", "  of which NCCL buffers", core::format_bytes(m.nccl));
  if (m.cuda_graphs.value() > 0)
    fmt::print("  {:<24}{:>12}\n", "CUDA-graph buffers", core::format_bytes(m.cuda_graphs));
  if (m.host.value() > 0) fmt::print("  {:<24}{:>12}\n", "in host memory", core::format_bytes(m.host));
  if (r.simulated_tasks > 0) fmt::print("\n(discrete-event simulation of {} tasks)\n", r.simulated_tasks);
}

namespace {

nlohmann::json train_json(const training::TrainingJob& job, const training::StepResult& r) {
  const auto& b = r.breakdown;
  const auto& m = r.memory;
  return nlohmann::json{{"model", job.model.name},
                        {"system", job.cluster.system.name},
                        {"gpus", job.job_gpus()},
                        {"layout", layout_json(job, r)},
                        {"step_time_s", r.step_time.value()},
                        {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
                        {"model_tflops_per_gpu", r.model_tflops_per_gpu},
                        {"mfu", r.mfu},
                        {"breakdown_s",
                         {{"compute", b.compute.value()},
                          {"tp_comm", b.tp_comm.value()},
                          {"cp_comm", b.cp_comm.value()},
                          {"ep_comm", b.ep_comm.value()},
                          {"pp_comm", b.pp_comm.value()},
                          {"dp_comm", b.dp_comm.value()},
                          {"bubble", b.bubble.value()},
                          {"optimizer", b.optimizer.value()},
                          {"offload", b.offload.value()},
                          {"other", b.other.value()}}},
                        {"memory_bytes",
                         {{"weights", m.weights.value()},
                          {"gradients", m.gradients.value()},
                          {"optimizer", m.optimizer.value()},
                          {"activations", m.activations.value()},
                          {"backward_activations", m.backward_activations.value()},
                          {"buffers", m.buffers.value()},
                          {"overhead", m.overhead.value()},
                          {"nccl", m.nccl.value()},
                          {"cuda_graphs", m.cuda_graphs.value()},
                          {"embedding_grad", m.embedding_grad.value()},
                          {"host", m.host.value()},
                          {"total", m.total().value()},
                          {"capacity", r.memory_capacity.value()}}},
                        {"fits_memory", r.fits_memory},
                        {"memory_peak",
                         {{"stage", m.peak_stage},
                          {"phase", training::memory_peak_phase(job, m)},
                          {"micro_batches_in_flight", m.in_flight},
                          {"largest_fitting_micro_batch", training::largest_fitting_micro_batch(job)}}},
                        {"comm_bytes_per_gpu",
                         {{"tp", r.comm.tp.value()},
                          {"cp", r.comm.cp.value()},
                          {"ep", r.comm.ep.value()},
                          {"pp", r.comm.pp.value()},
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
  out.push_back(gauge("fmsim_tokens_per_second_per_gpu", "Predicted training throughput per GPU",
                      r.tokens_per_s_per_gpu, labels));
  out.push_back(gauge("fmsim_model_flops_utilization_ratio", "Model FLOPs utilisation (0-1)", r.mfu, labels));
  const auto& b = r.breakdown;
  const std::pair<const char*, core::Seconds> parts[] = {
      {"compute", b.compute}, {"tp_comm", b.tp_comm},     {"cp_comm", b.cp_comm},
      {"ep_comm", b.ep_comm}, {"pp_comm", b.pp_comm},     {"dp_comm", b.dp_comm},
      {"bubble", b.bubble},   {"optimizer", b.optimizer}, {"other", b.other}};
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
      "  fmsim train --job examples/llama70b_job.yaml --trace-out step.json");
  add_training_job_flags(*cmd, opts->job);
  cmd->add_flag("--analytical", opts->analytical, "Closed-form schedule instead of the event simulation");
  cmd->add_flag("--json", opts->json, "Machine-readable output");
  cmd->add_option("--trace-out,--trace", opts->trace,
                  "Write a Chrome/Perfetto trace of the step (JSON; --trace is the older name)")
      ->check(output_file());
  cmd->add_option("--metrics", opts->metrics, "Write the predictions in Prometheus text format")->check(output_file());

  cmd->callback([opts, &ctx, cmd]() {
    TrainOptions o = *opts;
    const jobspec::TrainingSetup setup = jobspec::resolve_training_job(o.job, ctx.catalog(), given_on(*cmd));
    print_warnings(setup.warnings);
    const training::TrainingJob& job = setup.job;
    const training::Calibration& calibration = setup.calibration;
    const auto comm = collectives::make_comm_cost(job.cluster);
    engine::TraceBuffer buffer;
    const auto result = o.analytical
                            ? training::estimate_step(job, calibration, comm)
                            : training::simulate_step(job, calibration, comm, o.trace.empty() ? nullptr : &buffer);
    if (!o.trace.empty()) {
      observability::TraceMetadata meta;
      meta.other_data = {{"model", job.model.name},
                         {"system", job.cluster.system.name},
                         {"step_time_s", fmt::format("{:.6f}", result.step_time.value())}};
      write_file_atomically(o.trace, observability::to_chrome_trace_json(buffer.events(), meta), "--trace-out");
    }
    if (!o.metrics.empty()) {
      write_file_atomically(o.metrics, observability::to_prometheus_text(to_metrics(job, result)), "--metrics");
    }
    if (o.json) {
      auto j = train_json(job, result);
      if (!setup.warnings.empty()) j["warnings"] = setup.warnings;
      std::cout << j.dump(2) << "\n";
    } else {
      print_step(job, result);
    }
  });
}

}  // namespace fmsim::cli
