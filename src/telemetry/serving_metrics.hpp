// A simulated serving run as the series vLLM's /metrics would have produced over its time:
// scheduler state (running, waiting, KV-cache usage), token and request counters and the latency
// histograms (TTFT, inter-token latency under its current and its older name, end-to-end), each
// sample what a scrape at that instant would have read.
#pragma once

#include <string>

#include "observability/metrics_output.hpp"
#include "serving/simulator.hpp"
#include "telemetry/training_metrics.hpp"

namespace fmsim::telemetry {

/// Writes the vllm:* families of one replica, labelled model_name, job and instance (without the
/// closing # EOF). Simulated time 0 is the first arrival. Deterministic.
WriteSummary write_serving_metrics(const serving::ServeResult& result, const std::string& model_name,
                                   const SeriesOptions& options, observability::MetricsOutput& out);

}  // namespace fmsim::telemetry
