// A serving deployment and its workload from their flag values, shared by `fmsim serve`,
// `fmsim plan-serve` and the serving commands built on them. The command layer (src/cli)
// declares the flags into ServingFlags and calls make_serving_setup.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "hardware/catalog.hpp"
#include "serving/calibration.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::jobspec {

/// Bounds of what `fmsim serve` and `plan-serve` simulate, checked before anything is allocated:
/// every sequence (request x sample) and every replica holds state for the whole run (about 1 KB
/// a sequence and 170 KB a replica; a million sequences take about a minute).
inline constexpr long long kMaxSequences = 1'000'000;
inline constexpr long long kMaxSamples = 1024;
inline constexpr long long kMaxReplicas = 4096;
inline constexpr long long kMaxLayoutWidth = 4096;     ///< tp, pp, ep
inline constexpr double kMaxTokens = 10'000'000;       ///< a request's input or output tokens
inline constexpr double kMaxRate = 1e6;                ///< requests/s
inline constexpr double kMaxOutputTokens = 268435456;  ///< 2^28: all requests' output tokens together

struct ServingFlags {
  std::string job_file;
  std::string model = "llama3.1-8b";
  std::string cluster = "p5en.48xlarge";
  int tp = 1, pp = 1, ep = 1;
  bool dep = false;
  std::string precision = "bf16";  ///< a word of serving::kServingFormatWords
  std::string kv_dtype;            ///< "" = FP8 for FP8/FP4 weights, else BF16
  std::string engine = "vllm";     ///< an engine profile of the serving calibration
  bool no_cuda_graphs = false;
  int max_num_seqs = 0, max_num_batched_tokens = 0, block_size = 0;
  double gpu_memory_utilization = 0;
  bool no_prefix_caching = false;
  std::string preemption;  ///< "" = the engine's; else a word of serving::kPreemptionModeWords
  std::string kv_offload;  ///< "" = none; else a word of serving::kKvTierWords (serve only)
  std::string calibration;
  // Workload.
  double isl = 1024, osl = 1024;
  std::string isl_dist = "fixed", osl_dist = "fixed";  ///< words of serving::kLengthKindWords
  double isl_spread = 0.0, osl_spread = 0.0;
  long long max_len = 0;
  double rate = 0;
  int concurrency = 0;
  std::string client_start = "together";  ///< a word of serving::kClientStartWords (closed loop)
  std::string request_path = "server";    ///< a word of serving::kRequestPathWords
  int num_requests = 1000;
  std::string requests_file;
  int samples = 1;
  long long shared_prefix = 0;
  unsigned long long seed = 1;
  int replicas = 1;
  // Speculative decoding.
  std::string speculative = "none";  ///< a word of serving::kSpeculativeKindWords
  int draft_tokens = 3;
  double acceptance = 0.7;
  double draft_cost = 0.05;
  // SLO.
  std::string slo_ttft, slo_tpot;
};

struct ServingSetup {
  serving::Deployment deployment;
  serving::WorkloadSpec workload;
  serving::Slo slo;
  double price_per_gpu_hour = 0;
};

/// Validates the flags (InputError naming the flag) and builds the deployment and workload.
ServingSetup make_serving_setup(const ServingFlags& f, const hardware::Catalog& catalog);

/// Refuses requests that generate more than kMaxOutputTokens in all (InputError naming --requests
/// for a trace, else --osl): the engine's iterations are kept one by one (about 93 bytes each, up
/// to one per output token when the batch is small).
void check_output_tokens(const std::vector<serving::Request>& requests, bool from_trace);

/// Refuses a workload one of whose requests (its prompt and its longest output) needs more KV cache
/// than the whole replica holds: the engine could never finish it (nothing when the weights leave no
/// KV cache at all: that is the simulation's "does not fit" verdict). InputError naming --requests
/// (a trace) or --isl/--osl, with the request's tokens and the replica's capacity.
void check_requests_fit(const std::vector<serving::Request>& requests, const serving::IterationModel& model,
                        bool from_trace);

/// The engine profile `name` of `cal`, with did-you-mean on --engine.
const serving::EngineProfile& engine_flag(const serving::ServingCalibration& cal, const std::string& name);

/// The KV tier below HBM `tier` names (--kv-offload), from the system's facts: host DRAM over PCIe
/// (the calibration's measured host link), Grace LPDDR5X over NVLink-C2C (Grace systems), or the
/// instance's local NVMe (its read/write rate shared by the node's GPUs). Capacity: the replica's
/// share of the node's DRAM (half of it, the rest left to the OS, the engine and staging) or NVMe.
serving::Deployment::KvOffload resolve_kv_offload(serving::KvTier tier, const serving::Deployment& d);

/// How `fmsim serve` lays out its instances: --router, --disagg P:D, --kv-transfer.
struct ServeFleetFlags {
  std::string router = "least-outstanding";  ///< a word of serving::kRoutingPolicyWords
  std::string disagg;                        ///< "" or P:D
  std::string kv_transfer = "layer";         ///< a word of serving::kKvTransferWords
};

/// One replica, a routed fleet of replicas, or disaggregated prefill and decode pools.
struct ServeFleet {
  int instances = 1;            ///< schedulers (replicas, or prefill + decode instances)
  int prefill = 0, decode = 0;  ///< disaggregated pools (0 = aggregated)
  serving::RoutingPolicy router = serving::RoutingPolicy::LeastOutstanding;
  serving::Disaggregation dis;
  std::string link;  ///< "NVLink" or the network's name (disaggregated)
};

/// The fleet of `replicas` replicas of `d` (--replicas) or the disaggregated pools the flags name;
/// the KV link between pools is NVLink inside one NVLink domain, else the network.
ServeFleet resolve_serve_fleet(const ServeFleetFlags& flags, int replicas, const serving::Deployment& d);

/// Loading a replica's weights onto its GPUs before the first token, from a storage tier.
struct ColdStart {
  std::string tier;
  double bytes = 0;  ///< weights of one replica
  double seconds = 0;
  std::string bottleneck;
};

/// The storage model's load of a checkpoint holding only the weights of `d`, read by every GPU of
/// the replica (each its own shard), from the catalog's tier `storage` (--cold-start).
ColdStart estimate_cold_start(const std::string& storage, const serving::Deployment& d,
                              const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
