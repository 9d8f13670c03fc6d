// A training run as exporter time series: the per-state GPU readings and the written series.
#include "telemetry/training_metrics.hpp"
#include "observability/openmetrics.hpp"
#include "telemetry/series.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fmsim::telemetry {
namespace {

// Two 8-GPU nodes (H200-like: 132 SMs, 700 W), tp 8 inside a node, dp 2 across nodes.
TrainingRun two_node_run(core::Seconds horizon) {
  TrainingRun run;
  auto& c = run.job.cluster;
  c.system.gpus_per_node = 8;
  c.system.nvlink_domain_gpus = 8;
  c.system.nics_per_node = 8;
  c.count = 2;
  c.gpu.name = "h200";
  c.gpu.sm_count = 132;
  c.gpu.tdp = core::watts(700);
  c.gpu.hbm_usable = core::bytes(140e9);
  run.job.layout.tp = 8;
  run.job.layout.dp = 2;
  run.job.layout.recompute = parallelism::Recompute::Selective;
  auto& s = run.step;
  s.step_time = core::seconds(2.0);
  s.breakdown.compute = core::seconds(1.5);
  s.breakdown.optimizer = core::seconds(0.1);
  s.breakdown.dp_comm = core::seconds(0.2);
  s.breakdown.bubble = core::seconds(0.2);
  s.memory.weights = core::bytes(60e9);
  s.memory.activations = core::bytes(40e9);
  s.comm.tp = core::bytes(10e9);
  s.comm.dp = core::bytes(4e9);
  s.mfu = 0.4;
  s.tokens_per_s_per_gpu = 1000.0;
  run.checkpoint_bytes = 1.6e12;
  run.checkpoint_load_bytes = 1.6e12;
  run.bytes_per_token = 4.0;
  auto& sc = run.scenario;
  sc.failures = reliability::single_cause_process(core::hours(1e9), false);  // no failure in the run
  sc.checkpoint = {.interval = core::minutes(20),
                   .blocking = core::seconds(60),
                   .persist = core::seconds(60),
                   .load = core::seconds(30)};
  sc.recovery.restart = core::minutes(10);
  sc.horizon = horizon;
  sc.gpus = 16;
  run.timeline = reliability::simulate_timeline(sc, 1);
  return run;
}

TEST(TrainingStates, ComputeReadingsFollowTheStep) {
  const TrainingStates s = training_states(two_node_run(core::hours(1)));
  // Engine busy = (compute + optimizer + exposed comm) / step = (1.5 + 0.1 + 0.2) / 2.
  EXPECT_DOUBLE_EQ(s.compute.gr_engine_active, 0.9);
  // SM active = (kernels + exposed comm x 16 NCCL channels / 132 SMs) / step.
  EXPECT_DOUBLE_EQ(s.compute.sm_active, (1.6 + 0.2 * 16.0 / 132.0) / 2.0);
  // Tensor pipe = MFU (selective recompute: hardware FLOPs = model FLOPs).
  EXPECT_DOUBLE_EQ(s.compute.tensor_active, 0.4);
  EXPECT_DOUBLE_EQ(s.compute.fb_used_bytes, 100e9);
  // tp 8 sits in the 8-GPU NVLink domain; dp 2 (stride 8) crosses nodes, so EFA.
  EXPECT_DOUBLE_EQ(s.compute.nvlink_tx_bytes_per_s, 5e9);
  EXPECT_DOUBLE_EQ(s.compute.efa_tx_bytes_per_s, 2e9);
  // Power linear in SM activity from idle (11.5% of TDP) to the cap (TDP).
  const double idle = 0.115 * 700.0;
  EXPECT_DOUBLE_EQ(s.compute.power_w, idle + (700.0 - idle) * s.compute.sm_active);
  // Processes gone: no memory, idle power; a hung collective keeps the engine busy.
  EXPECT_DOUBLE_EQ(s.down.fb_used_bytes, 0.0);
  EXPECT_DOUBLE_EQ(s.down.power_w, idle);
  EXPECT_DOUBLE_EQ(s.detect.gr_engine_active, 1.0);
  EXPECT_DOUBLE_EQ(s.detect.tensor_active, 0.0);
}

std::string write_to_text(const TrainingRun& run, const SeriesOptions& o, WriteSummary& summary) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  {
    observability::OpenMetricsWriter w(f, "mem");
    summary = write_training_metrics(run, o, w);
    w.finish();
  }
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  return text;
}

TEST(TrainingMetrics, SeriesCarryExporterNamesLabelsAndTotals) {
  // One hour without failures, checkpoints every 20 min + 60 s stall (period 1260 s): at 3600 s the
  // job has done 2 x 1200 + (3600 - 2 x 1260) = 3480 s of compute and started 2 saves.
  const TrainingRun run = two_node_run(core::hours(1));
  SeriesOptions o{.job = "llama", .start_unix_s = 1767225600, .resolution_s = 60, .heartbeat_s = 240};
  WriteSummary summary;
  const std::string text = write_to_text(run, o, summary);
  EXPECT_EQ(summary.first_timestamp_s, 1767225600);
  EXPECT_EQ(summary.last_timestamp_s, 1767225600 + 3600);
  // tokens = compute seconds x tokens/s/GPU x GPUs = 3480 x 1000 x 16.
  EXPECT_NE(text.find("fmsim_tokens_total{job=\"llama\",instance=\"fmsim\"} 55680000 1767229200\n"), std::string::npos);
  EXPECT_NE(text.find("fmsim_checkpoint_saves_total{job=\"llama\",instance=\"fmsim\"} 2 1767229200\n"),
            std::string::npos);
  // dcgm-exporter's shape by default: a series per GPU with its gpu/UUID/device labels, 16 per
  // family (2 nodes x 8 GPUs).
  EXPECT_NE(text.find("DCGM_FI_PROF_SM_ACTIVE{gpu=\"7\",UUID=\"" + gpu_uuid(2, 7) + "\""), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"" + gpu_uuid(2, 0) +
                      "\",device=\"nvidia0\",modelName=\"h200\",Hostname=\"node-0002\",job=\"llama\","
                      "instance=\"node-0002:9400\"} 95367.431640625 1767225600\n"),
            std::string::npos);  // 100e9 B in MiB
  EXPECT_EQ(text.find("node-0003"), std::string::npos);
  EXPECT_NE(text.find("# TYPE node_amazonefa_tx_bytes counter\n"), std::string::npos);
  EXPECT_TRUE(text.ends_with("# EOF\n"));
  // Per node (--metrics-per-node): one series per node without the gpu labels.
  o.granularity = Granularity::Node;
  const std::string per_node = write_to_text(run, o, summary);
  EXPECT_NE(per_node.find("DCGM_FI_DEV_FB_USED{Hostname=\"node-0002\",modelName=\"h200\",job=\"llama\","
                          "instance=\"node-0002:9400\"} 95367.431640625 1767225600\n"),
            std::string::npos);
  EXPECT_EQ(per_node.find("UUID="), std::string::npos);
}

TEST(TrainingMetrics, HeartbeatBoundsTheGapBetweenSamples) {
  // A constant gauge over 1 h at 60 s with a 240 s heartbeat: samples at 0, 240, ..., 3600 (16);
  // with heartbeat 0 only the first and last tick.
  const TrainingRun run = two_node_run(core::hours(1));
  SeriesOptions o{.job = "j", .start_unix_s = 0, .resolution_s = 60, .heartbeat_s = 240};
  WriteSummary summary;
  const auto count = [](const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(write_to_text(run, o, summary), "fmsim_step_time_seconds{"), 16u);
  o.heartbeat_s = 0;
  EXPECT_EQ(count(write_to_text(run, o, summary), "fmsim_step_time_seconds{"), 2u);
}

}  // namespace
}  // namespace fmsim::telemetry

namespace fmsim::telemetry {
namespace {

std::string counter_text(const std::vector<double>& values, std::int64_t heartbeat_s) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  {
    observability::OpenMetricsWriter w(f, "mem");
    const SeriesOptions o{.job = "j", .start_unix_s = 0, .resolution_s = 60, .heartbeat_s = heartbeat_s};
    Grid grid{.ticks = values.size(), .resolution_s = 60, .start_unix_s = 0};
    SeriesSink sink(w, grid, o);
    sink.family("c_total", observability::SeriesType::Counter, "c");
    sink.series(observability::Labels{{"job", "j"}}, values);
    w.finish();
  }
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  return text;
}

TEST(SeriesSink, CounterIsWrittenAtItsKinksOnly) {
  // Slope 10 per tick, then 20 from tick 3: the line through ticks 0, 3 and 6 is the counter.
  EXPECT_EQ(counter_text({0, 10, 20, 30, 50, 70, 90}, 0),
            "# HELP c_total c\n# TYPE c_total counter\n"
            "c_total{job=\"j\"} 0 0\nc_total{job=\"j\"} 30 180\nc_total{job=\"j\"} 90 360\n# EOF\n");
  // Wobbles below 0.5% of the mean increase per tick (15 here: 0.075) are not kinks...
  EXPECT_EQ(counter_text({0, 15.05, 30, 45.05, 60, 75, 90}, 0),
            "# HELP c_total c\n# TYPE c_total counter\nc_total{job=\"j\"} 0 0\nc_total{job=\"j\"} 90 360\n# EOF\n");
  // ...larger ones are. A 120 s heartbeat keeps every second tick at most.
  EXPECT_NE(counter_text({0, 15.5, 30, 45, 60, 75, 90}, 0).find("15.5 60\n"), std::string::npos);
  EXPECT_NE(counter_text({0, 15, 30, 45, 60, 75, 90}, 120).find("30 120\n"), std::string::npos);
}

}  // namespace
}  // namespace fmsim::telemetry
