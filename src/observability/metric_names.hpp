// The metric names fmsim exports, in one place, so every simulator uses the same ones.
#pragma once

#include <string_view>

/// Names follow the Prometheus naming rules (prefix, snake_case, base units as suffix, "_total"
/// for counters, "_ratio" for 0..1 fractions). Where DCGM (dcgm-exporter) measures the same
/// quantity on real GPUs, the DCGM field is named so simulated and measured dashboards can be
/// compared; note DCGM reports memory in MiB and fmsim in bytes. See docs/models/observability.md.
namespace fmsim::observability::metric_names {

// Training step.
/// gauge, seconds: simulated wall time of one optimizer step.
inline constexpr std::string_view kStepTimeSeconds = "fmsim_step_time_seconds";
/// gauge, seconds, label component = compute|tp|cp|ep|pp|dp|bubble|optimizer|other: exposed
/// (not overlapped) time of one step by cause; the components sum to fmsim_step_time_seconds.
inline constexpr std::string_view kStepTimeBreakdownSeconds = "fmsim_step_time_breakdown_seconds";
/// gauge, tokens/s over the whole job.
inline constexpr std::string_view kTokensPerSecond = "fmsim_tokens_per_second";
/// gauge, tokens/s divided by the number of GPUs.
inline constexpr std::string_view kTokensPerSecondPerGpu = "fmsim_tokens_per_second_per_gpu";
/// gauge, 0..1: model FLOPs utilization (6ND-style useful FLOPs / peak dense FLOP/s).
/// Closest DCGM field: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (tensor-core busy ratio; not the same).
inline constexpr std::string_view kMfuRatio = "fmsim_mfu_ratio";
/// gauge, count of GPUs in the job.
inline constexpr std::string_view kGpus = "fmsim_gpus";
/// counter: tokens processed in the simulated run.
inline constexpr std::string_view kTokensTotal = "fmsim_tokens_total";
/// counter: optimizer steps simulated.
inline constexpr std::string_view kStepsTotal = "fmsim_steps_total";

// Memory (per GPU). DCGM: DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_TOTAL (MiB).
/// gauge, bytes, label kind = weights|gradients|optimizer|activations|kv_cache|buffers|other.
inline constexpr std::string_view kMemoryBytes = "fmsim_memory_bytes";
/// gauge, bytes: HBM capacity of one GPU.
inline constexpr std::string_view kMemoryCapacityBytes = "fmsim_memory_capacity_bytes";

// Communication.
/// gauge, seconds, labels collective, algorithm: time of one collective call.
inline constexpr std::string_view kCollectiveTimeSeconds = "fmsim_collective_time_seconds";
/// gauge, bytes/s, labels collective, algorithm: nccl-tests "busbw".
inline constexpr std::string_view kCollectiveBusBandwidth = "fmsim_collective_bus_bandwidth_bytes_per_second";
/// gauge, bytes/s, label link = nvlink|network. DCGM: DCGM_FI_PROF_NVLINK_TX_BYTES, DCGM_FI_PROF_PCIE_TX_BYTES.
inline constexpr std::string_view kLinkBytesPerSecond = "fmsim_link_bytes_per_second";

// Job level.
/// gauge, seconds: wall time to train on the requested tokens.
inline constexpr std::string_view kTrainingTimeSeconds = "fmsim_training_time_seconds";
/// gauge, US dollars: cost of the job at the catalog price.
inline constexpr std::string_view kCostDollars = "fmsim_cost_dollars";
/// gauge, 0..1: useful training time / wall time, after failures, restarts and checkpoints.
inline constexpr std::string_view kGoodputRatio = "fmsim_goodput_ratio";

// Inference. Label statistic = mean|p50|p90|p99 (a gauge per statistic, not a summary type).
/// gauge, seconds: time to first token.
inline constexpr std::string_view kTimeToFirstTokenSeconds = "fmsim_time_to_first_token_seconds";
/// gauge, seconds: time between output tokens of one request.
inline constexpr std::string_view kInterTokenLatencySeconds = "fmsim_inter_token_latency_seconds";
/// gauge, requests/s served.
inline constexpr std::string_view kRequestsPerSecond = "fmsim_requests_per_second";

}  // namespace fmsim::observability::metric_names
