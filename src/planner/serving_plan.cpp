// Serving plan search: rate search under an SLO, aggregated and disaggregated pools, Pareto front.
#include "planner/serving_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fmsim::planner {
namespace {

using serving::ArrivalKind;
using serving::BatchWork;
using serving::Deployment;
using serving::Disaggregation;
using serving::IterationModel;
using serving::KvTransfer;
using serving::LengthKind;
using serving::ServeSummary;
using serving::ServingMode;
using serving::Slo;
using serving::WorkloadSpec;

double mean_output(const WorkloadSpec& w) {
  return w.output.kind == LengthKind::LogNormal ? w.output.mean * std::exp(w.output.spread * w.output.spread / 2)
                                                : w.output.mean;
}

double mean_input(const WorkloadSpec& w) {
  return w.input.kind == LengthKind::LogNormal ? w.input.mean * std::exp(w.input.spread * w.input.spread / 2)
                                               : w.input.mean;
}

// A probe at `rate` meets the SLO at p99 and keeps up: every request completes and the run ends
// within 20% of the arrivals' span plus one request's latency (the queue does not grow).
bool meets(const IterationModel& model, const WorkloadSpec& base, const Slo& slo, double rate, int requests,
           ServeSummary* out) {
  WorkloadSpec w = base;
  w.arrival = ArrivalKind::Poisson;
  w.rate = rate;
  w.num_requests = requests;
  const auto reqs = serving::make_requests(w);
  const auto r = serving::simulate(model, w, reqs);
  if (!r.fits) return false;
  const auto s = serving::summarize(r, slo, 0.0);
  if (out) *out = s;
  const int expected = requests * std::max(1, base.samples_per_prompt);
  if (s.completed < expected) return false;
  // A stable rate: the run ends within 20% of the arrival span plus one median request (a queue
  // that grows for the whole run drains far later). A search criterion, not a model constant.
  const double span = reqs.empty() ? 0.0 : reqs.back().arrival_s;
  if (r.duration.value() > 1.2 * span + s.e2e.p50 + 1e-9) return false;
  return slo.met(core::Seconds(s.ttft.p99), core::Seconds(s.tpot.p99));
}

}  // namespace

std::string layout_label(const Deployment& d) {
  std::string s = fmt::format("tp{}", d.tp);
  if (d.pp > 1) s += fmt::format(" pp{}", d.pp);
  if (d.ep > 1) s += fmt::format(" ep{}", d.ep);
  if (d.attention_dp > 1) s += " dep";
  return s;
}

double max_rate_under_slo(const IterationModel& model, const WorkloadSpec& workload, const Slo& slo, int requests,
                          ServeSummary* at_max) {
  // Upper bound: the offline (saturated) request rate of the replica.
  WorkloadSpec off = workload;
  off.arrival = ArrivalKind::Offline;
  off.num_requests = requests;
  const auto sat = serving::simulate(model, off, serving::make_requests(off));
  if (!sat.fits) return 0.0;
  const double hi0 = serving::summarize(sat, {}, 0.0).requests_per_s.value();
  if (hi0 <= 0) return 0.0;
  // Bisection over (1%, 105%) of the saturated rate in 9 halvings: the max rate to ~0.2% of it.
  double lo = 0, hi = hi0 * 1.05;
  ServeSummary best;
  // Smallest rate probed: 1% of saturation; below that the SLO is a property of one request alone.
  if (!meets(model, workload, slo, hi0 * 0.01, requests, &best)) return 0.0;
  lo = hi0 * 0.01;
  for (int i = 0; i < 9; ++i) {
    const double mid = 0.5 * (lo + hi);
    ServeSummary s;
    if (meets(model, workload, slo, mid, requests, &s)) {
      lo = mid;
      best = s;
    } else {
      hi = mid;
    }
  }
  if (at_max) *at_max = best;
  return lo;
}

std::vector<Deployment> candidate_deployments(const Deployment& base) {
  std::vector<Deployment> out;
  const int domain = base.cluster.nvlink_domain_gpus();
  std::vector<int> tps;
  for (int t = 1; t <= domain; t *= 2) tps.push_back(t);
  if (domain % 72 == 0 && domain >= 72) tps.push_back(72);
  for (int tp : tps) {
    Deployment d = base;
    d.tp = tp;
    d.pp = 1;
    d.ep = 1;
    d.attention_dp = 1;
    if (serving::why_invalid(d).empty()) out.push_back(d);
    if (base.model.is_moe() && tp > 1) {
      d.ep = tp;
      if (serving::why_invalid(d).empty()) out.push_back(d);
      d.attention_dp = tp;
      if (serving::why_invalid(d).empty()) out.push_back(d);
    }
  }
  return out;
}

std::vector<ServingPlanResult> evaluate_serving(const ServingCandidate& c, const ServingPlanRequest& r,
                                                const collectives::CommCostFn& comm) {
  std::vector<ServingPlanResult> out;
  const auto& d = c.deployment;
  const IterationModel model(d, comm);
  const double osl = mean_output(r.workload) * std::max(1, r.workload.samples_per_prompt);
  const double isl = mean_input(r.workload);
  const int g = d.gpus();

  ServingPlanResult a;
  a.system = d.cluster.system.name;
  a.layout = layout_label(d);
  a.mode = ServingMode::Aggregated;
  a.gpus_per_replica = g;
  if (model.kv_capacity() <= model.kv_bytes(isl + osl)) {
    a.reason = "weights leave no room for one request's KV cache";
    out.push_back(a);
    return out;
  }
  ServeSummary at;
  a.max_rate = max_rate_under_slo(model, r.workload, r.slo, r.requests_per_probe, &at);
  if (a.max_rate <= 0) {
    a.reason = "misses the SLO even at 1% of its saturated rate";
  } else {
    a.feasible = true;
    a.output_tokens_per_s_per_gpu = a.max_rate * osl / g;
    a.ttft_p99 = at.ttft.p99;
    a.tpot_p99 = at.tpot.p99;
    a.replicas = r.target_rate > 0 ? static_cast<int>(std::ceil(r.target_rate / a.max_rate - 1e-9)) : 1;
    if (a.replicas > r.max_replicas) {
      a.feasible = false;
      a.reason = fmt::format("needs {} replicas", a.replicas);
    }
    a.gpus = a.replicas * g;
    a.cost_per_hour = a.gpus * c.price_per_gpu_hour;
    a.cost_per_million_output_tokens = c.price_per_gpu_hour * g / (a.max_rate * osl * 3600.0) * 1e6;
  }
  out.push_back(a);

  if (!r.disaggregated) return out;
  // Disaggregated: a prefill pool (requests end after their first token) and a decode pool that
  // runs the largest batch whose step time meets the TPOT SLO; the KV cache moves from one to the
  // other (whole request, over NVLink inside an NVLink domain larger than a node, else the NICs).
  ServingPlanResult p = a;
  p.mode = ServingMode::Disaggregated;
  p.feasible = false;
  p.reason.clear();
  const double link =
      d.cluster.nvlink_domain_gpus() > d.cluster.system.gpus_per_node
          ? d.cluster.gpu.nvlink_per_direction().value() * g
          : d.cluster.system.network_bandwidth.value() * g / std::max(1, d.cluster.system.gpus_per_node);
  const double kv_transfer = link > 0 ? model.kv_bytes(isl) / link : 0.0;
  WorkloadSpec pre = r.workload;
  pre.output = {LengthKind::Fixed, 1, 0, 0};
  pre.samples_per_prompt = 1;
  const double ttft_bound = r.slo.ttft.value(), tpot_bound = r.slo.tpot.value();
  const Slo pre_slo{core::Seconds(ttft_bound > 0 ? ttft_bound - kv_transfer : 0.0), core::Seconds{}};
  if (ttft_bound > 0 && pre_slo.ttft.value() <= 0) {
    p.reason = "the KV transfer alone exceeds the TTFT SLO";
    out.push_back(p);
    return out;
  }
  const double rate_p = max_rate_under_slo(model, pre, pre_slo, r.requests_per_probe);
  // Decode: batch B at mean context isl + osl/2; step time t(B); B bounded by KV and max_num_seqs.
  const double ctx = isl + osl / 2;
  const int kv_batch = static_cast<int>(model.kv_capacity() / model.kv_bytes(isl + osl));
  const int bmax = std::min(kv_batch, d.engine.max_num_seqs);
  double best_rate_d = 0, best_step = 0;
  for (int b = 1; b <= bmax; b = b < 8 ? b + 1 : b + std::max(1, b / 8)) {
    BatchWork w;
    w.decode_seqs = b;
    w.decode_ctx_full = b * ctx;
    w.decode_ctx_window = b * (d.model.sliding_window > 0 ? std::min<double>(ctx, d.model.sliding_window) : ctx);
    w.sampled = b;
    const double step = model.iteration(w).total().value() / d.speculation.tokens_per_step();
    if (tpot_bound > 0 && step > tpot_bound) break;
    const double rate = b / step / osl;
    if (rate > best_rate_d) best_rate_d = rate, best_step = step;
  }
  if (rate_p <= 0 || best_rate_d <= 0) {
    p.reason = rate_p <= 0 ? "prefill misses the TTFT SLO" : "decode misses the TPOT SLO at batch 1";
    out.push_back(p);
    return out;
  }
  // Per request: g / rate_p prefill GPU-seconds and g / rate_d decode GPU-seconds.
  const double gpu_s_per_request = g / rate_p + g / best_rate_d;
  p.feasible = true;
  p.max_rate = rate_p * best_rate_d / (rate_p + best_rate_d) * 2;  // a 1:1-GPU unit of both pools, normalised below
  p.output_tokens_per_s_per_gpu = osl / gpu_s_per_request;
  p.tpot_p99 = best_step;
  p.ttft_p99 = ttft_bound;  // bounded by construction
  const double target = r.target_rate > 0 ? r.target_rate : std::max(rate_p, best_rate_d);
  const int np = static_cast<int>(std::ceil(target / rate_p - 1e-9));
  const int nd = static_cast<int>(std::ceil(target / best_rate_d - 1e-9));
  p.prefill_gpus = np * g;
  p.decode_gpus = nd * g;
  p.gpus = p.prefill_gpus + p.decode_gpus;
  p.replicas = np + nd;
  p.max_rate = std::min(np * rate_p, nd * best_rate_d);
  p.cost_per_hour = p.gpus * c.price_per_gpu_hour;
  p.cost_per_million_output_tokens = c.price_per_gpu_hour * gpu_s_per_request / 3600.0 / osl * 1e6;
  // Check the sized pools event by event (simulate_disaggregated): the same P:D ratio scaled to at
  // most 8 instances, at the same load per instance; its p99 TTFT and TPOT replace the analytic
  // ones, and a plan whose simulated pools miss the SLO is dropped.
  const double scale = std::min(1.0, 8.0 / (np + nd));
  Disaggregation dis;
  dis.prefill_replicas = std::max(1, static_cast<int>(std::lround(np * scale)));
  dis.decode_replicas = std::max(1, static_cast<int>(std::lround(nd * scale)));
  dis.link_bandwidth = core::BytesPerSecond(link / g);
  dis.transfer = KvTransfer::Layer;
  WorkloadSpec sim = r.workload;
  sim.arrival = ArrivalKind::Poisson;
  sim.rate = (target / p.max_rate) * std::min(dis.prefill_replicas * rate_p, dis.decode_replicas * best_rate_d);
  sim.num_requests = r.requests_per_probe;
  const auto res = serving::simulate_disaggregated(model, model, dis, sim, serving::make_requests(sim));
  const auto sum = serving::summarize(res, {}, 0.0);
  if (res.fits && sum.completed > 0) {
    p.ttft_p99 = sum.ttft.p99;
    p.tpot_p99 = sum.tpot.p99;
    if (!r.slo.met(core::Seconds(sum.ttft.p99), core::Seconds(sum.tpot.p99))) {
      p.feasible = false;
      p.reason = fmt::format("the simulated {}:{} pools miss the SLO (p99 TTFT {:.0f} ms, TPOT {:.1f} ms)",
                             dis.prefill_replicas, dis.decode_replicas, sum.ttft.p99 * 1e3, sum.tpot.p99 * 1e3);
    }
  }
  out.push_back(p);
  return out;
}

std::vector<ParetoPoint> pareto_sweep(const ServingCandidate& c, const ServingPlanRequest& r,
                                      const collectives::CommCostFn& comm) {
  std::vector<ParetoPoint> out;
  const IterationModel model(c.deployment, comm);
  for (int n = 1; n <= r.pareto_max_concurrency; n *= 2) {
    WorkloadSpec w = r.workload;
    w.arrival = ArrivalKind::ClosedLoop;
    w.concurrency = n;
    w.num_requests = std::max(2 * n, 32);
    const auto res = serving::simulate(model, w, serving::make_requests(w));
    if (!res.fits) break;
    const auto s = serving::summarize(res, {}, 0.0);
    out.push_back({c.deployment.cluster.system.name, layout_label(c.deployment), n,
                   s.output_tokens_per_s_per_gpu.value(), s.tokens_per_s_per_user.value()});
  }
  return out;
}

RankKey rank_key(const ServingPlanResult& plan, const ServingPlanRequest& request) {
  return {.feasible = plan.feasible,
          .key = request.target_rate > 0 ? plan.cost_per_hour : plan.cost_per_million_output_tokens,
          .tie = plan.cost_per_million_output_tokens};
}

void rank_plans(std::vector<ServingPlanResult>& plans, const ServingPlanRequest& request) {
  rank(plans, [&](const ServingPlanResult& p) { return rank_key(p, request); });
}

std::vector<ParetoPoint> pareto_front(std::vector<ParetoPoint> points) {
  // Sort by interactivity descending; keep points whose throughput beats every more interactive one.
  std::sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
  });
  std::vector<ParetoPoint> front;
  double best = -1;
  for (const auto& p : points) {
    if (p.tokens_per_s_per_gpu > best) {
      front.push_back(p);
      best = p.tokens_per_s_per_gpu;
    }
  }
  std::reverse(front.begin(), front.end());
  return front;
}

}  // namespace fmsim::planner
