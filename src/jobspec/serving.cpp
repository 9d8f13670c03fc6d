// Serving deployment and workload flag values into a validated deployment and workload.
#include "jobspec/serving.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "config/cluster_loader.hpp"
#include "config/csv.hpp"
#include "config/flag_values.hpp"
#include "config/model_loader.hpp"
#include "config/serving_calibration.hpp"
#include "config/serving_trace.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "jobspec/checkpoint.hpp"
#include "storage/checkpoint_io.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::jobspec {

const serving::EngineProfile& engine_flag(const serving::ServingCalibration& cal, const std::string& name) {
  const auto kind = config::word_flag(serving::kEngineKindWords, name, "--engine");
  if (const auto* e = cal.engine(std::string(serving::kEngineKindWords.name(kind)))) return *e;
  throw core::InputError::flag("--engine", fmt::format("the serving calibration has no profile of {}; it has {}", name,
                                                       core::join(cal.engine_names(), ", ")));
}

namespace {

serving::LengthDistribution length_flag(const std::string& flag, double mean, const std::string& kind, double spread,
                                        long long max) {
  serving::LengthDistribution d;
  config::checked_real(mean, 1, kMaxTokens, flag, "tokens");
  d.mean = mean;
  d.spread = spread;
  d.max = max;
  d.kind = config::word_flag(serving::kLengthKindWords, kind, flag + "-dist");
  if (!(spread >= 0) || (d.kind == serving::LengthKind::Uniform && spread > 1) || spread > 5) {
    throw core::InputError::flag(flag + "-spread", fmt::format("{} out of range (uniform: 0-1, others: 0-5)", spread));
  }
  config::checked_whole(max, 0, kMaxTokens, "--max-len", "tokens (0: no cap)");
  return d;
}

double duration_flag(const std::string& flag, const std::string& text) {
  if (text.empty()) return 0.0;
  const auto p = core::parse_duration(text);
  if (!p) throw core::InputError::flag(flag, fmt::format("'{}' is not a duration (e.g. 2s, 50ms): {}", text, p.error));
  if (p.value->value() <= 0) throw core::InputError::flag(flag, "must be positive");
  return p.value->value();
}

}  // namespace

ServingSetup make_serving_setup(const ServingFlags& f, const hardware::Catalog& catalog) {
  ServingSetup s;
  auto& d = s.deployment;
  d.model = config::load_model(f.model);
  d.cluster = config::parse_cluster(catalog, f.cluster);
  const auto format = config::word_flag(serving::kServingFormatWords, f.precision, "--precision");
  d.weights = serving::stored_precision(format);
  if (format == serving::ServingFormat::MXFP4) d.activations = core::Precision::FP8;  // MXFP4 x MXFP8 (W4A8)
  if (d.weights == core::Precision::FP8 && d.cluster.gpu.fp8.value() <= 0) {
    throw core::InputError::flag("--precision", fmt::format("{} has no FP8 tensor cores", d.cluster.gpu.display_name));
  }
  if (f.kv_dtype.empty()) {
    d.kv = d.weights == core::Precision::BF16 || d.weights == core::Precision::FP16 ? core::Precision::BF16
                                                                                    : core::Precision::FP8;
  } else {
    d.kv = serving::stored_precision(config::word_flag(serving::kServingFormatWords, f.kv_dtype, "--kv-dtype"));
  }
  for (auto [flag, v] : {std::pair{"--tp", f.tp}, std::pair{"--pp", f.pp}, std::pair{"--ep", f.ep}})
    config::checked_whole(v, 1, kMaxLayoutWidth, flag);
  // What is simulated is bounded before anything is allocated: every sequence (request x sample)
  // and every replica holds state for the whole run.
  config::checked_whole(f.num_requests, 1, kMaxSequences, "--num-requests", "requests");
  config::checked_whole(f.samples, 1, kMaxSamples, "--samples", "samples per prompt");
  if (static_cast<long long>(f.num_requests) * f.samples > kMaxSequences)
    throw core::InputError::flag(
        "--samples", fmt::format("{} requests x {} samples is {} sequences; at most {} are "
                                 "simulated",
                                 f.num_requests, f.samples, static_cast<long long>(f.num_requests) * f.samples,
                                 core::format_thousands(kMaxSequences)));
  config::checked_whole(f.replicas, 1, kMaxReplicas, "--replicas", "replicas");
  config::checked_whole(f.max_num_seqs, 0, kMaxSequences, "--max-num-seqs", "(0: the engine's)");
  config::checked_whole(f.max_num_batched_tokens, 0, kMaxTokens, "--max-num-batched-tokens", "(0: the engine's)");
  config::checked_whole(f.block_size, 0, 65536, "--block-size", "tokens (0: the engine's)");
  config::checked_whole(f.shared_prefix, 0, kMaxTokens, "--shared-prefix", "tokens");
  d.tp = f.tp;
  d.pp = f.pp;
  d.ep = f.ep;
  d.attention_dp = f.dep ? f.tp : 1;
  d.cuda_graphs = !f.no_cuda_graphs;
  const auto cal = config::load_serving_calibration(f.calibration);
  d.engine = engine_flag(cal, f.engine);
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  if (f.max_num_seqs > 0) d.engine.max_num_seqs = f.max_num_seqs;
  if (f.max_num_batched_tokens > 0) d.engine.max_num_batched_tokens = f.max_num_batched_tokens;
  if (f.block_size > 0) d.engine.block_size = f.block_size;
  if (f.gpu_memory_utilization != 0) {
    if (!(f.gpu_memory_utilization > 0 && f.gpu_memory_utilization <= 1)) {
      throw core::InputError::flag("--gpu-memory-utilization",
                                   fmt::format("{}: allowed (0, 1], or 0 for the engine's", f.gpu_memory_utilization));
    }
    d.engine.gpu_memory_utilization = f.gpu_memory_utilization;
  }
  if (f.no_prefix_caching) d.engine.prefix_caching = false;
  if (!f.preemption.empty())
    d.engine.preemption = config::word_flag(serving::kPreemptionModeWords, f.preemption, "--preemption");
  d.speculation.kind = config::word_flag(serving::kSpeculativeKindWords, f.speculative, "--speculative");
  // Checked with or without --speculative: `--acceptance -1` alone ran (exit 0), ignored.
  config::checked_whole(f.draft_tokens, 1, 16, "--draft-tokens", "tokens");
  if (!(f.acceptance >= 0 && f.acceptance < 1))
    throw core::InputError::flag("--acceptance", fmt::format("{}: allowed [0, 1)", f.acceptance));
  if (!(f.draft_cost > 0 && f.draft_cost <= 1))
    throw core::InputError::flag("--draft-cost", fmt::format("{}: allowed (0, 1]", f.draft_cost));
  if (d.speculation.kind != serving::SpeculativeKind::None) {
    d.speculation.draft_tokens = f.draft_tokens;
    d.speculation.acceptance_rate = f.acceptance;
    d.speculation.draft_cost_fraction = f.draft_cost;
  }
  if (auto why = serving::why_invalid(d); !why.empty()) throw core::InputError::flag("--tp", why);
  if (!f.kv_offload.empty())
    d.kv_offload = resolve_kv_offload(config::word_flag(serving::kKvTierWords, f.kv_offload, "--kv-offload"), d);

  auto& wl = s.workload;
  wl.input = length_flag("--isl", f.isl, f.isl_dist, f.isl_spread, f.max_len);
  wl.output = length_flag("--osl", f.osl, f.osl_dist, f.osl_spread, f.max_len);
  wl.num_requests = f.num_requests;
  wl.samples_per_prompt = f.samples;
  wl.shared_prefix_tokens = f.shared_prefix;
  wl.seed = f.seed;
  config::checked_real(f.rate, 0, kMaxRate, "--rate", "requests/s (0: none)");
  config::checked_whole(f.concurrency, 0, kMaxSequences, "--concurrency", "clients (0: none)");
  if (f.rate > 0 && f.concurrency > 0)
    throw core::InputError::flag("--concurrency", "give --rate (open loop) or --concurrency (closed loop), not both");
  if (!f.requests_file.empty()) {
    wl.arrival = serving::ArrivalKind::Trace;
    wl.trace = config::parse_request_trace(config::read_text_file(f.requests_file, "--requests"), f.requests_file);
    if (static_cast<long long>(wl.trace.size()) * f.samples > kMaxSequences)
      throw core::InputError::flag(
          "--requests",
          fmt::format("{} has {} requests x {} samples; at most {} sequences are "
                      "simulated",
                      f.requests_file, wl.trace.size(), f.samples, core::format_thousands(kMaxSequences)));
  } else if (f.rate > 0) {
    wl.arrival = serving::ArrivalKind::Poisson;
    wl.rate = f.rate;  // the fleet total: fmsim serve routes it over the replicas
  } else if (f.concurrency > 0) {
    wl.arrival = serving::ArrivalKind::ClosedLoop;
    wl.concurrency = f.concurrency;
  }
  wl.client_start = config::word_flag(serving::kClientStartWords, f.client_start, "--client-start");
  wl.path = config::word_flag(serving::kRequestPathWords, f.request_path, "--request-path");
  // In the engine's own process no server streams tokens: no per-sequence streaming cost.
  if (wl.path == serving::RequestPath::InProcess) d.engine.sequence_overhead = core::Seconds(0.0);
  s.slo.ttft = core::Seconds(duration_flag("--slo-ttft", f.slo_ttft));
  s.slo.tpot = core::Seconds(duration_flag("--slo-tpot", f.slo_tpot));
  const auto& sys = d.cluster.system;
  s.price_per_gpu_hour = sys.gpus() > 0 ? sys.price_per_hour_usd / sys.gpus() : 0.0;
  return s;
}

void check_output_tokens(const std::vector<serving::Request>& requests, bool from_trace) {
  double total = 0;
  for (const auto& r : requests)
    for (const auto o : r.output_tokens) total += static_cast<double>(o);
  if (total <= kMaxOutputTokens) return;
  throw core::InputError::flag(
      from_trace ? "--requests" : "--osl",
      fmt::format("the requests generate {:.3g} output tokens in all; at most 2^28 ({:.3g}) are simulated (each "
                  "engine iteration is kept: fewer requests, samples or output tokens)",
                  total, kMaxOutputTokens));
}

void check_requests_fit(const std::vector<serving::Request>& requests, const serving::IterationModel& model,
                        bool from_trace) {
  if (model.kv_capacity() <= 0) return;  // the weights do not fit: the simulation's own verdict
  for (const auto& r : requests) {
    std::int64_t output = 0;
    for (const auto o : r.output_tokens) output = std::max(output, o);
    const double tokens = static_cast<double>(r.input_tokens + output);
    if (model.kv_bytes(tokens) <= model.kv_capacity()) continue;
    const std::string what =
        fmt::format("request {} needs {} input + {} output tokens of KV cache; the replica holds {:.0f} tokens in all",
                    r.id + 1, r.input_tokens, output, model.memory().token_capacity);
    if (from_trace) throw core::InputError::flag("--requests", what + "; give it more GPUs (--tp, --pp)");
    throw core::InputError::flag(
        r.input_tokens >= output ? "--isl" : "--osl",
        what + "; shorten the requests (--max-len) or give the replica more GPUs (--tp, --pp)");
  }
}

serving::Deployment::KvOffload resolve_kv_offload(serving::KvTier tier, const serving::Deployment& d) {
  serving::Deployment::KvOffload t;
  t.tier = tier;
  const auto& sys = d.cluster.system;
  const double share = static_cast<double>(d.gpus()) / std::max(1, sys.gpus_per_node);
  // Half the node's DRAM for KV: the rest is left to the OS, the engine and staging buffers.
  constexpr double kHostShareForKv = 0.5;
  switch (tier) {
    case serving::KvTier::None: return t;
    case serving::KvTier::Host:
      t.capacity = core::Bytes(kHostShareForKv * sys.host_memory.value() * share);
      t.bandwidth = d.gpu_cal.host_link_bandwidth;
      break;
    case serving::KvTier::Grace:
      if (sys.cpu.find("Grace") == std::string::npos) {
        throw core::InputError::flag("--kv-offload", "grace needs a Grace system (p6e-gb200, u-p6e-gb200x36/x72); " +
                                                         sys.name + " has " + sys.cpu);
      }
      t.capacity = core::Bytes(kHostShareForKv * sys.host_memory.value() * share);
      t.bandwidth = d.gpu_cal.grace_link_bandwidth;
      break;
    case serving::KvTier::Nvme:
      if (sys.local_nvme_devices <= 0) throw core::InputError::flag("--kv-offload", sys.name + " has no local NVMe");
      t.capacity = core::Bytes(sys.local_nvme_devices * sys.local_nvme_device_size.value() * share);
      t.bandwidth = core::BytesPerSecond(std::min(sys.local_nvme_read.value(), sys.local_nvme_write.value()) /
                                         std::max(1, sys.gpus_per_node));
      break;
  }
  if (t.capacity.value() <= 0 || t.bandwidth.value() <= 0)
    throw core::InputError::flag("--kv-offload", "the catalog has no size or rate for this tier on " + sys.name);
  return t;
}

ServeFleet resolve_serve_fleet(const ServeFleetFlags& o, int replicas, const serving::Deployment& d) {
  ServeFleet t;
  t.instances = replicas;
  t.router = config::word_flag(serving::kRoutingPolicyWords, o.router, "--router");
  // Checked with or without --disagg (`--kv-transfer nan` alone ran, ignored).
  const auto transfer = config::word_flag(serving::kKvTransferWords, o.kv_transfer, "--kv-transfer");
  if (o.disagg.empty()) return t;
  const auto colon = o.disagg.find(':');
  int p = 0, q = 0;
  try {
    std::size_t a = 0, b = 0;
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    p = std::stoi(o.disagg.substr(0, colon), &a);
    q = std::stoi(o.disagg.substr(colon + 1), &b);
    if (a != colon || b != o.disagg.size() - colon - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw core::InputError::flag("--disagg", "'" + o.disagg + "' is not P:D (prefill and decode instances, e.g. 1:3)");
  }
  if (p < 1 || q < 1 || p > 1024 || q > 1024) throw core::InputError::flag("--disagg", "P and D must be 1 to 1024");
  if (replicas != 1) throw core::InputError::flag("--replicas", "give --replicas or --disagg, not both");
  t.prefill = p;
  t.decode = q;
  t.instances = p + q;
  t.dis.prefill_replicas = p;
  t.dis.decode_replicas = q;
  t.dis.transfer = transfer;
  // Inside one NVLink domain the KV moves GPU to GPU over NVLink; otherwise over the network
  // (EFA: one node's NICs shared by its GPUs), each at its one-direction rate.
  const auto& c = d.cluster;
  if ((p + q) * d.gpus() <= c.system.nvlink_domain_gpus) {
    t.dis.link_bandwidth = c.gpu.nvlink_per_direction();
    t.dis.link_latency = core::Seconds(0.0);  // microseconds against milliseconds of transfer: left out
    t.link = "NVLink";
  } else {
    t.dis.link_bandwidth = core::BytesPerSecond(c.system.network_bandwidth.value() * c.fabric.efficiency /
                                                std::max(1, c.system.gpus_per_node));
    t.dis.link_latency = c.fabric.latency;
    t.link = c.fabric.name.empty() ? "network" : c.fabric.name;
  }
  return t;
}

ColdStart estimate_cold_start(const std::string& storage_name, const serving::Deployment& d,
                              const hardware::Catalog& catalog) {
  CheckpointJobFlags flags;
  flags.storage = storage_name;
  flags.bytes_per_param = flags.weight_bytes = serving::stored_bytes(d.weights);
  CheckpointJob job;
  job.cluster = d.cluster;
  const double params = static_cast<double>(workload::count_parameters(d.model).total);
  try {
    resolve_checkpoint_storage(job, params, flags, catalog);
  } catch (const core::InputError& e) {  // the storage resolver names its own --storage flag
    std::string msg = e.what();
    if (const auto at = msg.find("--storage: "); at != std::string::npos) msg = msg.substr(at + 11);
    throw core::InputError::flag("--cold-start", msg);
  }
  storage::CheckpointLayout layout;
  layout.ranks = d.gpus();
  layout.nodes = std::max(1, (d.gpus() + d.cluster.gpus_per_node() - 1) / d.cluster.gpus_per_node());
  layout.data_parallel = 1;
  layout.tensor_parallel = d.tp;
  layout.sharding = parallelism::Sharding::None;
  const auto e = storage::estimate_checkpoint(job.contents, layout, job.tier, job.engine, job.node_network);
  return {job.tier.name, job.contents.weights().value(), e.load.total.value(), storage::to_string(e.load.bottleneck)};
}

}  // namespace fmsim::jobspec
