// Reading validation/collectives.csv: published nccl-tests results, one row per figure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fmsim::config {

/// One measured collective. Empty optionals are blank cells.
struct CollectiveMeasurement {
  int line = 0;  ///< 1-based line in the file, for messages
  std::string id;
  std::string system;         ///< as published, e.g. "2 x p5.48xlarge EFAv2"
  std::string instance_type;  ///< catalog system name
  int nodes = 0;
  int gpus = 0;
  std::string collective;       ///< all_reduce, all_gather, reduce_scatter, ...
  std::string algorithm;        ///< forced NCCL algorithm, empty = NCCL's choice
  std::string bytes_text;       ///< as written: a byte count or "large"
  std::optional<double> bytes;  ///< empty when bytes_text is not a number ("large")
  std::optional<double> busbw_gbps;
  std::optional<double> time_us;
  std::string source;
  std::string notes;
};

/// Parses the CSV (header row with the columns of validation/README.md, any order; quoted
/// fields with commas allowed). Throws core::InputError naming file:line: column on a malformed
/// row or a missing column; cells the model may not understand (an unknown collective) are kept
/// for the caller to report.
std::vector<CollectiveMeasurement> read_collectives_csv(const std::string& path, const std::string& flag = "--csv");

/// Same, from text already in memory; `file` names it in messages.
std::vector<CollectiveMeasurement> parse_collectives_csv(const std::string& text, const std::string& file);

}  // namespace fmsim::config
