// Published per-GPU memory rows -> jobs, the framework's memory conventions and the quantity measured.
#include "config/memory_csv.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::config {
namespace {

bool has(const std::string& cell, std::string_view needle) {
  return core::to_lower(cell).find(needle) != std::string::npos;
}

// The memory conventions a row's cells name. Starts from the software stack's
// (parallelism::stack_memory_options) and applies what the framework, precision and optimizer
// cells say; bytes per parameter follow each framework's documented optimizer layout.
parallelism::MemoryOptions options_of(const MemoryRow& r, const std::string& stack) {
  auto o = parallelism::stack_memory_options(stack);
  const std::string fw = core::to_lower(r.framework);
  const std::string notes = core::to_lower(r.precision + " " + r.optimizer + " " + r.sharding);
  // Only NeMo / Megatron-Bridge recipes fuse the loss with Transformer Engine.
  if (!has(fw, "nemo") && !has(fw, "bridge")) o.fused_cross_entropy = false;
  const bool compiled_loss =
      (has(fw, "compile") && has(fw, "loss")) || (r.run.job && r.run.job->layout.recipe.compiled_loss);
  // The framework cell ("+ compile (loss compiled)") or recipe_settings compile_loss.
  if (compiled_loss) parallelism::apply_compiled_loss(o);
  if (has(fw, "deepspeed") || has(fw, "nanotron")) {
    // DeepSpeed ZeRO-1/2 and nanotron's ZeRO-1: 16-bit parameters and gradients; the sharded
    // optimizer keeps fp32 master weights, Adam m and v and an fp32 gradient partition (16/d).
    o.state = parallelism::StateBytes{2.0, 2.0, 12.0, 0.0, 4.0};
    o.fp8_activations = false;
    o.optimizer_over_cp = false;
    if (has(notes, "fp32 grad acc")) {
      // BF16_Optimizer / nanotron accumulate_grad_in_fp32: an unsharded fp32 accumulation buffer
      // beside the 16-bit gradients (+4 B/param), which the optimizer reads instead of its own copy.
      o.state.gradients = 6.0;
      o.state.step_grad = 0.0;
      // With bf16, DeepSpeed's pipeline engine all-reduces those fp32 groups through a bf16 copy
      // of them (StateBytes::reduce_copy; DeepSpeed before PR #2970, 2023).
      if (has(fw, "deepspeed") && has(notes, "bf16")) {
        o.state.reduce_copy = 2.0;
        // After each backward, BF16_Optimizer.update_hp_grads adds each 16-bit gradient into its
        // fp32 accumulator through an fp32 copy (lp.grad.to(fp32)); the 16-bit gradients were
        // cleared before that backward, so it wrote them anew.
        o.embedding_grad_bytes = 4.0;
      }
    }
  }
  // DeepSpeed's pipeline engine keeps the stage outputs of the micro-batches in flight.
  o.keeps_pipeline_outputs = has(fw, "megatron-deepspeed") || has(fw, "deepspeed pp engine");
  if (has(fw, "megatron-deepspeed") || has(fw, "korthikanti")) {
    o.flash_attention = false;  // 2021-2022 Megatron kernels: fused softmax over the full s x s scores
  }
  if (has(fw, "megatron-deepspeed")) {
    // CUDA 11 loads every kernel of the process at context creation (lazy loading came with 11.7):
    // BigScience measured the context at 1573 MiB on an A100 (tr11 chronicles-prequel, "40GB A100
    // takes 1573MiB for cuda kernels").
    o.context_gib = 1573.0 / 1024.0;
  }
  if (has(fw, "deepspeed")) {
    // DeepSpeed reduces gradients through a flat bucket of reduce_bucket_size elements (default
    // 5e8, DeepSpeed config docs) in the 16-bit gradient type.
    o.grad_bucket_bytes = 5e8 * 2.0;
  }
  if (has(notes, "18 b/param")) {
    // Korthikanti et al. 2022: fp16 weights, fp32 main gradients, fp32 master weights and Adam m, v.
    o.state = parallelism::StateBytes{2.0, 4.0, 12.0, 0.0};
    o.fp8_activations = false;
  }
  if (has(fw, "torchtune") || has(fw, "accelerate")) {
    o.fp8_activations = false;
    o.optimizer_over_cp = false;
    o.state = parallelism::StateBytes{4.0, 4.0, 8.0, 0.0};  // FSDP mixed precision
    if (has(notes, "pure")) {
      // Pure bf16 training: bf16 parameters, gradients and Adam m, v; no fp32 master copy.
      o.state = parallelism::StateBytes{2.0, 2.0, 4.0, 0.0};
    }
    if (has(notes, "8bit") && !has(notes, "non-8bit")) o.state.optimizer = 2.0;  // 8-bit Adam m and v
    if (has(notes, "optimizer_in_bwd")) o.state.gradients = 0.0;  // each gradient applied and freed in backward
    // torchtune's recipes clear the gradients with zero_grad(set_to_none=True) and keep no
    // gradient buffer of their own (single device, or FSDP2's sharded gradients): backward
    // allocates them (MemoryOptions::lazy_gradients). DDP's buckets and DeepSpeed's partitions persist.
    o.lazy_gradients = has(fw, "torchtune") && !has(r.sharding, "ddp");
  }
  if (has(notes, "muon")) o.state.optimizer -= 4.0;  // Muon keeps one momentum for the 2-D weights
  if (has(notes, "offload")) {
    o.offload_optimizer = true;
    o.offload_params = has(r.sharding, "offload");
  }
  return o;
}

}  // namespace

MemoryQuantity memory_quantity_of(const std::string& kind) {
  const std::string k = core::to_lower(kind);
  if (k == "oom") return MemoryQuantity::OutOfMemory;
  if (k == "fits") return MemoryQuantity::Fits;
  if (has(k, "paper_component") && has(k, "activation")) return MemoryQuantity::Activations;
  if (has(k, "paper_component")) return MemoryQuantity::States;
  if (has(k, "reserved")) return MemoryQuantity::Reserved;
  if (has(k, "active") || has(k, "allocated")) return MemoryQuantity::Allocated;
  return MemoryQuantity::Device;
}

double predicted_bytes(const parallelism::MemoryBreakdown& m, MemoryQuantity q) {
  switch (q) {
    case MemoryQuantity::Reserved: return m.reserved().value();
    case MemoryQuantity::Allocated: return m.allocated().value();
    case MemoryQuantity::Device: return m.device().value();
    case MemoryQuantity::States: return (m.weights + m.gradients + m.optimizer).value();
    case MemoryQuantity::Activations: return m.activations.value();
    case MemoryQuantity::OutOfMemory:
    case MemoryQuantity::Fits: return 0.0;
  }
  return 0.0;
}

std::vector<MemoryRow> read_memory_csv(const std::string& csv_path, const hardware::Catalog& catalog) {
  std::string path;
  const std::string text = read_measurements(csv_path, "memory.csv", "--csv", path);
  auto table = parse_csv(text, path);
  const CsvTable csv(table, path, "empty file; expected a header row");
  csv.require({"memory_kind", "measured_peak_gib", "framework"}, "required column missing from the header");
  // An out-of-memory row that states neither a micro-batch nor a global batch is judged at one
  // sequence per GPU, the least any run of its layout holds (MemoryRow::batch_assumed).
  std::vector<bool> batch_assumed(csv.rows(), false);
  {
    auto& header = table.front().cells;
    auto mbs = static_cast<std::size_t>(std::find(header.begin(), header.end(), "micro_batch_size") - header.begin());
    for (std::size_t ri = 0; ri < csv.rows(); ++ri) {
      if (memory_quantity_of(csv.cell(ri, "memory_kind")) != MemoryQuantity::OutOfMemory) continue;
      if (!csv.cell(ri, "micro_batch_size").empty() || !csv.cell(ri, "global_batch_size").empty() ||
          csv.cell(ri, "recipe_settings").find("micro_batch_size") != std::string::npos)
        continue;
      if (mbs == header.size()) header.emplace_back("micro_batch_size");  // a file without the column
      auto& cells = table[ri + 1].cells;
      if (cells.size() <= mbs) cells.resize(mbs + 1);
      cells[mbs] = "1";
      batch_assumed[ri] = true;
    }
  }
  TrainingRowOptions read;
  read.require_step_time = false;
  read.aliases = {{"sharding", "fsdp_or_zero"}, {"source", "source_id"}};
  auto runs = training_rows(table, path, catalog, read);

  std::vector<MemoryRow> out;
  for (std::size_t ri = 0; ri < csv.rows(); ++ri) {
    auto get = [&](const char* name) { return csv.cell(ri, name); };
    MemoryRow m;
    m.run = std::move(runs[ri]);
    m.framework = get("framework");
    m.precision = get("precision");
    m.optimizer = get("optimizer");
    m.sharding = get("sharding");
    m.memory_kind = get("memory_kind");
    m.quantity = memory_quantity_of(m.memory_kind);
    m.batch_assumed = batch_assumed[ri];
    // Optional: "max" (the maximum over ranks; the default) or "first_node". Without the column, a
    // row whose notes say it was read on the first node is one.
    if (const std::string g = core::to_lower(get("measured_gpus")); !g.empty()) {
      if (g != "max" && g != "first_node") {
        throw core::InputError(path, csv.line(ri), "measured_gpus",
                               "'" + get("measured_gpus") + "' is not one of: max, first_node");
      }
      m.first_node = g == "first_node";
    } else {
      m.first_node = has(get("notes"), "first node");
    }
    if (const std::string v = get("measured_peak_gib"); !v.empty()) {
      // A finite positive number of GiB: stod also read "nan", "inf" and "12 GiB" (as 12), and a
      // measured 0 made the row's error infinite.
      double gib = 0;
      std::size_t used = 0;
      try {
        gib = std::stod(v, &used);
      } catch (...) {
        used = 0;
      }
      if (used != v.size() || !std::isfinite(gib) || gib <= 0) {
        throw core::InputError(path, csv.line(ri), "measured_peak_gib",
                               "'" + v + "' is not a number of GiB; a positive number, or empty for none");
      }
      m.measured_gib = gib;
    }
    if (!m.measured_gib && m.quantity != MemoryQuantity::OutOfMemory && m.quantity != MemoryQuantity::Fits) {
      m.run.job.reset();
      m.run.reason = "no measured_peak_gib for memory_kind '" + m.memory_kind + "'";
    }
    if (m.run.job && m.run.job->stack == parallelism::to_string(parallelism::Stack::TorchTitan) &&
        m.run.job->layout.precision == core::Precision::FP4) {
      // torchao's NVFP4 training (a prototype) replaces the linears' matrix products with its own
      // operators, which torchtitan's per-op SAC does not save as it saves aten.mm, and quantizes
      // around them in compiled code it does save: what a converted layer keeps is not modelled.
      m.run.job.reset();
      m.run.reason =
          "NVFP4 training under torchtitan (torchao prototype): the activations per-op SAC keeps around "
          "its FP4 matrix products are not modelled";
    }
    if (m.run.job) {
      auto& job = *m.run.job;
      // Megatron-DeepSpeed rows get the megatron-legacy stack's conventions from the training-row
      // reader: every layer checkpointed where the row does not say (BigScience's production
      // scripts pass --checkpoint-activations) and no sequence parallelism.
      m.options = options_of(m, job.stack);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace fmsim::config
