// Planner throughput on the default search (Llama 3.1 70B, 512 GPUs, P5/P5en/P6-B200/P6e-GB200):
// layouts considered per second, step estimates per second, and the cost of one estimate.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "collectives/comm_cost.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "parallelism/memory.hpp"
#include "planner/planner.hpp"

namespace {

using namespace fmsim;

const hardware::Catalog& bench_catalog() {
  static const hardware::Catalog catalog = config::load_catalog({});
  return catalog;
}

const training::Calibration& bench_calibration() {
  static const training::Calibration calibration = config::load_training_calibration();
  return calibration;
}

planner::PlanRequest default_request(int threads) {
  planner::PlanRequest r;
  r.model = config::load_model("llama3.1-70b");
  for (const char* s : {"p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "u-p6e-gb200x72"}) {
    r.systems.push_back(config::cluster_for_gpus(bench_catalog(), s, 512));
  }
  r.gpu_counts = {512};
  r.seq_len = 8192;
  r.global_batch = 1024;
  r.tokens = 15e12;
  r.framework.overlap_tp_comm = true;
  r.threads = threads;
  return r;
}

// The whole default search. Counters: layouts/s = every layout considered (pruned or costed) per
// second; estimates/s = step estimates (layouts that divide and fit) per second.
void BM_PlannerDefaultSearch(benchmark::State& state) {
  const auto request = default_request(static_cast<int>(state.range(0)));
  std::size_t candidates = 0, evaluated = 0;
  for (auto _ : state) {
    const auto plan = planner::plan(request, bench_calibration());
    candidates += plan.stats.candidates;
    evaluated += plan.stats.evaluated;
    benchmark::DoNotOptimize(plan.best_system);
  }
  state.counters["layouts/s"] = benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kIsRate);
  state.counters["estimates/s"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  state.counters["layouts"] = static_cast<double>(candidates) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PlannerDefaultSearch)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// One analytical step estimate of a typical layout (tp8 pp4 vp5 on 64 x p5.48xlarge).
void BM_EstimateStepTypicalLayout(benchmark::State& state) {
  const auto request = default_request(1);
  training::TrainingJob job;
  job.model = request.model;
  job.cluster = request.systems.front();
  job.seq_len = request.seq_len;
  job.gpus = 512;
  job.layout = planner::make_layout({.tp = 8, .pp = 4, .vp = 5, .cp = 1, .ep = 1, .etp = 1, .dp = 16}, {}, 1024,
                                    request.framework);
  const auto comm = collectives::make_comm_cost(job.cluster);
  for (auto _ : state) benchmark::DoNotOptimize(training::estimate_step(job, bench_calibration(), comm));
}
BENCHMARK(BM_EstimateStepTypicalLayout)->Unit(benchmark::kMicrosecond);

// The memory estimate alone (the planner's pruning step before estimate_step).
void BM_EstimateMemory(benchmark::State& state) {
  const auto request = default_request(1);
  const auto layout = planner::make_layout({.tp = 8, .pp = 4, .vp = 5, .cp = 1, .ep = 1, .etp = 1, .dp = 16}, {}, 1024);
  for (auto _ : state) benchmark::DoNotOptimize(parallelism::estimate_memory(request.model, layout, 8192));
}
BENCHMARK(BM_EstimateMemory)->Unit(benchmark::kMicrosecond);

}  // namespace
