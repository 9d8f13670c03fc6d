// The scheduler twin's speed target (issue 16): a 30-day replay of 100,000 jobs on a 2,000-node
// cluster in under 10 s on 2 cores.
#include <benchmark/benchmark.h>

#include "orchestration/cluster_layout.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "orchestration/workload.hpp"

namespace {

using namespace fmsim::orchestration;

/// 2,000 nodes under leaf switches of 16 (125 leaves, 8 spines, a root).
ClusterLayout two_thousand_nodes() {
  fmsim::hardware::ClusterSpec c;
  c.system.name = "p5en.48xlarge";
  c.system.nodes = 1;
  c.count = 2000;
  c.nodes_per_leaf = 16;
  return layout_from_cluster(c);
}

/// 100,000 jobs in 30 days (one every 25.9 s): 69% evaluation (1-2 nodes, median 30 min), 30%
/// fine-tuning (2-8 nodes, median 2 h), 1% pre-training (32-64 nodes, median 12 h): about 88% of
/// the cluster's node-hours offered.
std::vector<JobSpec> hundred_thousand_jobs() {
  SyntheticWorkloadSpec w;
  w.jobs = 100000;
  w.mean_interarrival_s = 30 * 86400.0 / 100000;
  w.classes = {{"pretrain", 0.01, {32, 64}, 12 * 3600.0, 0.8, 1.5, 3600},
               {"finetune", 0.30, {2, 4, 8}, 2 * 3600.0, 0.8, 1.5, 1800},
               {"eval", 0.69, {1, 1, 2}, 1800.0, 1.0, 2.0, 0}};
  return generate_workload(w, 2000);
}

void BM_SlurmTwin100kJobs2000Nodes30Days(benchmark::State& state) {
  const auto layout = two_thousand_nodes();
  const auto jobs = hundred_thousand_jobs();
  SlurmConfig config;  // 22.05 defaults: backfill every 30 s, bf_max_job_test 500
  config.placement = state.range(0) ? Placement::Tree : Placement::Consecutive;
  SimulationOptions options;
  options.horizon_s = 30 * 86400.0;
  for (auto _ : state) {
    const auto r = simulate_slurm(layout, config, jobs, options);
    benchmark::DoNotOptimize(r.end_s);
    state.counters["backfill_passes"] = static_cast<double>(r.backfill_passes);
  }
}
BENCHMARK(BM_SlurmTwin100kJobs2000Nodes30Days)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
