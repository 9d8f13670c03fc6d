// validation/memory.csv rows predicted with the per-GPU memory model.
#include "jobspec/validate_memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "jobspec/quantile.hpp"

namespace fmsim::jobspec {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string_view memory_quantity_name(config::MemoryQuantity q) {
  switch (q) {
    case config::MemoryQuantity::Reserved: return "reserved";
    case config::MemoryQuantity::Allocated: return "allocated";
    case config::MemoryQuantity::Device: return "device";
    case config::MemoryQuantity::States: return "states";
    case config::MemoryQuantity::Activations: return "activations";
    case config::MemoryQuantity::OutOfMemory: return "OOM";
    case config::MemoryQuantity::Fits: return "fits";
  }
  return "";
}

MemoryValidation validate_memory(const std::string& csv, const std::vector<std::string>& row_ids,
                                 const hardware::Catalog& catalog) {
  MemoryValidation v;
  v.rows = config::read_memory_csv(csv, catalog);
  for (const auto& id : row_ids) {
    if (std::none_of(v.rows.begin(), v.rows.end(), [&](const config::MemoryRow& r) { return r.run.row_id == id; })) {
      throw core::InputError::flag("--rows", "no row '" + id + "' in " + (csv.empty() ? "validation/memory.csv" : csv));
    }
  }
  for (const auto& row : v.rows) {
    if (!row_ids.empty() && std::find(row_ids.begin(), row_ids.end(), row.run.row_id) == row_ids.end()) continue;
    MemoryRowOutcome o;
    o.row = &row;
    if (row.run.job) {
      const auto& job = *row.run.job;
      o.memory = parallelism::estimate_memory(job.model, job.layout, job.seq_len, row.options);
      o.reading = o.memory;
      const auto& gpu = job.cluster.gpu;
      o.capacity_gib = (gpu.hbm_usable.value() > 0 ? gpu.hbm_usable : gpu.hbm_capacity).value() / kGiB;
      o.fits = o.memory.total().value() / kGiB <= o.capacity_gib;
      o.verdict_right = row.quantity == config::MemoryQuantity::OutOfMemory ? !o.fits : o.fits;
      // Paper components are reference values, not runs: no verdict.
      if (row.quantity == config::MemoryQuantity::States || row.quantity == config::MemoryQuantity::Activations) {
        o.verdict_right = true;
      }
      if (row.measured_gib) {
        // A reading of the first node: the stages its GPUs hold (pipeline-outermost rank order,
        // tp x cp x dp ranks per stage), not the job's peak, which still gives the verdict.
        const int per_stage = std::max(1, job.layout.tp * job.layout.cp * job.layout.dp);
        const int node = std::max(1, job.cluster.system.gpus());
        const int stages_read = (node + per_stage - 1) / per_stage;
        if (row.first_node && stages_read < job.layout.pp) {
          auto options = row.options;
          options.stages_read = stages_read;
          o.reading = parallelism::estimate_memory(job.model, job.layout, job.seq_len, options);
          o.reading_apart = true;
        }
        o.predicted_gib = config::predicted_bytes(o.reading, row.quantity) / kGiB;
        // The allocator caches no more than the device holds.
        if (row.quantity == config::MemoryQuantity::Reserved || row.quantity == config::MemoryQuantity::Device) {
          o.predicted_gib = std::min(o.predicted_gib, o.capacity_gib);
        }
        o.error_pct = 100.0 * (o.predicted_gib - *row.measured_gib) / *row.measured_gib;
      }
    }
    v.outcomes.push_back(o);
  }

  for (const auto& o : v.outcomes) {
    if (!o.row->run.job) continue;
    ++v.predicted;
    if (o.row->measured_gib) v.abs_errors.push_back(std::fabs(o.error_pct));
    if (o.row->quantity == config::MemoryQuantity::OutOfMemory) {
      ++v.oom_rows;
      v.oom_agreed += o.verdict_right ? 1 : 0;
    } else if (o.row->quantity != config::MemoryQuantity::States &&
               o.row->quantity != config::MemoryQuantity::Activations) {
      ++v.run_rows;
      v.run_agreed += o.verdict_right ? 1 : 0;
    }
  }
  v.median = quantile(v.abs_errors, 0.5);
  v.p90 = quantile(v.abs_errors, 0.9);
  return v;
}

}  // namespace fmsim::jobspec
