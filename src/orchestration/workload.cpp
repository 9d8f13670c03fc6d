#include "orchestration/workload.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace fmsim::orchestration {

// An illustrative mix of a shared training cluster, not fitted to any trace (docs/models/
// orchestration.md, "Synthetic workloads"): Helios (Hu et al., SC'21) and Philly (Jeon et al.,
// ATC'19) both report that most jobs are small and short while a few large, long jobs hold most of
// the GPU time, which the three classes keep. A recorded trace (--trace) replaces it.
std::vector<JobClass> default_job_mix(int cluster_nodes) {
  auto sizes = [&](std::vector<int> wanted) {
    std::vector<int> out;
    for (int s : wanted)
      if (s <= cluster_nodes) out.push_back(s);
    if (out.empty()) out.push_back(1);
    return out;
  };
  const int quarter = std::max(1, cluster_nodes / 4), half = std::max(1, cluster_nodes / 2);
  return {
      {"pretrain", 0.10, sizes({quarter, half}), 24 * 3600.0, 0.8, 1.5, 3600},
      {"finetune", 0.30, sizes({2, 4, 8, 16}), 4 * 3600.0, 0.9, 1.5, 1800},
      {"eval", 0.60, sizes({1, 1, 2}), 1800.0, 1.0, 2.0, 0},
  };
}

std::vector<JobSpec> generate_workload(const SyntheticWorkloadSpec& spec, int cluster_nodes) {
  const auto classes = spec.classes.empty() ? default_job_mix(cluster_nodes) : spec.classes;
  std::mt19937_64 rng(spec.seed);
  std::exponential_distribution<double> interarrival(1.0 / std::max(spec.mean_interarrival_s, 1e-9));
  std::vector<double> weights;
  for (const auto& c : classes) weights.push_back(c.share);
  std::discrete_distribution<int> pick_class(weights.begin(), weights.end());
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<JobSpec> jobs;
  jobs.reserve(static_cast<std::size_t>(spec.jobs));
  double t = 0.0;
  for (int i = 0; i < spec.jobs; ++i) {
    t += interarrival(rng);
    const auto& c = classes[static_cast<std::size_t>(pick_class(rng))];
    JobSpec job;
    job.id = i + 1;
    job.kind = c.kind;
    job.name = c.kind + "-" + std::to_string(i + 1);
    job.submit_s = std::floor(t);
    std::uniform_int_distribution<std::size_t> pick_size(0, c.node_sizes.size() - 1);
    job.request.nodes = std::min(cluster_nodes, c.node_sizes[pick_size(rng)]);
    job.run_s = std::max(60.0, std::round(c.median_run_s * std::exp(c.sigma * normal(rng))));
    job.time_limit_s = std::ceil(job.run_s * c.limit_factor / 60.0) * 60.0;
    job.checkpoint_interval_s = c.checkpoint_interval_s;
    std::uniform_int_distribution<int> pick_account(1, std::max(1, spec.accounts));
    job.account = "team" + std::to_string(pick_account(rng));
    job.user = job.account;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace fmsim::orchestration
