// A recorded run as an offline HTML report: the panels of the training dashboard drawn from the
// series themselves (Grafana is not needed to look at a simulated run).
#pragma once

#include <string>

#include "report/charts.hpp"
#include "report/document.hpp"
#include "telemetry/recording.hpp"

namespace fmsim::telemetry {

/// Throughput, MFU and ETTR, step time, GPU activity, power and memory of the first node, with
/// the checkpoint, failure and restart counts; `source` names where the series came from.
report::Document run_report(const Recording& recording, const std::string& source);

/// Adds `family` (read by config::stream_openmetrics) to `recording` as run_report needs it: its
/// series and samples count towards the report's figures, and only what the report draws is kept
/// (every series of the fmsim_* families it sums or tables, the first series of those it charts,
/// nothing of the others), so a recording of any size is reported in the memory of a few series.
/// A series that continues one kept from an earlier file gets its samples appended (timestamps must
/// increase, as in one file; `path` names the file in the error).
void keep_for_report(Recording& recording, RecordedFamily&& family, const std::string& path);

/// The throughput panel alone (fmsim_tokens_per_second over hours of the run).
report::LineChart throughput_panel(const Recording& recording);

}  // namespace fmsim::telemetry
