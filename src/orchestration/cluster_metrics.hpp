// What a cluster operator reads off a replay: utilisation, goodput, waits (overall and by job
// size), queue length, fragmentation, lost GPU-hours and cost.
#pragma once

#include <string>
#include <vector>

#include "orchestration/cluster_layout.hpp"
#include "orchestration/slurm_simulator.hpp"

namespace fmsim::orchestration {

struct WaitBySize {
  std::string label;  ///< "1", "2-4", "5-16", "17-64", "65-256", "257+" nodes
  int min_nodes = 0, max_nodes = 0;
  int jobs = 0;
  double mean_wait_s = 0, p95_wait_s = 0;
};

struct ClusterSummary {
  int jobs = 0, started = 0, completed = 0, timeout = 0, node_fail = 0, preempted = 0, unfinished = 0;
  int backfilled = 0, requeues = 0;
  double span_s = 0;       ///< first submission to the last event (or the horizon)
  double utilisation = 0;  ///< allocated node-seconds / (nodes x span)
  double goodput = 0;      ///< useful node-seconds / (nodes x span)
  double mean_wait_s = 0, median_wait_s = 0, p95_wait_s = 0, max_wait_s = 0;
  double mean_queue_length = 0;
  double mean_fragmented_nodes = 0;  ///< free nodes that cannot hold the largest waiting job
  double mean_down_nodes = 0;
  double useful_gpu_hours = 0, lost_gpu_hours = 0, paid_gpu_hours = 0;
  double slow_placement_gpu_hours = 0;  ///< added by placements slower than the best (training jobs)
  double cost_usd = 0;                  ///< nodes x span x price per node-hour (0 when unknown)
  double cost_per_useful_gpu_hour = 0;
  std::vector<WaitBySize> wait_by_size;
  int node_failures = 0, spares_used = 0, preemptions = 0;
};

/// Summarises a result. `nodes` are the scheduled nodes (spares not counted: they are paid but idle).
ClusterSummary summarise(const ClusterLayout& layout, const SimulationResult& result, int spares = 0);

}  // namespace fmsim::orchestration
