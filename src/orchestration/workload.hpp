// Jobs as a scheduler receives them, and synthetic workloads (arrival process, size and duration
// distributions, a job mix of pre-training, fine-tuning and evaluation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orchestration/node_select.hpp"

namespace fmsim::orchestration {

/// Jobs a trace or a synthetic workload may hold: the cluster twin keeps every job's state and
/// events (about 1.7 KB a job; 100,000 jobs simulate in about 6 s).
inline constexpr int kMaxTraceJobs = 1'000'000;

/// A training job whose run time comes from its step time on the nodes it gets.
struct TrainingWork {
  std::string model;  ///< catalog preset or config.json; "" = not a training job
  int tp = 1, pp = 1, cp = 1, ep = 1;
  long long gbs = 0;     ///< global batch (sequences); 0 = one micro-batch per data-parallel rank
  long long seq = 4096;  ///< sequence length (tokens)
  double tokens = 0;     ///< tokens to train: steps = ceil(tokens / (gbs x seq))
};

/// One submitted job. Times in seconds from the start of the simulation.
struct JobSpec {
  int id = 0;  ///< Slurm job id (submission order)
  std::string name;
  double submit_s = 0.0;
  NodeRequest request;         ///< nodes, --segment, --exclusive=topo
  int cpus = 0;                ///< CPUs asked for (-n x -c); 0 = one per node (sbatch -N alone)
  double time_limit_s = 3600;  ///< -t; backfill plans with it; the job is killed (TIMEOUT) at it
  double run_s = 600;          ///< how long it runs if nothing stops it
  std::string partition;       ///< "" = the default partition
  int nice = 0;                ///< --nice
  int priority_class = 0;      ///< Kubernetes: WorkloadPriorityClass value (higher first); Slurm ignores it
  std::string qos;             ///< "" = normal
  std::string reservation;     ///< --reservation: runs only on its nodes, within its window
  std::string account;         ///< fair-share account (Kubernetes: the team's queue)
  std::string user;
  std::string kind;                  ///< "pretrain", "finetune", "eval", or from the trace
  bool requeue = true;               ///< --requeue / JobRequeue: requeued after node failure or preemption
  double checkpoint_interval_s = 0;  ///< 0 = no checkpoints: a failure loses all work so far
  /// Seconds the job needs after SIGTERM (preemption) to write a checkpoint and exit; 0 = it exits
  /// at once without one. Longer than KillWait: SIGKILL comes first and the checkpoint is lost.
  double sigterm_checkpoint_s = 0;
  TrainingWork training;  ///< model set: run_s is steps x its step time on the best nodes
  /// A serving deployment's replica unit (index into the replay's deployments; -1 = a batch job):
  /// its runs' (start, end) times are kept in its JobRecord.
  int deployment = -1;
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
