// Benchmarks of the goodput Monte Carlo: the target is a 90-day run of a 100,000-GPU job,
// 1,000 replications, in under 30 s.
#include <benchmark/benchmark.h>

#include "reliability/failure_model.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"

namespace {

using namespace fmsim;

reliability::GoodputScenario hundred_thousand_gpus() {
  // 12,500 nodes at Meta RSC-1's 6.5 failures per 1000 node-days: MTBF 17.7 min, ~7,300 failures
  // in 90 days; Llama 3 mix of replacement vs restart-in-place; finite spare pool.
  reliability::GoodputScenario s;
  s.failures = reliability::single_cause_process(
      reliability::job_mtbf(reliability::per_node_hour_from_per_1000_node_days(6.5), 12500), true);
  s.failures.causes.push_back({.name = "software", .count = 0.2, .replace_node = false});
  s.recovery = {.detect = core::minutes(1),
                .replace = core::minutes(1),
                .restart = core::minutes(3),
                .spares = 64,
                .repair = core::hours(48)};
  s.checkpoint = {.interval = core::minutes(5),
                  .blocking = core::seconds(5),
                  .persist = core::seconds(60),
                  .load = core::minutes(1)};
  s.horizon = core::days(90);
  s.gpus = 100000;
  return s;
}

void BM_Goodput100kGpus90Days(benchmark::State& state) {
  const auto s = hundred_thousand_gpus();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const auto r = reliability::simulate_goodput(s, {.replications = 1000, .seed = 1, .threads = threads});
    benchmark::DoNotOptimize(r.ettr);
  }
}
BENCHMARK(BM_Goodput100kGpus90Days)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OptimalInterval(benchmark::State& state) {
  const auto s = hundred_thousand_gpus();
  for (auto _ : state) benchmark::DoNotOptimize(reliability::optimal_interval(s));
}
BENCHMARK(BM_OptimalInterval)->Unit(benchmark::kMicrosecond);

}  // namespace
