// A training job's step time on the nodes the scheduler actually gave it. Ranks are laid out
// node-major over the allocation in node order (what srun does with a sorted node list), so a
// TP/EP group or a data-parallel ring spans whatever NVLink domains (UltraServer blocks) and EFA
// leaf switches those nodes sit in. Every communication group's shape (nodes, NVLink domains,
// leaves, ranks per domain) is taken from the allocation; each collective costs what the
// collectives model gives for the slowest instance of its group; the step model does the rest.
//
// Caching: a step time depends on the job and on the allocation only through the sequence of
// (NVLink domain, leaf switch) of its nodes, relabelled in order of first appearance: two
// allocations with the same sequence have the same group shapes. Step times are memoised by
// (job, sequence), so a replay of 100,000 jobs calls the step model once per distinct shape.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hardware/specs.hpp"
#include "orchestration/cluster_layout.hpp"
#include "topology/topology.hpp"
#include "training/calibration.hpp"
#include "training/step_model.hpp"

namespace fmsim::orchestration {

class PlacedStepModel {
 public:
  /// `cluster` is the catalog cluster behind `layout` (its system, GPU and fabric).
  PlacedStepModel(const ClusterLayout& layout, const hardware::ClusterSpec& cluster);

  /// Registers a job (its TrainingJob's gpus must be nodes x GPUs per node); returns its handle.
  int add_job(const training::TrainingJob& job, const training::Calibration& calibration);

  /// Step time (s) of job `handle` with its ranks on `nodes` (ascending node indices; node k of
  /// the list holds ranks k*gpus_per_node ...). 0 when the step model finds the layout infeasible.
  double step_time(int handle, const std::vector<int>& nodes);
  /// Step time on the best nodes for it: the first nodes of the layout (whole blocks and leaves).
  double ideal_step_time(int handle);

  [[nodiscard]] long step_model_calls() const { return calls_; }
  [[nodiscard]] long lookups() const { return lookups_; }

 private:
  struct Job {
    training::TrainingJob job;
    training::Calibration calibration;
    int nodes = 0;
  };
  const ClusterLayout& layout_;
  topology::Topology topology_;
  std::vector<Job> jobs_;
  std::map<std::pair<int, std::vector<int>>, double> memo_;
  long calls_ = 0, lookups_ = 0;
};

}  // namespace fmsim::orchestration
