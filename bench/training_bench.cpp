// Training-step prediction speed: analytical path (planner) and event simulation (fmsim train).
#include <benchmark/benchmark.h>

#include "collectives/comm_cost.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/training_calibration.hpp"
#include "training/step_model.hpp"

namespace {

using namespace fmsim;

struct Fixture {
  training::TrainingJob job;
  training::Calibration calibration;
  collectives::CommCostFn comm;
};

// Llama 3.1 70B, tp8 pp4 vp5, FP8, on `instances` p5.48xlarge; gbs scales with the GPU count.
Fixture make(int instances) {
  static const auto catalog = config::load_catalog();
  Fixture f;
  f.job.model = config::load_model("llama3.1-70b");
  f.job.cluster = config::parse_cluster(catalog, "p5.48xlarge:" + std::to_string(instances));
  f.job.seq_len = 8192;
  auto& l = f.job.layout;
  l.tp = 8;
  l.pp = 4;
  l.vp = 5;
  l.precision = core::Precision::FP8;
  l = parallelism::with_dp(l, f.job.cluster.gpus());
  l.global_batch = static_cast<std::int64_t>(l.dp) * 32;  // 32 micro-batches per pipeline
  f.calibration = config::load_training_calibration();
  f.comm = collectives::make_comm_cost(f.job.cluster);
  return f;
}

void BM_EstimateStep(benchmark::State& state) {
  const auto f = make(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(training::estimate_step(f.job, f.calibration, f.comm));
  state.counters["gpus"] = f.job.cluster.gpus();
}
BENCHMARK(BM_EstimateStep)->Arg(64)->Arg(12500)->Unit(benchmark::kMicrosecond);

void BM_SimulateStep(benchmark::State& state) {
  const auto f = make(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(training::simulate_step(f.job, f.calibration, f.comm));
  state.counters["gpus"] = f.job.cluster.gpus();
}
BENCHMARK(BM_SimulateStep)->Arg(64)->Arg(12500)->Unit(benchmark::kMillisecond);

}  // namespace
