// Benchmarks of the serving simulator: issue 14's target is 10,000 requests through one replica
// in under 0.5 s.
#include <benchmark/benchmark.h>

#include "collectives/comm_cost.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "config/inference_csv.hpp"
#include "config/model_loader.hpp"
#include "config/serving_calibration.hpp"
#include "jobspec/validate_inference.hpp"
#include "planner/serving_plan.hpp"
#include "serving/simulator.hpp"

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

// `count` Poisson requests at 20 requests/s with 1k-token mean lengths (`kind`) through one replica.
void serve_requests(benchmark::State& state, const serving::Deployment& d, serving::LengthKind kind, int count) {
  const serving::IterationModel model(d, collectives::make_comm_cost(d.cluster));
  serving::WorkloadSpec wl;
  wl.arrival = serving::ArrivalKind::Poisson;
  wl.rate = 20;
  wl.num_requests = count;
  const double spread = kind == serving::LengthKind::LogNormal ? 0.5 : 0.0;
  wl.input = {kind, 1024, spread, 8192};
  wl.output = {kind, 1024, spread, 8192};
  const auto requests = serving::make_requests(wl);
  for (auto _ : state) {
    const auto r = serving::simulate(model, wl, requests);
    benchmark::DoNotOptimize(r.duration);
  }
}

// Llama 3.1 70B FP8 on TP 2, lognormal lengths.
void BM_Serve10kRequests(benchmark::State& state) {
  serve_requests(state, llama70b_fp8_tp2(), serving::LengthKind::LogNormal, 10000);
}
BENCHMARK(BM_Serve10kRequests)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same at 100,000 requests (issue 39: serve at 10,000 and 100,000 requests).
void BM_Serve100kRequests(benchmark::State& state) {
  serve_requests(state, llama70b_fp8_tp2(), serving::LengthKind::LogNormal, 100000);
}
BENCHMARK(BM_Serve100kRequests)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// The whole of AIConfigurator's measured sample (validation/inference_aic.csv, 3,956
// configurations) predicted on `threads` threads: what `fmsim validate inference --csv` costs
// (issue 39's target: 10 s).
void BM_ValidateAiconfiguratorSample(benchmark::State& state) {
  static const auto catalog = config::load_catalog();
  const auto cal = config::load_serving_calibration();
  const auto rows = config::read_inference_csv(std::string(FMSIM_BENCH_SOURCE_DIR) + "/validation/inference_aic.csv");
  for (auto _ : state) {
    const auto results = jobspec::predict_inference_rows(rows, cal, catalog, static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(results.size());
  }
}
BENCHMARK(BM_ValidateAiconfiguratorSample)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// One iteration's cost (the planner calls it millions of times).
void BM_IterationCost(benchmark::State& state) {
  const auto d = llama70b_fp8_tp2();
  const serving::IterationModel model(d, collectives::make_comm_cost(d.cluster));
  serving::BatchWork w;
  w.decode_seqs = 128;
  w.decode_ctx_full = w.decode_ctx_window = 128 * 1500.0;
  w.prefill_tokens = 2048;
  w.prefill_seqs = 1;
  w.prefill_attn_full = w.prefill_attn_window = 2048.0 * 1024;
  w.sampled = 129;
  for (auto _ : state) benchmark::DoNotOptimize(model.iteration(w).total().value());
}
BENCHMARK(BM_IterationCost);

}  // namespace

// DeepSeek-V3 FP8 on 8 x H200 with attention DP and EP 8 (per-rank scheduling and the busiest
// rank's cost each iteration): 10,000 Poisson requests of 1k in / 1k out.
void BM_Serve10kRequestsDep8(benchmark::State& state) {
  static const auto catalog = config::load_catalog();
  const auto cal = config::load_serving_calibration();
  serving::Deployment d;
  d.model = config::load_model("deepseek-v3");
  d.cluster = config::parse_cluster(catalog, "p5en.48xlarge");
  d.tp = d.ep = d.attention_dp = 8;
  d.weights = d.kv = core::Precision::FP8;
  d.engine = *cal.engine("trtllm");
  d.gpu_cal = cal.gpu(d.cluster.gpu.architecture);
  d.moe_cal = cal.moe;
  serve_requests(state, d, serving::LengthKind::Fixed, 10000);
}
BENCHMARK(BM_Serve10kRequestsDep8)->Unit(benchmark::kMillisecond)->UseRealTime();

// The plan-serve search: Llama 3.1 70B FP8 over p5, p5en, p6-b200 and u-p6e-gb200x72, every TP
// layout, aggregated and disaggregated, the rate bisection under p99 TTFT 2 s / TPOT 50 ms and
// the Pareto sweep (issue 14's target: under 10 s on 2 cores).
void BM_PlanServe4Families(benchmark::State& state) {
  static const auto catalog = config::load_catalog();
  const auto cal = config::load_serving_calibration();
  for (auto _ : state) {
    std::size_t n = 0;
    for (const char* family : {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "u-p6e-gb200x72"}) {
      serving::Deployment base;
      base.model = config::load_model("llama3.1-70b");
      base.cluster = config::parse_cluster(catalog, family);
      base.weights = base.kv = core::Precision::FP8;
      base.engine = *cal.engine("trtllm");
      base.gpu_cal = cal.gpu(base.cluster.gpu.architecture);
      base.moe_cal = cal.moe;
      planner::ServingPlanRequest req;
      req.workload.input = {serving::LengthKind::Fixed, 1024, 0, 0};
      req.workload.output = {serving::LengthKind::Fixed, 1024, 0, 0};
      req.target_rate = 500;
      req.slo = {core::Seconds(2.0), core::Seconds(0.05)};
      const auto comm = collectives::make_comm_cost(base.cluster);
      const auto& sys = base.cluster.system;
      const double price = sys.gpus() > 0 ? sys.price_per_hour_usd / sys.gpus() : 0.0;
      for (const auto& d : planner::candidate_deployments(base)) {
        const planner::ServingCandidate c{d, price};
        n += planner::evaluate_serving(c, req, comm).size();
        n += planner::pareto_sweep(c, req, comm).size();
      }
    }
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_PlanServe4Families)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
