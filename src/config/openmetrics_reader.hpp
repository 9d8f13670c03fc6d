// Reads OpenMetrics text files with timestamped samples (as `--metrics-out` writes them, or any
// exporter's backfill file) into a telemetry::Recording.
#pragma once

#include <string>
#include <vector>

#include "telemetry/recording.hpp"

namespace fmsim::config {

/// Appends the families of `path` to `recording`. Every sample needs a timestamp (seconds since
/// the epoch; fractions are dropped). InputError naming the file and line on anything else than
/// # HELP / # TYPE / # UNIT / # EOF lines, comments and `name{labels} value timestamp` samples.
void read_openmetrics(const std::string& path, telemetry::Recording& recording);

/// The *.om and *.prom files of `dir`, sorted; InputError naming `flag` when `dir` is not a
/// directory or holds none.
std::vector<std::string> metrics_files_in(const std::string& dir, const std::string& flag);

}  // namespace fmsim::config
