// `fmsim cluster`'s replays under each policy (jobspec/cluster_run.hpp).
#include "jobspec/cluster_run.hpp"

#include <chrono>
#include <cstddef>
#include <vector>

namespace fmsim::jobspec {

ClusterRun replay_cluster(const ClusterJob& job) {
  namespace orch = fmsim::orchestration;
  ClusterRun run;
  for (const auto& v : job.policies) {
    const auto t0 = std::chrono::steady_clock::now();
    run.results.push_back(orch::simulate_slurm(job.layout, v.config, job.jobs, v.options));
    run.wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    run.summaries.push_back(orch::summarise(job.layout, run.results.back(), v.spares));
  }
  if (!job.deployments.empty()) {  // the batch jobs alone, for what sharing costs them
    const std::vector<orch::JobSpec> batch(job.jobs.begin(),
                                           job.jobs.begin() + static_cast<std::ptrdiff_t>(job.batch_jobs));
    run.fleet = summarise_fleet(job, run.results[0],
                                orch::simulate_slurm(job.layout, job.training_alone, batch, job.policies[0].options));
  }
  return run;
}

}  // namespace fmsim::jobspec
