#include "jobspec/validate_inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "serving/simulator.hpp"
#include "training/comm_adapter.hpp"

namespace fmsim::jobspec {
namespace {

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
  if (r.scenario == config::BenchmarkScenario::ClosedLoop) return std::clamp(5 * r.concurrency, 64, 1250);
  if (e.kind == serving::EngineKind::TrtLlm) return trtllm_bench_requests(r.isl, r.osl);
  return std::clamp(3 * e.max_num_seqs, 1000, 6144);
}

}  // namespace

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
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  if (auto why = serving::why_invalid(d); !why.empty()) {
    out.reason = why;
    return out;
  }
  serving::WorkloadSpec wl;
  wl.input.mean = static_cast<double>(row.isl);
  wl.output.mean = static_cast<double>(row.osl);
  wl.arrival = row.arrival;
  wl.concurrency = std::max(1, row.concurrency);
  wl.num_requests = requests_for(row, d.engine);
  if (row.scenario == config::BenchmarkScenario::StaticBatch) d.engine.max_num_seqs = row.concurrency;
  const serving::IterationModel model(d, training::make_comm_cost(d.cluster));
  const auto requests = serving::make_requests(wl);
  auto r = serving::simulate(model, wl, requests);
  double steady_tokens_per_s = 0;
  if (row.scenario == config::BenchmarkScenario::ClosedLoop) {
    // Benchmarks measure the steady state: the clients' first requests (all sent at once) are
    // warm-up and the last ones (fewer clients left running) the drain; latencies leave both out,
    // throughput counts every request completing between the c-th and the (N-c)-th completion.
    const int n = wl.num_requests, c = row.concurrency;
    std::vector<double> finishes;
    for (const auto& q : r.requests) {
      if (q.completed()) finishes.push_back(q.finish.value());
    }
    std::sort(finishes.begin(), finishes.end());
    if (static_cast<int>(finishes.size()) == n && n > 2 * c + 1) {
      const double span = finishes[static_cast<std::size_t>(n - c - 1)] - finishes[static_cast<std::size_t>(c - 1)];
      if (span > 0) steady_tokens_per_s = (n - 2 * c) * static_cast<double>(row.osl) / span;
    }
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
      steady_tokens_per_s > 0 ? steady_tokens_per_s / d.gpus() : m.output_tokens_per_s_per_gpu.value();
  out.ttft.predicted = m.ttft.mean * 1e3;
  out.tpot.predicted = m.tpot.mean * 1e3;
  out.e2e.predicted = m.e2e.mean * 1e3;
  return out;
}

}  // namespace fmsim::jobspec
