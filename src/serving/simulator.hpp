// The engine's scheduler played event by event: continuous batching, chunked prefill with a token
// budget, a paged KV cache with admission, preemption and prefix caching, over a workload.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"
#include "engine/trace.hpp"
#include "serving/iteration_model.hpp"
#include "serving/workload.hpp"

namespace fmsim::serving {

/// One sample (sequence) of one request, as it went.
struct RequestResult {
  int request = 0;
  int sample = 0;
  core::Seconds arrival{};
  core::Seconds first_token{-1.0};  ///< when the first output token was produced; -1 if never
  core::Seconds finish{-1.0};       ///< when the last output token was produced; -1 if not completed
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = 0;  ///< prompt tokens served from the prefix cache
  int preemptions = 0;
  [[nodiscard]] bool completed() const { return finish.value() >= 0; }
  [[nodiscard]] core::Seconds ttft() const { return first_token - arrival; }
  [[nodiscard]] core::Seconds e2e() const { return finish - arrival; }
  /// Time per output token after the first: (finish - first token) / (output - 1).
  [[nodiscard]] core::Seconds tpot() const {
    return output_tokens > 1 ? (finish - first_token) / static_cast<double>(output_tokens - 1) : core::Seconds{};
  }
};

/// The state after one iteration: the time series observability exports.
struct IterationSample {
  core::Seconds time{};  ///< end of the iteration
  core::Seconds duration{};
  int running = 0;  ///< requests holding KV (scheduled this iteration)
  int decode_seqs = 0;
  int prefill_tokens = 0;
  int tokens = 0;       ///< tokens computed (prefill + decode)
  int waiting = 0;      ///< arrived, not admitted
  double kv_usage = 0;  ///< fraction of KV-cache blocks in use (0..1), prefix cache included
  int preemptions = 0;  ///< cumulative
};

/// Log-spaced histogram of durations (1 us .. 10^4 s, 40 bins per decade) for percentiles of
/// quantities with one value per token (inter-token latency).
class DurationHistogram {
 public:
  void add(double seconds, double weight = 1.0);
  [[nodiscard]] double quantile(double q) const;
  [[nodiscard]] double mean() const { return count_ > 0 ? sum_ / count_ : 0.0; }
  [[nodiscard]] double count() const { return count_; }
  [[nodiscard]] double sum() const { return sum_; }
  /// Weight at or below `bound` seconds (for Prometheus cumulative buckets).
  [[nodiscard]] double count_below(double bound) const;
  /// Adds the entries of `o` (another replica's).
  void merge(const DurationHistogram& o);

 private:
  static constexpr int kPerDecade = 40;
  static constexpr int kBins = 10 * kPerDecade;
  std::array<double, kBins + 2> bins_{};
  double count_ = 0, sum_ = 0;
  double last_seconds_ = -1.0;  ///< the last value added and its bin
  int last_bin_ = 0;
};

struct ServeResult {
  std::vector<RequestResult> requests;
  std::vector<IterationSample> iterations;
  DurationHistogram itl;  ///< inter-token latency, one entry per decoded token
  ServingMemory memory;
  IterationCost time_by_part;   ///< summed over all iterations
  core::Seconds duration{0.0};  ///< first arrival to last completion
  int gpus = 0;                 ///< GPUs of the replica
  int preemptions = 0;          ///< evictions from HBM (offloads included)
  int offloads = 0;             ///< of which moved to the KV offload tier (reloaded later, not recomputed)
  int rejected = 0;             ///< requests larger than the whole KV cache
  bool fits = true;             ///< false: the weights leave no room for a KV cache
  std::string reason;
};

/// Plays `requests` (from make_requests) through one replica. Emits iteration and request spans
/// to `trace` when given (request spans for the first 2,000 requests). Deterministic.
ServeResult simulate(const IterationModel& model, const WorkloadSpec& workload, const std::vector<Request>& requests,
                     engine::TraceSink* trace = nullptr);

/// How a fleet's router picks the replica for each arriving request.
enum class RoutingPolicy {
  RoundRobin,        ///< in turn
  LeastOutstanding,  ///< join the shortest queue: fewest running + waiting requests
  PrefixAware,       ///< a prefix group's home replica (its cache holds the prefix) unless overloaded, else JSQ
};
/// The words of --router.
inline constexpr core::Word<RoutingPolicy> kRoutingPolicyWordList[] = {
    {RoutingPolicy::RoundRobin, "round-robin", "rr"},
    {RoutingPolicy::LeastOutstanding, "least-outstanding", "jsq"},
    {RoutingPolicy::PrefixAware, "prefix-aware", "prefix"},
};
inline constexpr core::Vocabulary<RoutingPolicy> kRoutingPolicyWords{"router policy", kRoutingPolicyWordList};
std::string_view to_string(RoutingPolicy p);

/// `replicas` copies of one deployment behind a router, simulated together event by event: each
/// request goes to the replica the policy picks from the replicas' state at its arrival. Open
/// loop, trace and offline workloads (a closed loop runs one replica). The result covers the
/// whole fleet (gpus = replicas x GPUs per replica).
ServeResult simulate_fleet(const IterationModel& model, const WorkloadSpec& workload,
                           const std::vector<Request>& requests, int replicas, RoutingPolicy policy,
                           engine::TraceSink* trace = nullptr);

/// How a request's KV moves from the prefill pool to the decode pool.
enum class KvTransfer {
  Layer,    ///< each layer's KV is sent as soon as that layer's prefill is done: only the last layer's share is exposed
  Request,  ///< the whole request's KV moves after its prefill
};
/// The words of --kv-transfer.
inline constexpr core::Word<KvTransfer> kKvTransferWordList[] = {
    {KvTransfer::Layer, "layer", "layerwise, streamed"},
    {KvTransfer::Request, "request", "whole"},
};
inline constexpr core::Vocabulary<KvTransfer> kKvTransferWords{"KV transfer", kKvTransferWordList};

/// Which pool's output a client receives as its first token in disaggregated serving.
enum class FirstTokenFrom {
  Prefill,  ///< the prefill instance's first token reaches the client as soon as it is computed
  Decode,   ///< the client's stream comes from the decode instance (Dynamo): the first token arrives
            ///< when the decode instance admits the request, its KV in place, and runs its first step
};

/// Disaggregated prefill/decode: a prefill pool computes each prompt and its first token, the KV
/// moves to a decode pool over a link, which then decodes; both pools queue.
struct Disaggregation {
  int prefill_replicas = 1;
  int decode_replicas = 1;
  KvTransfer transfer = KvTransfer::Layer;
  FirstTokenFrom first_token = FirstTokenFrom::Prefill;
  core::BytesPerSecond link_bandwidth{0.0};  ///< between one prefill GPU and one decode GPU (one direction)
  core::Seconds link_latency{0.0};           ///< per transfer
};

/// Plays `requests` through a prefill pool (`prefill`, routed to the shortest queue) and a decode
/// pool (`decode`, likewise), with the KV transfer between them costed from its bytes. TTFT ends
/// at the prefill pool's first token; TPOT and ITL come from the decode pool.
ServeResult simulate_disaggregated(const IterationModel& prefill, const IterationModel& decode,
                                   const Disaggregation& dis, const WorkloadSpec& workload,
                                   const std::vector<Request>& requests, engine::TraceSink* trace = nullptr);

/// Request spans (queue + prefill, decode) of the first 2,000 completed requests on lanes.
void trace_requests(const ServeResult& r, engine::TraceSink* trace);

/// Mean and percentiles of one latency.
struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// Service-level objective on per-request latencies (0 = no bound).
struct Slo {
  core::Seconds ttft{};  ///< bound on time to first token; 0 = none
  core::Seconds tpot{};  ///< bound on time per output token; 0 = none
  /// Whether a TTFT and a TPOT (one request's, or a percentile's) are within the bounds set.
  [[nodiscard]] bool met(core::Seconds t, core::Seconds p) const {
    return (ttft <= core::Seconds{} || t <= ttft) && (tpot <= core::Seconds{} || p <= tpot);
  }
  [[nodiscard]] bool any() const { return ttft > core::Seconds{} || tpot > core::Seconds{}; }
};

/// Headline figures of a run.
struct ServeSummary {
  int completed = 0;
  core::PerSecond output_tokens_per_s{};  ///< replica
  core::PerSecond total_tokens_per_s{};   ///< input + output, replica
  core::PerSecond output_tokens_per_s_per_gpu{};
  core::PerSecond total_tokens_per_s_per_gpu{};
  core::PerSecond requests_per_s{};
  LatencyStats ttft, tpot, itl, e2e;
  core::PerSecond tokens_per_s_per_user{};   ///< 1 / mean TPOT
  double slo_attainment = 1.0;               ///< fraction of requests meeting the SLO
  core::PerSecond goodput_requests_per_s{};  ///< completed requests meeting the SLO, per second
  double kv_usage_mean = 0, kv_usage_max = 0;
  double batch_mean = 0, queue_mean = 0, queue_max = 0;
  double cost_per_million_output_tokens = 0;  ///< USD, at the system's price per GPU-hour
  double cost_per_million_total_tokens = 0;
};

ServeSummary summarize(const ServeResult& r, const Slo& slo, double price_per_gpu_hour_usd);

/// Throughput at steady state: output tokens produced inside a window that starts when the first
/// kSteadyWarmupFraction of the completed requests have ended and, when requests arrive over time,
/// no earlier than two median request lifetimes (E2E) after the first arrival (warm-up: the batch
/// grows until the requests in flight all arrived after the first ones left), and ends at the last
/// arrival (open loop, closed loop, trace: after it the load only falls) or, when every request
/// arrived before the warm-up ended (offline), when all but kSteadyWarmupFraction of them have
/// ended (drain), divided by its length. A request's tokens after its first are counted at even
/// steps between its first and last token. The figure does not depend on how many requests were
/// simulated once the window holds the steady state: `converged` when the window's two halves
/// produce within kSteadyTolerance of each other and the window is bounded by an arrival.
struct SteadyState {
  bool valid = false;      ///< a window of positive length exists
  bool converged = false;  ///< the halves agree and the window ends at the last arrival or is offline
  double start_s = 0, end_s = 0;
  double output_tokens_per_s = 0;  ///< all replicas together
  double requests_per_s = 0;       ///< completions inside the window
  double halves_gap = 0;           ///< |first half - second half| / mean of the two
  bool ends_at_last_arrival = false;
};
inline constexpr double kSteadyWarmupFraction = 0.1;
inline constexpr double kSteadyTolerance = 0.05;
SteadyState steady_state(const ServeResult& r);

/// Percentiles by linear interpolation between order statistics (numpy's default).
LatencyStats latency_stats(std::vector<double> values);

}  // namespace fmsim::serving
