// What documents/cluster.cpp and documents/cluster_html.cpp share of `fmsim cluster`'s report:
// Slurm's names, waits in the unit a reader wants, the training jobs on their nodes.
#pragma once

#include <string>
#include <vector>

#include "jobspec/cluster.hpp"
#include "orchestration/node_select.hpp"
#include "orchestration/slurm_simulator.hpp"

namespace fmsim::documents::cluster_parts {

/// Slurm's name of a placement: "topology/tree", "topology/block", "topology/none".
std::string placement_name(orchestration::Placement p);

/// The unit a wait of `s` seconds is printed in: seconds under a minute, minutes under an hour,
/// hours under two days, then days.
struct WaitUnit {
  double seconds;
  const char* symbol;
  const char* words;
};
WaitUnit wait_unit(double s);
/// A duration in its WaitUnit: "42 s", "12.5 min", "3.25 h", "4.10 d".
std::string hours(double s);

/// The scheduler the replay ran: Kubernetes with Kueue and its queueing, or Slurm's scheduler
/// and priority plugins with where the configuration came from.
std::string scheduler_text(const jobspec::ClusterJob& job);

/// Training jobs' step times on the nodes they got (the first policy), the slowest placements first.
struct TrainingRow {
  int id = 0;
  std::string job, nodes;
  double ideal = 0, step = 0, slowdown = 1;
};
std::vector<TrainingRow> training_rows(const orchestration::ClusterLayout& layout,
                                       const orchestration::SimulationResult& r, const jobspec::PlacedTraining& placed);

}  // namespace fmsim::documents::cluster_parts
