// Reads OpenMetrics text files with timestamped samples (as `--metrics-out` writes them, or any
// exporter's backfill file) into a telemetry::Recording.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "observability/metrics_output.hpp"
#include "telemetry/recording.hpp"

namespace fmsim::config {

/// Appends the families of `path` to `recording`. Every sample needs a timestamp (seconds since
/// the epoch; fractions are dropped). InputError naming the file and line on anything else than
/// # HELP / # TYPE / # UNIT / # EOF lines, comments and `name{labels} value timestamp` samples.
void read_openmetrics(const std::string& path, telemetry::Recording& recording);

/// Reads `path` as read_openmetrics does, one family at a time: `take` gets each family once its
/// lines are over (a file keeps a family's lines together), so memory holds one family, not the
/// file. `progress`, if set, gets the bytes read so far about every 4 MiB and at the end.
void stream_openmetrics(const std::string& path, const std::function<void(telemetry::RecordedFamily&&)>& take,
                        const std::function<void(std::uint64_t)>& progress = {});

/// A recorded series' key, `name{a="x",b="y"}`, as its metric name and labels in written order
/// (escapes \\, \" and \n undone). InputError naming `path` on a malformed key.
std::pair<std::string, observability::Labels> split_series_key(std::string_view key, const std::string& path);

/// The *.om and *.prom files of `dir`, sorted; InputError naming `flag` when `dir` is not a
/// directory or holds none.
std::vector<std::string> metrics_files_in(const std::string& dir, const std::string& flag);

}  // namespace fmsim::config
