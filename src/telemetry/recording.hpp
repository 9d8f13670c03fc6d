// Recorded time series played back as a live exposition: what `fmsim metrics serve` shows on
// /metrics while a simulation "runs" in (accelerated) wall-clock time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fmsim::telemetry {

/// One series: its sample name with labels as written ("DCGM_FI_DEV_FB_USED{Hostname=\"node-0001\"}")
/// and its samples in time order.
struct RecordedSeries {
  std::string name_and_labels;
  std::vector<std::int64_t> timestamps_s;
  std::vector<double> values;
};

struct RecordedFamily {
  std::string name;  ///< as in # TYPE (counters with their _total)
  std::string type;  ///< gauge, counter, histogram, ...
  std::string help;  ///< escaped as in the file
  std::vector<RecordedSeries> series;
};

/// Every family of one or more OpenMetrics files, in file order.
struct Recording {
  std::vector<RecordedFamily> families;
  std::int64_t first_timestamp_s = 0;  ///< earliest sample (0 when empty)
  std::int64_t last_timestamp_s = 0;   ///< latest sample
  std::uint64_t samples = 0;
  std::uint64_t series_left_out = 0;  ///< series counted but not kept (keep_for_report)
};

/// Prometheus text format 0.0.4 of every series' latest sample at or before `at_unix_s`, without
/// timestamps (the scraper stamps them); series with no sample yet are left out, families with
/// no series left out entirely.
std::string exposition_at(const Recording& recording, std::int64_t at_unix_s);

}  // namespace fmsim::telemetry
