// The rows of validation/memory.csv predicted with the per-GPU memory model: each row in the
// quantity it reports, and the out-of-memory verdicts. `fmsim validate memory` prints what this
// returns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/memory_csv.hpp"
#include "hardware/catalog.hpp"
#include "parallelism/memory.hpp"

namespace fmsim::jobspec {

/// A row and its prediction.
struct MemoryRowOutcome {
  const config::MemoryRow* row = nullptr;
  parallelism::MemoryBreakdown memory;   ///< the job's peak over its stages (the verdict)
  parallelism::MemoryBreakdown reading;  ///< on the GPUs the figure was read on (MemoryRow::first_node)
  bool reading_apart = false;            ///< `reading` covers only some of the stages (a first-node figure)
  double capacity_gib = 0.0;
  double predicted_gib = 0.0;  ///< the row's quantity
  double error_pct = 0.0;
  bool fits = true;           ///< device total within usable HBM
  bool verdict_right = true;  ///< OOM rows: predicted not to fit; every other row: predicted to fit
};

/// Every row's outcome and the summary. `outcomes` point into `rows` (kept valid by moves; copies
/// are not allowed).
struct MemoryValidation {
  MemoryValidation() = default;
  MemoryValidation(const MemoryValidation&) = delete;
  MemoryValidation& operator=(const MemoryValidation&) = delete;
  MemoryValidation(MemoryValidation&&) = default;
  MemoryValidation& operator=(MemoryValidation&&) = default;

  std::vector<config::MemoryRow> rows;
  std::vector<MemoryRowOutcome> outcomes;
  std::vector<double> abs_errors;  ///< |error| % of the rows with a number
  std::size_t predicted = 0, oom_rows = 0, oom_agreed = 0, run_rows = 0, run_agreed = 0;
  double median = 0.0, p90 = 0.0;  ///< of abs_errors
};

/// The word of a quantity in the tables ("reserved", "OOM", ...).
std::string_view memory_quantity_name(config::MemoryQuantity q);

/// Predicts every row of `csv` (the built-in validation/memory.csv when empty), or only `row_ids`
/// (an unknown id is an InputError naming --rows).
MemoryValidation validate_memory(const std::string& csv, const std::vector<std::string>& row_ids,
                                 const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
