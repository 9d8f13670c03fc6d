// A sweep: one fmsim command over the cartesian product of flag values (grid.yaml), cut into
// chunks that run as separate processes, locally or as a Slurm job array.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace fmsim::cli {

/// A parsed grid file.
///
///   kind: Sweep
///   command: train                 # any fmsim command with --json ("validate training" too)
///   fixed: {tp: 8, gbs: 512}       # flags every point gets (true = a flag without value)
///   grid:                          # flags to vary: the sweep is the product of these lists
///     model: [llama3.1-8b, llama3.1-70b]
///     cluster: [p5.48xlarge:16, p5en.48xlarge:16]
///     seq: [4096, 8192]
///   columns: [step_time_s, mfu, layout.dp]   # optional: JSON fields kept (dotted paths;
///                                            # a number indexes a list: rows.0.time_us)
///   chunk: 1000                    # optional: points per task
struct SweepGrid {
  std::string file;                                                    ///< as given
  std::string command;                                                 ///< "train", "validate training"
  std::vector<std::pair<std::string, std::string>> fixed;              ///< flag name (no --), value
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  ///< flag name, values
  std::vector<std::string> columns;  ///< dotted JSON paths; empty = every top-level scalar
  std::int64_t points = 1;           ///< product of the axes' sizes
  std::int64_t chunk = 0;            ///< points per chunk
  std::int64_t chunks = 0;
  std::string digest;  ///< FNV-1a of everything that decides the results, hex

  /// The words of point `i` after the command (flags and values, then --json); the last axis
  /// varies fastest.
  [[nodiscard]] std::vector<std::string> point_args(std::int64_t i) const;
  /// The axis values of point `i`, by axis name.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> point_params(std::int64_t i) const;
};

/// The most points a sweep may have (2^40: past that, a sweep is not a study one can gather).
inline constexpr std::int64_t kMaxSweepPoints = std::int64_t{1} << 40;

/// Reads a grid file; errors name the file, line and field. `chunk_override` > 0 replaces the
/// grid's chunk size (--chunk-size).
SweepGrid load_sweep_grid(const std::string& path, std::int64_t chunk_override);

/// One point's record in the chunk files and results.jsonl: point, params, status, and the
/// result (or the chosen columns as "values"), or the error message.
nlohmann::json point_record(const SweepGrid& grid, std::int64_t i, int status, const std::string& out,
                            const std::string& err);

/// CSV text of the records (one JSON object per line): point, the axes, status, the columns
/// (the grid's, or the first result's top-level scalars), error.
std::string records_to_csv(const SweepGrid& grid, const std::vector<std::string>& jsonl_chunks);

}  // namespace fmsim::cli
