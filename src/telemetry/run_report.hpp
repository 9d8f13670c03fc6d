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

/// The throughput panel alone (fmsim_tokens_per_second over hours of the run).
report::LineChart throughput_panel(const Recording& recording);

}  // namespace fmsim::telemetry
