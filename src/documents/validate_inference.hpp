// `fmsim validate inference` as documents: each row of a serving-measurements CSV with its
// predicted and measured throughput, TTFT, TPOT and end-to-end latency, the error statistics
// overall and by engine, GPU, mode, model, concurrency and scenario, and the held-out figures.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"
#include "jobspec/validate_inference.hpp"

namespace fmsim::documents {

/// What `validate inference` predicted.
struct InferenceValidation {
  std::string csv;                                   // the measurements file, as the report names it
  std::vector<jobspec::InferenceRowResult> results;  // every row, calibration fitted on all rows
  std::optional<jobspec::InferencePartition> holdout;
  std::string holdout_word;                       // the partition as --holdout gave it
  std::vector<jobspec::InferenceRowResult> held;  // every row predicted with its partition left out
};

/// Rows, errors by grouping, overall errors, the held-out errors by partition (with a holdout),
/// whether the issue-39 targets are met, and the `summary` every validate command shares.
/// `catalog` names each held-out row's partition.
nlohmann::json validate_inference_json(const InferenceValidation& v, const hardware::Catalog& catalog);

/// The text report: the per-row table (`rows`), the summary, the groupings and the held-out
/// summary; with `markdown`, docs/validation.md's tables (summary, held-out line, rows or groupings).
void print_validate_inference(std::ostream& out, const InferenceValidation& v, bool markdown, bool rows);

}  // namespace fmsim::documents
