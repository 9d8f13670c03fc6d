// Benchmarks of the serving simulator: issue 14's target is 10,000 requests through one replica
// in under 0.5 s.
#include <benchmark/benchmark.h>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/serving_calibration.hpp"
#include "config/catalog_loader.hpp"
#include "serving/simulator.hpp"
#include "training/comm_adapter.hpp"

namespace {

using namespace fmsim;

serving::Deployment llama70b_fp8_tp2() {
  static const auto catalog = config::load_catalog();
  const auto cal = config::load_serving_calibration();
  serving::Deployment d;
  d.model = config::load_model("llama3.1-70b");
  d.cluster = config::parse_cluster(catalog, "p5en.48xlarge");
  d.tp = 2;
  d.weights = core::Precision::FP8;
  d.kv = core::Precision::FP8;
  d.engine = *cal.engine("vllm");
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  return d;
}

// 10,000 Poisson requests (1k in / 1k out, lognormal lengths) at 20 requests/s.
void BM_Serve10kRequests(benchmark::State& state) {
  const auto d = llama70b_fp8_tp2();
  const serving::IterationModel model(d, training::make_comm_cost(d.cluster));
  serving::WorkloadSpec wl;
  wl.arrival = serving::ArrivalKind::Poisson;
  wl.rate = 20;
  wl.num_requests = 10000;
  wl.input = {serving::LengthKind::LogNormal, 1024, 0.5, 8192};
  wl.output = {serving::LengthKind::LogNormal, 1024, 0.5, 8192};
  const auto requests = serving::make_requests(wl);
  for (auto _ : state) {
    const auto r = serving::simulate(model, wl, requests);
    benchmark::DoNotOptimize(r.duration_s);
  }
}
BENCHMARK(BM_Serve10kRequests)->Unit(benchmark::kMillisecond)->UseRealTime();

// One iteration's cost (the planner calls it millions of times).
void BM_IterationCost(benchmark::State& state) {
  const auto d = llama70b_fp8_tp2();
  const serving::IterationModel model(d, training::make_comm_cost(d.cluster));
  serving::BatchWork w;
  w.decode_seqs = 128;
  w.decode_ctx_full = w.decode_ctx_window = 128 * 1500.0;
  w.prefill_tokens = 2048;
  w.prefill_seqs = 1;
  w.prefill_attn_full = w.prefill_attn_window = 2048.0 * 1024;
  w.sampled = 129;
  for (auto _ : state) benchmark::DoNotOptimize(model.iteration(w).total());
}
BENCHMARK(BM_IterationCost);

}  // namespace
