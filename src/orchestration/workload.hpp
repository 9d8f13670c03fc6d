// Jobs as a scheduler receives them, and synthetic workloads (arrival process, size and duration
// distributions, a job mix of pre-training, fine-tuning and evaluation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestration/node_select.hpp"

namespace fmsim::orchestration {

/// One submitted job. Times in seconds from the start of the simulation.
struct JobSpec {
  int id = 0;                  ///< Slurm job id (submission order)
  std::string name;
  double submit_s = 0.0;
  NodeRequest request;         ///< nodes, --segment, --exclusive=topo
  double time_limit_s = 3600;  ///< -t; backfill plans with it; the job is killed (TIMEOUT) at it
  double run_s = 600;          ///< how long it runs if nothing stops it
  std::string partition;       ///< "" = the default partition
  int nice = 0;                ///< --nice
  std::string qos;             ///< "" = normal
  std::string account;         ///< fair-share account (Kubernetes: the team's queue)
  std::string user;
  std::string kind;            ///< "pretrain", "finetune", "eval", or from the trace
  bool requeue = true;         ///< --requeue / JobRequeue: requeued after node failure or preemption
  double checkpoint_interval_s = 0;  ///< 0 = no checkpoints: a failure loses all work so far
};

/// A synthetic workload: Poisson arrivals, job classes with node-count and duration distributions.
struct JobClass {
  std::string kind;             ///< "pretrain", "finetune", "eval"
  double share = 1.0;           ///< fraction of arrivals
  std::vector<int> node_sizes;  ///< drawn uniformly
  double median_run_s = 3600;   ///< log-normal durations
  double sigma = 1.0;           ///< log-normal shape
  double limit_factor = 1.5;    ///< time limit = run x factor, rounded up to whole minutes
  double checkpoint_interval_s = 0;
};

struct SyntheticWorkloadSpec {
  int jobs = 1000;
  double mean_interarrival_s = 300;
  std::vector<JobClass> classes;  ///< empty: default_job_mix(cluster nodes)
  int accounts = 4;               ///< teams, assigned round-robin by draw
  std::uint64_t seed = 1;
};

/// Pre-training (large, long), fine-tuning (medium), evaluation (small, short) sized to the cluster.
std::vector<JobClass> default_job_mix(int cluster_nodes);

/// Deterministic for a given spec (seeded).
std::vector<JobSpec> generate_workload(const SyntheticWorkloadSpec& spec, int cluster_nodes);

}  // namespace fmsim::orchestration
