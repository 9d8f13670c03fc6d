// Benchmarks of the metrics writers: the target is a 30-day, 16,384-GPU run (2,048
// p5.48xlarge-like nodes) at 1-minute resolution, per node, written in under 10 s and under 1 GiB.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "observability/openmetrics.hpp"
#include "observability/tsdb_block.hpp"
#include "telemetry/training_metrics.hpp"

namespace {

using namespace fmsim;

// 2,048 nodes of 8 GPUs (H100-like: 132 SMs, 700 W), tp 8 in a node, pp 4, dp 512; job MTBF 3.1 h
// (3.79 failures per 1000 node-days, the Llama 3 mix fmsim run uses), a 920 GiB checkpoint.
telemetry::TrainingRun fleet(core::Seconds horizon) {
  telemetry::TrainingRun run;
  auto& c = run.job.cluster;
  c.system.gpus_per_node = 8;
  c.system.nvlink_domain_gpus = 8;
  c.system.nics_per_node = 32;
  c.count = 2048;
  c.gpu.name = "h100";
  c.gpu.sm_count = 132;
  c.gpu.tdp = core::watts(700);
  c.gpu.hbm_usable = core::bytes(80e9);
  run.job.layout.tp = 8;
  run.job.layout.pp = 4;
  run.job.layout.dp = 512;
  auto& s = run.step;
  s.step_time = core::seconds(1.4);
  s.breakdown.compute = core::seconds(1.0);
  s.breakdown.optimizer = core::seconds(0.05);
  s.breakdown.dp_comm = core::seconds(0.15);
  s.breakdown.bubble = core::seconds(0.2);
  s.memory.weights = core::bytes(40e9);
  s.memory.activations = core::bytes(25e9);
  s.comm.tp = core::bytes(20e9);
  s.comm.dp = core::bytes(2e9);
  s.mfu = 0.38;
  s.tokens_per_s_per_gpu = 900.0;
  run.checkpoint_bytes = 988e9;
  run.checkpoint_load_bytes = 988e9;
  run.bytes_per_token = 4.0;
  run.local_disk = {.capacity_bytes = 30.4e12, .write_bytes_per_s = 10.8e9, .read_bytes_per_s = 21.6e9};
  auto& sc = run.scenario;
  sc.failures = reliability::single_cause_process(core::hours(3.1), true);
  sc.checkpoint = {.interval = core::minutes(30),
                   .blocking = core::minutes(5),
                   .persist = core::minutes(5),
                   .load = core::minutes(3)};
  sc.recovery = {.detect = core::minutes(1), .replace = core::minutes(1), .restart = core::minutes(3)};
  sc.horizon = horizon;
  sc.gpus = 16384;
  run.timeline = reliability::simulate_timeline(sc, 1);
  return run;
}

std::filesystem::path scratch() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "fmsim-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

// --metrics-format tsdb: a Prometheus block, every series sampled every minute.
void BM_TrainingMetricsTsdb30Days2048Nodes(benchmark::State& state) {
  const auto run = fleet(core::days(30));
  const auto dir = scratch();
  std::uint64_t bytes = 0, samples = 0;
  for (auto _ : state) {
    observability::TsdbBlockWriter block(dir.string());
    telemetry::write_training_metrics(run, {.job = "fleet", .granularity = telemetry::Granularity::Node}, block);
    std::filesystem::remove_all(block.finish());
    bytes = block.bytes_written();
    samples = block.samples_written();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["samples"] = static_cast<double>(samples);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TrainingMetricsTsdb30Days2048Nodes)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// OpenMetrics text (changes and a 4-minute heartbeat) to /dev/null: one day, 2,048 nodes.
void BM_TrainingMetricsOpenMetrics1Day2048Nodes(benchmark::State& state) {
  const auto run = fleet(core::days(1));
  std::uint64_t bytes = 0, samples = 0;
  for (auto _ : state) {
    std::FILE* f = std::fopen("/dev/null", "wb");
    observability::OpenMetricsWriter out(f, "/dev/null");
    telemetry::write_training_metrics(run, {.job = "fleet", .granularity = telemetry::Granularity::Node}, out);
    out.finish();
    std::fclose(f);
    bytes = out.bytes_written();
    samples = out.samples_written();
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["samples"] = static_cast<double>(samples);
}
BENCHMARK(BM_TrainingMetricsOpenMetrics1Day2048Nodes)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
