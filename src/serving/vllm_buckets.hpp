// vLLM's Prometheus histogram bucket bounds (seconds), defined once for every writer of vllm:*
// series (the `fmsim serve --metrics` snapshot and telemetry's time series).
#pragma once

#include <vector>

namespace fmsim::serving {

/// vllm:time_to_first_token_seconds (vllm/engine/metrics.py).
inline const std::vector<double> kVllmTtftBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                                     0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                                     20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
/// vllm:time_per_output_token_seconds (vllm/engine/metrics.py).
inline const std::vector<double> kVllmTpotBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                                     0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
/// vllm:e2e_request_latency_seconds (vllm/engine/metrics.py).
inline const std::vector<double> kVllmE2eBuckets = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                                    5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                                    60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

}  // namespace fmsim::serving
