#include "jobspec/validate_inference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "collectives/comm_cost.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "serving/simulator.hpp"

namespace fmsim::jobspec {
namespace {

// The largest closed loop a row may ask for (config::read_inference_csv refuses more).
constexpr int kMaxClients = 4096;
// Steady-state requests a closed-loop row's mean TTFT and TPOT are taken over, at least.
constexpr int kSteadyRequests = 64;

// Requests of a trtllm-bench max-throughput run, by sequence length (ISL + OSL): the TensorRT-LLM
// perf-overview protocol ("For each input and output sequence length combination, the table below
// details the $num_requests that were used": 1024/1024 -> 3000, 8192/1024 and 1024/8192 -> 1500,
// 32768/1024 and 1024/32768 -> 1000, docs/source/developer-guide/perf-overview.md @03e27c7; the
// v1.0-era table: 128/128 -> 30000, 128/2048, 500/2000, 1000/1000, 2048/128 -> 3000; 128/4096,
// 2048/2048, 5000/500 -> 1500; 20000/2000 -> 1000). The throughput it reports is the whole run's
// (ramp-up and drain included), so the request count matters when the batch holds most of them.
int trtllm_bench_requests(std::int64_t isl, std::int64_t osl) {
  const std::int64_t len = isl + osl;
  if (len <= 256) return 30000;
  if (len <= 2500) return 3000;
  if (len <= 10000) return 1500;
  return 1000;
}

// Requests to simulate for a row: the benchmark's own count where its protocol states it, else
// enough that the steady state dominates the ramp-up and drain.
int requests_for(const config::InferenceRow& r, const serving::EngineProfile& e) {
  if (r.scenario == config::BenchmarkScenario::StaticBatch) return r.concurrency;
  // A closed loop: the first round is the warm-up (every client at once), the last keeps the load
  // on while the steady rounds between them complete. The clients' request paths are drawn per
  // request, so the steady rounds hold at least kSteadyRequests requests (at most the
  // benchmark's own 19 steady rounds per client).
  if (r.scenario == config::BenchmarkScenario::ClosedLoop) {
    const int c = std::max(1, r.concurrency);
    const int steady_rounds = std::clamp((kSteadyRequests + c - 1) / c, 1, 19);
    return std::min((2 + steady_rounds) * c, 3 * kMaxClients);
  }
  if (e.kind == serving::EngineKind::TrtLlm) return trtllm_bench_requests(r.isl, r.osl);
  return std::clamp(3 * e.max_num_seqs, 1000, 6144);
}

}  // namespace

std::vector<InferenceRowResult> predict_inference_rows(const std::vector<config::InferenceRow>& rows,
                                                       const serving::ServingCalibration& cal,
                                                       const hardware::Catalog& catalog, int threads) {
  std::vector<InferenceRowResult> out(rows.size());
  const int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Rows are independent; each thread takes the next unpredicted one (the costly ones, high
  // concurrency, are few and far apart).
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_turn;
  auto work = [&] {
    try {
      for (std::size_t i = next++; i < rows.size(); i = next++) out[i] = predict_inference_row(rows[i], cal, catalog);
    } catch (...) {
      const std::lock_guard lock(failure_turn);
      if (!failure) failure = std::current_exception();
      next = rows.size();
    }
  };
  {
    std::vector<std::jthread> pool;  // joined on the way out, also when starting one more throws
    for (int t = 1; t < n; ++t) pool.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

namespace {

// Sequences a decode step of a closed-loop row carries per attention-DP rank: its clients, at
// most the engine's max batch as the row states it.
double decode_batch_per_rank(const config::InferenceRow& r) {
  const double per_rank = static_cast<double>(r.concurrency) / (r.attention_dp ? std::max(1, r.tp) : 1);
  return r.max_batch > 0 ? std::min(per_rank, static_cast<double>(r.max_batch)) : per_rank;
}

// Least absolute deviations of y ~ a + b x with a, b >= 0, by iteratively reweighted least squares.
std::pair<double, double> lad_fit(const std::vector<double>& x, const std::vector<double>& y) {
  double a = 0, b = 0;
  std::vector<double> w(x.size(), 1.0);
  for (int iter = 0; iter < 50; ++iter) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sw += w[i];
      sx += w[i] * x[i];
      sy += w[i] * y[i];
      sxx += w[i] * x[i] * x[i];
      sxy += w[i] * x[i] * y[i];
    }
    const double det = sw * sxx - sx * sx;
    double na = sw > 0 ? sy / sw : 0, nb = 0;
    if (det > 0) {
      nb = (sw * sxy - sx * sy) / det;
      na = (sy - nb * sx) / sw;
    }
    // Keep both physical (>= 0): a negative slope or intercept is refitted with it at zero.
    if (nb < 0) {
      nb = 0;
      na = sw > 0 ? sy / sw : 0;
    }
    if (na < 0) {
      na = 0;
      nb = sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
    }
    a = na;
    b = nb;
    for (std::size_t i = 0; i < x.size(); ++i) w[i] = 1.0 / std::max(1e-6, std::abs(y[i] - a - b * x[i]));
  }
  return {a, b};
}

}  // namespace

serving::ServingCalibration without_engine_overheads(serving::ServingCalibration cal) {
  for (auto& [name, e] : cal.engines) {
    e.iteration_overhead = core::Seconds(0.0);
    e.sequence_overhead = core::Seconds(0.0);
    e.request_overhead = core::Seconds(0.0);
  }
  return cal;
}

std::vector<EngineOverheadFit> fit_engine_overheads(const std::vector<InferenceRowResult>& at_zero,
                                                    const std::function<bool(const config::InferenceRow&)>& use) {
  std::vector<EngineOverheadFit> fits;
  for (const auto kind : {serving::EngineKind::TrtLlm, serving::EngineKind::Vllm, serving::EngineKind::Sglang}) {
    std::vector<double> bx, ty;
    std::vector<const InferenceRowResult*> ttft_rows;
    for (const auto& r : at_zero) {
      const auto& row = r.row;
      if (!r.predicted || row.engine != kind || row.disaggregated ||
          row.scenario != config::BenchmarkScenario::ClosedLoop || !use(row))
        continue;
      const double batch = decode_batch_per_rank(row);
      if (r.tpot.measured && r.tpot.predicted && *r.tpot.measured > 0) {
        bx.push_back(batch);
        ty.push_back((*r.tpot.measured - *r.tpot.predicted) / 1e3);
      }
      if (row.concurrency <= kRequestOverheadClients && r.ttft.measured && r.ttft.predicted) ttft_rows.push_back(&r);
    }
    if (bx.empty()) continue;
    EngineOverheadFit f;
    f.engine = kind;
    std::tie(f.iteration_overhead_s, f.sequence_overhead_s) = lad_fit(bx, ty);
    f.tpot_rows = static_cast<int>(bx.size());
    std::vector<double> gap;
    for (const auto* r : ttft_rows) {
      const double batch = decode_batch_per_rank(r->row);
      gap.push_back((*r->ttft.measured - *r->ttft.predicted) / 1e3 -
                    (f.iteration_overhead_s + f.sequence_overhead_s * batch));
    }
    if (!gap.empty()) {
      std::sort(gap.begin(), gap.end());
      const std::size_t m = gap.size() / 2;
      f.request_overhead_s = std::max(0.0, gap.size() % 2 ? gap[m] : 0.5 * (gap[m - 1] + gap[m]));
    }
    f.ttft_rows = static_cast<int>(gap.size());
    fits.push_back(f);
  }
  return fits;
}

std::vector<EngineOverheadFit> measure_engine_overheads(const std::vector<config::InferenceRow>& rows,
                                                        const std::vector<InferenceRowResult>& at_zero,
                                                        const serving::ServingCalibration& cal,
                                                        const hardware::Catalog& catalog,
                                                        const std::function<bool(const config::InferenceRow&)>& use) {
  auto fits = fit_engine_overheads(at_zero, use);
  std::vector<config::InferenceRow> low;
  for (const auto& r : rows) {
    if (use(r) && !r.disaggregated && r.scenario == config::BenchmarkScenario::ClosedLoop && r.reason.empty() &&
        r.concurrency <= kRequestOverheadClients)
      low.push_back(r);
  }
  // request_overhead solves median(measured - predicted) = 0 on those rows, by bisection on
  // [0, kRequestOverheadMax]: a closed loop's clients regroup as the request path delays them, so
  // TTFT does not move one for one with it (a fixed-point step can oscillate between groupings).
  std::vector<double> lo(fits.size(), 0.0), hi(fits.size(), kRequestOverheadMax);
  // An engine without such rows keeps the one-pass value (0 when it has no TTFT at all).
  std::vector<bool> bisect(fits.size(), false);
  for (std::size_t i = 0; i < fits.size(); ++i) {
    bisect[i] = std::any_of(low.begin(), low.end(),
                            [&](const config::InferenceRow& r) { return r.engine == fits[i].engine && r.ttft_ms; });
  }
  for (int step = 0; step < kRequestOverheadSteps; ++step) {
    for (std::size_t i = 0; i < fits.size(); ++i) {
      if (bisect[i]) fits[i].request_overhead_s = 0.5 * (lo[i] + hi[i]);
    }
    const auto pass = predict_inference_rows(low, with_engine_overheads(without_engine_overheads(cal), fits), catalog);
    for (std::size_t i = 0; i < fits.size(); ++i) {
      if (!bisect[i]) continue;
      std::vector<double> gap;
      for (const auto& r : pass) {
        if (r.predicted && r.row.engine == fits[i].engine && r.ttft.measured && r.ttft.predicted)
          gap.push_back(*r.ttft.measured - *r.ttft.predicted);
      }
      fits[i].ttft_rows = static_cast<int>(gap.size());
      if (gap.empty()) continue;
      std::nth_element(gap.begin(), gap.begin() + static_cast<std::ptrdiff_t>(gap.size() / 2), gap.end());
      (gap[gap.size() / 2] > 0 ? lo[i] : hi[i]) = fits[i].request_overhead_s;
    }
  }
  for (std::size_t i = 0; i < fits.size(); ++i) {
    if (bisect[i]) fits[i].request_overhead_s = 0.5 * (lo[i] + hi[i]);
  }
  return fits;
}

serving::ServingCalibration with_engine_overheads(serving::ServingCalibration cal,
                                                  const std::vector<EngineOverheadFit>& fits) {
  for (const auto& f : fits) {
    for (auto& [name, e] : cal.engines) {
      if (e.kind != f.engine) continue;
      e.iteration_overhead = core::Seconds(f.iteration_overhead_s);
      e.sequence_overhead = core::Seconds(f.sequence_overhead_s);
      e.request_overhead = core::Seconds(f.request_overhead_s);
    }
  }
  return cal;
}

std::string partition_of(const config::InferenceRow& row, InferencePartition p, const hardware::Catalog& catalog) {
  switch (p) {
    case InferencePartition::Gpu: return row.gpu_text;
    case InferencePartition::Generation: {
      const auto* sys = catalog.find_system(row.system);
      const auto* gpu = sys ? catalog.find_gpu(sys->gpu) : nullptr;
      return gpu ? std::string(hardware::kArchitectureWords.name(gpu->architecture)) : row.gpu_text;
    }
    case InferencePartition::Engine: return inference_engine_name(row);
    case InferencePartition::Model: return row.model.empty() ? row.model_text : row.model;
    case InferencePartition::Mode: return row.disaggregated ? "disagg" : "agg";
  }
  return {};
}

std::vector<InferenceRowResult> predict_held_out(const std::vector<config::InferenceRow>& rows,
                                                 const serving::ServingCalibration& cal,
                                                 const hardware::Catalog& catalog, InferencePartition p) {
  const auto at_zero = predict_inference_rows(rows, without_engine_overheads(cal), catalog);
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i) groups[partition_of(rows[i], p, catalog)].push_back(i);
  std::vector<InferenceRowResult> out(rows.size());
  for (const auto& [key, members] : groups) {
    const std::string held = key;  // clang 14 cannot capture a structured binding in a lambda
    auto fits = measure_engine_overheads(rows, at_zero, cal, catalog, [&](const config::InferenceRow& r) {
      return partition_of(r, p, catalog) != held;
    });
    // An engine with no rows left (its own partition held out) gets the mean of the others': the
    // shipped values were fitted on its rows.
    if (!fits.empty()) {
      EngineOverheadFit mean;
      for (const auto& f : fits) {
        mean.iteration_overhead_s += f.iteration_overhead_s / fits.size();
        mean.sequence_overhead_s += f.sequence_overhead_s / fits.size();
        mean.request_overhead_s += f.request_overhead_s / fits.size();
      }
      for (const auto kind : {serving::EngineKind::TrtLlm, serving::EngineKind::Vllm, serving::EngineKind::Sglang}) {
        if (std::none_of(fits.begin(), fits.end(), [&](const EngineOverheadFit& f) { return f.engine == kind; })) {
          mean.engine = kind;
          fits.push_back(mean);
        }
      }
    }
    std::vector<config::InferenceRow> part;
    for (const std::size_t i : members) part.push_back(rows[i]);
    // No rows left to fit on: the host costs are unknown, taken as zero (the shipped values were
    // fitted on the held-out rows).
    const auto held_cal =
        fits.empty() ? without_engine_overheads(cal) : with_engine_overheads(without_engine_overheads(cal), fits);
    auto predicted = predict_inference_rows(part, held_cal, catalog);
    for (std::size_t k = 0; k < members.size(); ++k) out[members[k]] = std::move(predicted[k]);
  }
  return out;
}

std::string inference_engine_name(const config::InferenceRow& r) {
  return r.engine ? std::string(serving::kEngineKindWords.name(*r.engine)) : std::string();
}

InferenceRowResult predict_inference_row(const config::InferenceRow& row, const serving::ServingCalibration& cal,
                                         const hardware::Catalog& catalog) {
  InferenceRowResult out;
  out.row = row;
  out.throughput.measured = row.output_tok_s_per_gpu;
  out.ttft.measured = row.ttft_ms;
  out.tpot.measured = row.tpot_ms;
  out.e2e.measured = row.e2e_ms;
  if (!row.reason.empty()) {
    out.reason = row.reason;
    return out;
  }
  serving::Deployment d;
  try {
    d.model = config::load_model(row.model);
    d.cluster = config::parse_cluster(catalog, row.system);
  } catch (const core::InputError& e) {
    out.reason = e.what();
    return out;
  }
  d.tp = row.tp;
  d.pp = row.pp;
  d.ep = row.ep;
  d.attention_dp = row.attention_dp ? row.tp : 1;
  d.weights = row.weights;
  d.activations = row.activations;
  d.kv = row.kv;
  const auto* engine = cal.engine(inference_engine_name(row));
  if (!engine) {
    out.reason = "no engine profile '" + inference_engine_name(row) + "'";
    return out;
  }
  d.engine = *engine;
  // The engine's limits (max batch per attention-DP rank, token budget, chunked prefill) as the
  // run configured them.
  if (row.max_batch > 0) d.engine.max_num_seqs = row.max_batch;
  if (row.max_num_tokens > 0) d.engine.max_num_batched_tokens = row.max_num_tokens;
  if (row.chunked_prefill) d.engine.chunked_prefill = *row.chunked_prefill;
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  // Disaggregated: a prefill and a decode deployment, each with its pool's layout.
  serving::Deployment pre = d, dec = d;
  if (row.disaggregated) {
    auto apply = [](serving::Deployment& x, const config::PoolLayout& p) {
      x.tp = p.tp;
      x.pp = p.pp;
      x.ep = p.ep;
      x.attention_dp = p.attention_dp ? p.tp : 1;
      if (p.batch > 0) x.engine.max_num_seqs = p.batch;
      if (p.max_num_tokens > 0) x.engine.max_num_batched_tokens = p.max_num_tokens;
    };
    apply(pre, row.prefill);
    apply(dec, row.decode);
    for (const auto* x : {&pre, &dec}) {
      if (auto why = serving::why_invalid(*x); !why.empty()) {
        out.reason = (x == &pre ? "prefill pool: " : "decode pool: ") + why;
        return out;
      }
    }
  } else if (auto why = serving::why_invalid(d); !why.empty()) {
    out.reason = why;
    return out;
  }
  serving::WorkloadSpec wl;
  wl.input.mean = static_cast<double>(row.isl);
  wl.output.mean = static_cast<double>(row.osl);
  wl.arrival = row.arrival;
  wl.concurrency = std::max(1, row.concurrency);
  wl.num_requests = requests_for(row, d.engine);
  // Closed-loop benchmarks (genai-perf, AIPerf) send over HTTP to the engine's server; trtllm-bench
  // and vLLM's latency benchmark hand requests to the engine in their own process.
  wl.path = row.scenario == config::BenchmarkScenario::ClosedLoop ? serving::RequestPath::Server
                                                                  : serving::RequestPath::InProcess;
  // The request path's time varies from request to request (HTTP, tokenization, the hand-off to
  // the engine core), so the clients reach the engine at random points of its iteration cycle.
  wl.random_path_time = wl.path == serving::RequestPath::Server;
  if (row.scenario == config::BenchmarkScenario::StaticBatch) d.engine.max_num_seqs = row.concurrency;
  // The per-sequence host cost is the server's: detokenizing and streaming each sequence's token
  // every step. A benchmark in the engine's own process streams nothing.
  if (wl.path == serving::RequestPath::InProcess) {
    for (auto* x : {&d, &pre, &dec}) x->engine.sequence_overhead = core::Seconds(0.0);
  }
  // A closed loop's last round only keeps the load on while the steady round completes: the
  // simulation stops when that round has (the drain after it cannot change its times).
  if (row.scenario == config::BenchmarkScenario::ClosedLoop && (!row.disaggregated || row.osl > 1))
    wl.stop_after = wl.num_requests - row.concurrency;
  const auto requests = serving::make_requests(wl);
  serving::ServeResult r;
  int gpus = d.gpus();
  if (row.disaggregated) {
    const auto comm = collectives::make_comm_cost(d.cluster);
    const serving::IterationModel pm(pre, comm), dm(dec, comm);
    serving::Disaggregation dis;
    dis.prefill_replicas = row.prefill.workers;
    dis.decode_replicas = row.decode.workers;
    dis.transfer = serving::KvTransfer::Layer;
    // Every disaggregated row ran under Dynamo, whose frontend streams the decode worker's output:
    // the client's first token comes with the decode worker's first step (docs/models/serving.md).
    dis.first_token = serving::FirstTokenFrom::Decode;
    // As `fmsim serve --disagg`: NVLink inside one NVLink domain, else the network per GPU.
    const auto& c = d.cluster;
    gpus = row.prefill.workers * pre.gpus() + row.decode.workers * dec.gpus();
    if (gpus <= c.system.nvlink_domain_gpus) {
      dis.link_bandwidth = c.gpu.nvlink_per_direction();
    } else {
      dis.link_bandwidth = core::BytesPerSecond(c.system.network_bandwidth.value() * c.fabric.efficiency /
                                                std::max(1, c.system.gpus_per_node));
      dis.link_latency = c.fabric.latency;
    }
    r = serving::simulate_disaggregated(pm, dm, dis, wl, requests);
  } else {
    const serving::IterationModel model(d, collectives::make_comm_cost(d.cluster));
    r = serving::simulate(model, wl, requests);
  }
  double steady_tokens_per_s = 0;
  if (row.scenario == config::BenchmarkScenario::ClosedLoop) {
    // Benchmarks measure the steady state: the clients' first requests (all sent at once) are
    // warm-up and the last ones (fewer clients left running) the drain; latencies leave both out,
    // throughput counts every request completing between the c-th and the (N-c)-th completion.
    const int n = wl.num_requests, c = row.concurrency;
    std::vector<double> finishes;
    int steady_done = 0;  // the first n - c requests (warm-up and steady rounds) completed
    for (const auto& q : r.requests) {
      if (!q.completed()) continue;
      finishes.push_back(q.finish.value());
      if (q.request < n - c) steady_done++;
    }
    std::sort(finishes.begin(), finishes.end());
    // Every completion up to the last of the steady round's is known, also when the run stopped
    // there (wl.stop_after); with fixed lengths no later request is refused if none of those was.
    if (steady_done == n - c && n > 2 * c + 1) {
      const double span = finishes[static_cast<std::size_t>(n - c - 1)] - finishes[static_cast<std::size_t>(c - 1)];
      if (span > 0) steady_tokens_per_s = (n - 2 * c) * static_cast<double>(row.osl) / span;
    }
    double first_sum = 0;
    int first_n = 0;
    for (const auto& q : r.requests) {
      if (q.request < c && q.completed()) {
        first_sum += q.ttft().value();
        first_n++;
      }
    }
    if (first_n > 0) out.ttft_first_round_ms = first_sum / first_n * 1e3;
    std::erase_if(r.requests, [&](const serving::RequestResult& q) { return q.request < c || q.request >= n - c; });
  }
  if (!r.fits) {
    out.reason = "does not fit: " + r.reason;
    return out;
  }
  const auto m = serving::summarize(r, {}, 0.0);
  out.predicted = true;
  out.kv_capacity_tokens = r.memory.token_capacity;
  out.batch_mean = static_cast<int>(std::lround(m.batch_mean));
  out.throughput.predicted =
      steady_tokens_per_s > 0 ? steady_tokens_per_s / gpus : m.output_tokens_per_s_per_gpu.value();
  out.ttft.predicted = m.ttft.mean * 1e3;
  if (row.scenario == config::BenchmarkScenario::ClosedLoop) {
    out.ttft_steady_ms = m.ttft.mean * 1e3;
    // The reported mean covers profiled_rounds requests per client from a drained engine: the
    // first round is every client sending at once (the simulation's own first round), the others
    // the steady state. Nothing fitted: the rounds are the benchmark's (validation/README.md).
    if (row.profiled_rounds > 0 && out.ttft_first_round_ms > 0) {
      const double rounds = row.profiled_rounds;
      out.ttft.predicted = (out.ttft_first_round_ms + (rounds - 1) * out.ttft_steady_ms) / rounds;
    }
  }
  out.tpot.predicted = m.tpot.mean * 1e3;
  out.e2e.predicted = m.e2e.mean * 1e3;
  return out;
}

}  // namespace fmsim::jobspec
