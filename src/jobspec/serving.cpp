// Serving deployment and workload flag values into a validated deployment and workload.
#include "jobspec/serving.hpp"

#include <fmt/format.h>

#include "config/cluster_loader.hpp"
#include "config/csv.hpp"
#include "config/model_loader.hpp"
#include "config/serving_calibration.hpp"
#include "config/serving_trace.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"

namespace fmsim::jobspec {

std::optional<core::Precision> parse_serving_precision(const std::string& word) {
  const std::string w = core::to_lower(word);
  if (w == "nvfp4" || w == "mxfp4") return core::Precision::FP4;
  auto p = core::parse_precision(w);
  if (p && (*p == core::Precision::BF16 || *p == core::Precision::FP16 || *p == core::Precision::FP8 ||
            *p == core::Precision::FP4))
    return p;
  return std::nullopt;
}

const serving::EngineProfile& engine_flag(const serving::ServingCalibration& cal, const std::string& name) {
  if (const auto* e = cal.engine(name)) return *e;
  throw core::InputError::flag(
      "--engine", fmt::format("unknown engine '{}'; allowed: {}", name, core::join(cal.engine_names(), ", ")));
}

namespace {

serving::LengthDistribution length_flag(const std::string& flag, double mean, const std::string& kind, double spread,
                                        long long max) {
  serving::LengthDistribution d;
  if (!(mean >= 1) || mean > 1e7)
    throw core::InputError::flag(flag, fmt::format("{} tokens: allowed 1 to 10,000,000", mean));
  d.mean = mean;
  d.spread = spread;
  d.max = max;
  const std::string k = core::to_lower(kind);
  if (k == "fixed")
    d.kind = serving::LengthKind::Fixed;
  else if (k == "uniform")
    d.kind = serving::LengthKind::Uniform;
  else if (k == "normal")
    d.kind = serving::LengthKind::Normal;
  else if (k == "lognormal")
    d.kind = serving::LengthKind::LogNormal;
  else if (k == "exponential")
    d.kind = serving::LengthKind::Exponential;
  else
    throw core::InputError::flag(
        flag + "-dist",
        fmt::format("unknown distribution '{}'; allowed: fixed, uniform, normal, lognormal, exponential", kind));
  if (spread < 0 || (d.kind == serving::LengthKind::Uniform && spread > 1) || spread > 5) {
    throw core::InputError::flag(flag + "-spread", fmt::format("{} out of range (uniform: 0-1, others: 0-5)", spread));
  }
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
  const auto w = parse_serving_precision(f.precision);
  if (!w)
    throw core::InputError::flag("--precision",
                                 fmt::format("unknown '{}'; allowed: bf16, fp16, fp8, fp4, nvfp4, mxfp4", f.precision));
  d.weights = *w;
  if (core::to_lower(f.precision) == "mxfp4") d.activations = core::Precision::FP8;  // MXFP4 x MXFP8 (W4A8)
  if (d.weights == core::Precision::FP8 && d.cluster.gpu.fp8.value() <= 0) {
    throw core::InputError::flag("--precision", fmt::format("{} has no FP8 tensor cores", d.cluster.gpu.display_name));
  }
  if (f.kv_dtype.empty()) {
    d.kv = d.weights == core::Precision::BF16 || d.weights == core::Precision::FP16 ? core::Precision::BF16
                                                                                    : core::Precision::FP8;
  } else {
    const auto kv = parse_serving_precision(f.kv_dtype);
    if (!kv)
      throw core::InputError::flag("--kv-dtype", fmt::format("unknown '{}'; allowed: bf16, fp8, fp4", f.kv_dtype));
    d.kv = *kv;
  }
  for (auto [flag, v] :
       {std::pair{"--tp", f.tp}, std::pair{"--pp", f.pp}, std::pair{"--ep", f.ep}, std::pair{"--samples", f.samples},
        std::pair{"--replicas", f.replicas}, std::pair{"--num-requests", f.num_requests}}) {
    if (v < 1) throw core::InputError::flag(flag, fmt::format("{} must be at least 1", v));
  }
  d.tp = f.tp;
  d.pp = f.pp;
  d.ep = f.ep;
  d.attention_dp = f.dep ? f.tp : 1;
  d.cuda_graphs = !f.no_cuda_graphs;
  const auto cal = config::load_serving_calibration(f.calibration);
  d.engine = engine_flag(cal, core::to_lower(f.engine));
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  if (f.max_num_seqs > 0) d.engine.max_num_seqs = f.max_num_seqs;
  if (f.max_num_batched_tokens > 0) d.engine.max_num_batched_tokens = f.max_num_batched_tokens;
  if (f.block_size > 0) d.engine.block_size = f.block_size;
  if (f.gpu_memory_utilization != 0) {
    if (f.gpu_memory_utilization <= 0 || f.gpu_memory_utilization > 1) {
      throw core::InputError::flag("--gpu-memory-utilization",
                                   fmt::format("{}: allowed (0, 1]", f.gpu_memory_utilization));
    }
    d.engine.gpu_memory_utilization = f.gpu_memory_utilization;
  }
  if (f.no_prefix_caching) d.engine.prefix_caching = false;
  if (!f.preemption.empty()) {
    if (f.preemption == "recompute")
      d.engine.preemption = serving::PreemptionMode::Recompute;
    else if (f.preemption == "swap")
      d.engine.preemption = serving::PreemptionMode::Swap;
    else
      throw core::InputError::flag("--preemption", fmt::format("unknown '{}'; allowed: recompute, swap", f.preemption));
  }
  const std::string spec = core::to_lower(f.speculative);
  if (spec == "none")
    d.speculation.kind = serving::SpeculativeKind::None;
  else if (spec == "mtp")
    d.speculation.kind = serving::SpeculativeKind::Mtp;
  else if (spec == "eagle")
    d.speculation.kind = serving::SpeculativeKind::Eagle;
  else if (spec == "draft")
    d.speculation.kind = serving::SpeculativeKind::DraftModel;
  else
    throw core::InputError::flag("--speculative",
                                 fmt::format("unknown '{}'; allowed: none, mtp, eagle, draft", f.speculative));
  if (d.speculation.kind != serving::SpeculativeKind::None) {
    if (f.draft_tokens < 1 || f.draft_tokens > 16) throw core::InputError::flag("--draft-tokens", "allowed 1 to 16");
    if (f.acceptance < 0 || f.acceptance >= 1) throw core::InputError::flag("--acceptance", "allowed [0, 1)");
    if (f.draft_cost <= 0 || f.draft_cost > 1) throw core::InputError::flag("--draft-cost", "allowed (0, 1]");
    d.speculation.draft_tokens = f.draft_tokens;
    d.speculation.acceptance_rate = f.acceptance;
    d.speculation.draft_cost_fraction = f.draft_cost;
  }
  if (auto why = serving::why_invalid(d); !why.empty()) throw core::InputError::flag("--tp", why);

  auto& wl = s.workload;
  wl.input = length_flag("--isl", f.isl, f.isl_dist, f.isl_spread, f.max_len);
  wl.output = length_flag("--osl", f.osl, f.osl_dist, f.osl_spread, f.max_len);
  wl.num_requests = f.num_requests;
  wl.samples_per_prompt = f.samples;
  wl.shared_prefix_tokens = f.shared_prefix;
  wl.seed = f.seed;
  if (f.rate < 0) throw core::InputError::flag("--rate", "must be positive");
  if (f.concurrency < 0) throw core::InputError::flag("--concurrency", "must be positive");
  if (f.rate > 0 && f.concurrency > 0)
    throw core::InputError::flag("--concurrency", "give --rate (open loop) or --concurrency (closed loop), not both");
  if (!f.requests_file.empty()) {
    wl.arrival = serving::ArrivalKind::Trace;
    wl.trace = config::parse_request_trace(config::read_text_file(f.requests_file, "--requests"), f.requests_file);
  } else if (f.rate > 0) {
    wl.arrival = serving::ArrivalKind::Poisson;
    wl.rate = f.rate;  // the fleet total: fmsim serve routes it over the replicas
  } else if (f.concurrency > 0) {
    wl.arrival = serving::ArrivalKind::ClosedLoop;
    wl.concurrency = f.concurrency;
  }
  s.slo.ttft_s = duration_flag("--slo-ttft", f.slo_ttft);
  s.slo.tpot_s = duration_flag("--slo-tpot", f.slo_tpot);
  const auto& sys = d.cluster.system;
  s.price_per_gpu_hour = sys.gpus() > 0 ? sys.price_per_hour_usd / sys.gpus() : 0.0;
  return s;
}

}  // namespace fmsim::jobspec
