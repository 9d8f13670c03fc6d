// Benchmarks of the collective model: one analytical estimate (target < 1 us), group
// classification, and a flow-level all-to-all among 1,024 GPUs on 128 nodes (target < 1 s).
#include <benchmark/benchmark.h>

#include "collectives/concurrency.hpp"
#include "collectives/cost_model.hpp"
#include "hardware/specs.hpp"

namespace {

using namespace fmsim;

hardware::ClusterSpec p5_like(int instances) {
  hardware::ClusterSpec c;
  c.gpu.sm_version = 90;
  c.gpu.nvlink_links = 18;
  c.gpu.nvlink_bandwidth = core::gb_per_s(900);
  c.system.gpus_per_node = 8;
  c.system.nvlink_domain_gpus = 8;
  c.system.nvswitch = true;
  c.system.nvls = true;
  c.system.nics_per_node = 32;
  c.system.nic_bandwidth = core::gbps(100);
  c.system.network_bandwidth = core::gbps(3200);
  c.system.cpu_vendor = hardware::CpuVendor::Amd;
  c.fabric.kind = hardware::FabricKind::Efa;
  c.fabric.latency = core::us(75);
  c.fabric.message_latency = core::us(22);
  c.fabric.efficiency = 0.655;
  c.count = instances;
  return c;
}

void BM_EstimateAllReduce(benchmark::State& state) {
  const auto t = topology::build_topology(p5_like(128));
  const auto shape = topology::classify(t, topology::Group::strided(0, 128, 8));
  const collectives::Calibration cal;
  double bytes = 1e6;
  for (auto _ : state) {
    bytes = bytes < 1e10 ? bytes * 1.01 : 1e6;
    benchmark::DoNotOptimize(collectives::estimate(t, cal, shape, collectives::Op::AllReduce, core::Bytes(bytes)));
  }
}
BENCHMARK(BM_EstimateAllReduce);

void BM_ClassifyDpGroup(benchmark::State& state) {
  const auto t = topology::build_topology(p5_like(128));
  const auto g = topology::Group::strided(0, 128, 8);
  for (auto _ : state) benchmark::DoNotOptimize(topology::classify(t, g));
}
BENCHMARK(BM_ClassifyDpGroup);

void BM_AllToAllFlowLevel1024(benchmark::State& state) {
  const auto t = topology::build_topology(p5_like(128));
  const collectives::Calibration cal;
  const auto g = topology::Group::all(t);
  for (auto _ : state) {
    benchmark::DoNotOptimize(collectives::simulate_alltoall(t, cal, g, core::mib(256), true));
  }
  state.SetLabel("1024 GPUs, 128 nodes, 1,047,552 flows");
}
BENCHMARK(BM_AllToAllFlowLevel1024)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_ConcurrentDpAndPp(benchmark::State& state) {
  // 16 DP all-reduces (one per local rank... stride 8) plus pipeline sends on 32 instances.
  const auto t = topology::build_topology(p5_like(32));
  const collectives::Calibration cal;
  std::vector<collectives::CollectiveRequest> reqs;
  for (int local = 0; local < 8; ++local) {
    reqs.push_back(
        {topology::Group::strided(local, 32, 8), collectives::Op::AllReduce, core::gib(1), core::Seconds{}, {}});
  }
  for (int node = 0; node + 1 < 32; node += 2) {
    reqs.push_back(
        {topology::Group::of({node * 8, (node + 1) * 8}), collectives::Op::SendRecv, core::mib(64), core::ms(1), {}});
  }
  for (auto _ : state) benchmark::DoNotOptimize(collectives::simulate_concurrent(t, cal, reqs));
}
BENCHMARK(BM_ConcurrentDpAndPp)->Unit(benchmark::kMillisecond);

}  // namespace
