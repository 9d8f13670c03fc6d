// One RL step with its rollout simulated by the serving model, and the placement search.
#include <benchmark/benchmark.h>

#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/serving_calibration.hpp"
#include "config/training_calibration.hpp"
#include "planner/rl_plan.hpp"
#include "rl/rl_step.hpp"

namespace {

fmsim::rl::RlJob qwen3_32b_job() {
  fmsim::rl::RlJob j;
  j.policy = fmsim::config::load_model("qwen3-32b");
  j.cluster = fmsim::config::parse_cluster(fmsim::config::load_catalog(), "p5en.48xlarge:16");
  j.prompts = 512;
  j.samples = 8;
  j.lengths = fmsim::rl::LengthDistribution{fmsim::rl::LengthLaw::Lognormal, 6144.0, 0.8, 16384};
  j.train_layout.tp = 8;
  j.train_layout.sequence_parallel = true;
  return j;
}

// The example: GRPO, Qwen3-32B, 16 p5en nodes, 4,096 responses up to 16k tokens.
void BM_RlStep(benchmark::State& state) {
  const auto job = qwen3_32b_job();
  const auto calibration = fmsim::config::load_training_calibration("");
  const fmsim::rl::RlCalibration cal;
  const fmsim::rl::ServingRolloutEngine engine(fmsim::config::load_serving_calibration(), "vllm");
  for (auto _ : state) benchmark::DoNotOptimize(fmsim::rl::estimate_rl_step(job, calibration, cal, engine));
}
BENCHMARK(BM_RlStep)->Unit(benchmark::kMillisecond);

void BM_RlPlan(benchmark::State& state) {
  auto job = qwen3_32b_job();
  job.cluster = fmsim::config::parse_cluster(fmsim::config::load_catalog(), "p5.48xlarge:4");
  job.policy = fmsim::config::load_model("qwen3-8b");
  const auto calibration = fmsim::config::load_training_calibration("");
  const fmsim::rl::RlCalibration cal;
  const fmsim::rl::ServingRolloutEngine engine(fmsim::config::load_serving_calibration(), "vllm");
  for (auto _ : state) benchmark::DoNotOptimize(fmsim::planner::plan_rl(job, calibration, cal, engine));
}
BENCHMARK(BM_RlPlan)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
