// Serving workloads: request lengths, arrival processes, traces, samples per prompt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"

namespace fmsim::serving {

/// A distribution of token counts.
enum class LengthKind {
  Fixed,        ///< always `mean`
  Uniform,      ///< uniform on [mean (1 - spread), mean (1 + spread)]
  Normal,       ///< normal with standard deviation spread x mean, truncated at 1
  LogNormal,    ///< log-normal with median `mean` and sigma `spread` (heavy-tailed reasoning lengths)
  Exponential,  ///< exponential with mean `mean`
};
/// The words of --isl-dist and --osl-dist.
inline constexpr core::Word<LengthKind> kLengthKindWordList[] = {
    {LengthKind::Fixed, "fixed", "constant"},   {LengthKind::Uniform, "uniform"},
    {LengthKind::Normal, "normal", "gaussian"}, {LengthKind::LogNormal, "lognormal"},
    {LengthKind::Exponential, "exponential"},
};
inline constexpr core::Vocabulary<LengthKind> kLengthKindWords{"length distribution", kLengthKindWordList};

struct LengthDistribution {
  LengthKind kind = LengthKind::Fixed;
  double mean = 1024;
  double spread = 0.0;
  std::int64_t max = 0;  ///< cap (context limit); 0 = none
};

/// How requests arrive.
enum class ArrivalKind {
  Offline,     ///< all requests at time 0 (max-throughput benchmarks)
  Poisson,     ///< open loop at `rate` requests/s
  ClosedLoop,  ///< `concurrency` clients, each sending its next request when the last one completes
  Trace,       ///< arrival times from a trace
};

/// One request of a trace file.
struct TraceRequest {
  double arrival_s = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::string prefix_id;           ///< requests with the same id share their first prefix_tokens
  std::int64_t prefix_tokens = 0;  ///< 0 with a prefix id = the whole prompt is shared
};

/// When a closed loop's clients send their first requests.
enum class ClientStart {
  /// All at time 0, as benchmark clients start (genai-perf, AIPerf, vLLM's benchmark_serving with
  /// --max-concurrency). With fixed lengths they stay in step: every client's request takes the
  /// same time, and a few ms of network and tokenizer jitter is less than one engine iteration.
  Together,
  /// Spread evenly over one request's expected duration (prefill plus its decode steps at the
  /// loop's concurrency): the steady state of clients whose think times or lengths differ.
  Spread,
};
/// The words of --client-start.
inline constexpr core::Word<ClientStart> kClientStartWordList[] = {
    {ClientStart::Together, "together", "lockstep"},
    {ClientStart::Spread, "spread"},
};
inline constexpr core::Vocabulary<ClientStart> kClientStartWords{"client start", kClientStartWordList};

/// How requests reach the engine.
enum class RequestPath {
  Server,     ///< through the engine's OpenAI-compatible HTTP server (EngineProfile::request_overhead)
  InProcess,  ///< handed to the engine in the benchmark's own process (trtllm-bench, vLLM's LLM class)
};
/// The words of --request-path.
inline constexpr core::Word<RequestPath> kRequestPathWordList[] = {
    {RequestPath::Server, "server", "http"},
    {RequestPath::InProcess, "in-process", "offline"},
};
inline constexpr core::Vocabulary<RequestPath> kRequestPathWords{"request path", kRequestPathWordList};

struct WorkloadSpec {
  ArrivalKind arrival = ArrivalKind::Offline;
  double rate = 1.0;                                 ///< Poisson requests/s
  int concurrency = 1;                               ///< closed loop clients
  ClientStart client_start = ClientStart::Together;  ///< closed loop: when the clients' first requests go
  RequestPath path = RequestPath::Server;
  /// Server path: each request's time outside the GPU (EngineProfile::request_overhead) drawn per
  /// request, exponential with that mean (seeded by `seed` and the request), instead of the same
  /// for all: closed-loop clients drift apart and reach the engine at random points of its
  /// iteration cycle (docs/models/serving.md, 'Clients that drift apart').
  bool random_path_time = false;
  int num_requests = 1000;  ///< prompts (each may carry several samples)
  /// Closed loop: stop as soon as requests 0 to stop_after - 1 have all ended (decoded or
  /// rejected), with every completion up to that moment known; later ones are left unfinished.
  /// 0 = run every request to its end. Nothing after that moment can change those requests'
  /// times (`simulate`; `simulate_disaggregated` when outputs are longer than one token: a
  /// one-token request ends at its prefill but reaches the decode pool's bookkeeping later).
  int stop_after = 0;
  LengthDistribution input;
  LengthDistribution output;
  int samples_per_prompt = 1;             ///< n: best-of-n / self-consistency, the samples share the prompt's KV
  std::int64_t shared_prefix_tokens = 0;  ///< system prompt shared by every request
  std::uint64_t seed = 1;
  std::vector<TraceRequest> trace;
};

/// One prompt as the simulator receives it.
struct Request {
  int id = 0;
  double arrival_s = 0;  ///< ignored for closed loop (set when its client is free)
  std::int64_t input_tokens = 0;
  std::vector<std::int64_t> output_tokens;  ///< one per sample
  int prefix_group = -1;                    ///< requests of one group share their first prefix_tokens
  std::int64_t prefix_tokens = 0;
};

/// Draws the requests of `spec` (deterministic for a seed). Trace requests keep their order.
std::vector<Request> make_requests(const WorkloadSpec& spec);

/// Short description: "offline, 1000 requests, ISL 1024 fixed, OSL 1024 fixed".
std::string describe(const WorkloadSpec& spec);

}  // namespace fmsim::serving
