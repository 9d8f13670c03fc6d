// Reading published per-GPU training memory (validation/memory.csv schema).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/training_csv.hpp"
#include "parallelism/memory.hpp"

namespace fmsim::config {

/// What a row's number measures (validation/README.md, memory_kind).
enum class MemoryQuantity {
  Reserved,     ///< torch max_memory_reserved (torchtitan; nanotron's figure, which may be either)
  Allocated,    ///< torch max_memory_allocated / torchtune "Peak Memory Active"
  Device,       ///< nvidia-smi (also "unspecified": the sources' readings are device snapshots)
  States,       ///< paper component: weights + gradients + optimizer states
  Activations,  ///< paper component: activations
  OutOfMemory,  ///< the configuration ran out of memory
  Fits,         ///< the configuration ran (no number)
};

/// One row of a memory-measurements CSV: the run (job, or why it cannot be built), the number
/// and its quantity, and the framework's memory conventions read from its cells.
struct MemoryRow {
  TrainingRow run;
  std::string framework, precision, optimizer, sharding, memory_kind;
  std::optional<double> measured_gib;
  MemoryQuantity quantity = MemoryQuantity::Device;
  parallelism::MemoryOptions options;
  /// Which GPUs the figure was read on (column `measured_gpus`): false = the maximum over every
  /// rank (torchtitan's log, a verdict), true = the first node's GPUs (BigScience's nvidia-smi
  /// snapshots of node 0, which holds the first pipeline stage).
  bool first_node = false;
  /// An out-of-memory row that states no batch, judged at one sequence per GPU (micro-batch 1, one
  /// micro-batch per data-parallel rank): if that does not fit, no batch does.
  bool batch_assumed = false;
};

/// Reads the whole file (the built-in validation/memory.csv when `path` is empty). Columns follow
/// validation/README.md (training.csv's model and layout columns, `sharding`, `optimizer`,
/// `framework`, `measured_peak_gib`, `memory_kind`). Unreadable or malformed files and missing
/// columns are core::InputError naming the file (and line); a row that cannot be built keeps a reason.
std::vector<MemoryRow> read_memory_csv(const std::string& path, const hardware::Catalog& catalog);

/// The quantity of a memory_kind cell ("max_reserved", "nvidia-smi", "OOM", ...).
MemoryQuantity memory_quantity_of(const std::string& kind);

/// The predicted figure (bytes) for a quantity; 0 for the verdict-only quantities.
double predicted_bytes(const parallelism::MemoryBreakdown& m, MemoryQuantity q);

}  // namespace fmsim::config
