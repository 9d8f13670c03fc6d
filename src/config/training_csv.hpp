// Reading published training measurements (validation/training.csv schema) into jobs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/csv.hpp"
#include "hardware/catalog.hpp"
#include "training/step_model.hpp"

namespace fmsim::config {

/// One row of a training-measurements CSV, as published, and the job fmsim builds from it.
struct TrainingRow {
  int line = 0;  ///< 1-based line in the file
  std::string row_id, source_id, hardware, model, arch_type, precision, framework, task;
  int num_gpus = 0;
  std::optional<double> measured_step_time_s;  ///< from step_time_s, else from tokens/s/GPU
  /// Rows that publish only TFLOP/s per GPU: the step time the source's own FLOP formula gives
  /// for it (derived_from names the formula). Kept apart from measured_step_time_s: not a
  /// measurement, so calibration and the main summary leave it out.
  std::optional<double> derived_step_time_s;
  std::string derived_from;
  /// Set when the row states no layer count and it was derived from the stated parameter count
  /// (how, in words); empty otherwise.
  std::string layers_derived_from;
  /// Set when the row names no recompute (no recompute cell, recipe setting or source rule): the
  /// stack's default (parallelism::StackConventions::published_recompute) it is predicted with, in
  /// words; empty when the recompute is published.
  std::string recompute_assumed;
  std::optional<training::TrainingJob> job;  ///< nullopt when the row cannot be simulated
  std::string reason;                        ///< why not (when job is empty)
  std::string system;                        ///< catalog system the hardware cell maps to
  std::string layout_summary;                ///< "tp8 pp4 vp5 dp16 mbs1 gbs512 fp8 sel zero1"
};

/// Reads the whole file (the built-in validation/training.csv when `path` is empty). Column names follow
/// validation/README.md; missing required columns, a malformed CSV (unbalanced quotes) or an unreadable file are
/// core::InputError naming the file (and line). Cells are read leniently (published spellings such as "H100-SXM-80GB
/// (DGX-H100)", "FP8 current scaling (per-tensor)", "FSDP2 (shard group 8)"); blank cells take the framework's
/// documented defaults. A row that cannot be mapped keeps a reason.
std::vector<TrainingRow> read_training_csv(const std::string& path, const hardware::Catalog& catalog);

/// A GPU or system as a table prints it ("GB300 (DGX-GB300 / NVL72)", "H100-SXM-80GB",
/// "SM100, 183359 MiB") -> the catalog system it runs in and the GPU when it is not the
/// system's own; nullopt when it names none the catalog holds. The training and RL tables read
/// their hardware cells with it.
struct HardwareMatch {
  std::string system;
  std::string gpu;  ///< empty = the system's own GPU
};
std::optional<HardwareMatch> map_hardware(const std::string& published);

/// How training_rows reads a table of another schema that shares training.csv's columns.
struct TrainingRowOptions {
  bool require_step_time = true;               ///< reject rows without a step time or tokens/s/GPU
  std::map<std::string, std::string> aliases;  ///< header name in the file -> training.csv column
};

/// The jobs of the rows of a parsed table (header first) with training.csv's columns; `path`
/// names the file in errors. Without a global batch (and require_step_time false) it is one
/// micro-batch per data-parallel rank.
std::vector<TrainingRow> training_rows(const std::vector<CsvRecord>& table, const std::string& path,
                                       const hardware::Catalog& catalog, const TrainingRowOptions& options);

}  // namespace fmsim::config
