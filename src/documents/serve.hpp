// `fmsim serve` as documents: the deployment, workload, memory, throughput (steady state and the
// whole run), latency, SLO, engine state, GPU time by part, cost and a time series, as a JSON
// document and as text; the run as Prometheus text under vLLM's metric names, as a per-iteration
// CSV and as a Chrome/Perfetto trace.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "jobspec/serve_run.hpp"
#include "jobspec/serving.hpp"

namespace fmsim::documents {

/// The JSON document (`fmsim serve --json`, less the metrics the command adds); with `cold`, the
/// cold start and when the first request's first token comes.
nlohmann::json serve_json(const jobspec::ServingSetup& setup, const jobspec::ServeRun& run,
                          const jobspec::ServeFleet& fleet, const std::optional<jobspec::ColdStart>& cold);

/// The text report, the cold start last.
void print_serve(std::ostream& out, const jobspec::ServingSetup& setup, const jobspec::ServeRun& run,
                 const jobspec::ServeFleet& fleet, const std::optional<jobspec::ColdStart>& cold);

/// Prometheus text with vLLM's metric names (--metrics): gauges of the run's means, counters,
/// and the TTFT, inter-token, TPOT and end-to-end histograms on vLLM's buckets.
std::string serve_prometheus_text(const jobspec::ServingSetup& setup, const jobspec::ServeRun& run);

/// Every iteration, one CSV line each (--timeseries).
std::string serve_timeseries_csv(const jobspec::ServeRun& run);

/// The run's iteration and request spans as Chrome/Perfetto trace JSON (--trace-out).
std::string serve_trace_json(const jobspec::ServingSetup& setup, const jobspec::ServeRun& run);

}  // namespace fmsim::documents
