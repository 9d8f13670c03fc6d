// Concurrent collectives over shared links, and flow-level all-to-all(v), on the max-min
// flow model of network/flow_sharing.hpp.
//
// Each collective is decomposed into the point-to-point flows its algorithm drives: a ring over
// the group's ranks (cross-domain ring edges spread over the NIC rails of the domain's ranks, as
// NCCL's channels do), all pairs for all-to-all, one flow for send/recv. The flows of every
// collective are simulated together with their start times; a collective's bandwidth term is its
// standalone analytical bandwidth term scaled by (its flows' span when shared / span when alone),
// and its latency term is kept. Alone, a collective therefore costs exactly `estimate`.
#pragma once

#include <vector>

#include "collectives/calibration.hpp"
#include "collectives/collective.hpp"
#include "collectives/cost_model.hpp"
#include "topology/group.hpp"
#include "topology/topology.hpp"

namespace fmsim::collectives {

/// One collective taking part in a concurrent simulation.
struct CollectiveRequest {
  topology::Group group;
  Op op = Op::AllReduce;
  core::Bytes bytes{};
  core::Seconds start{};
  Options options{};
};

/// When one request finishes among the others.
struct ConcurrentResult {
  core::Seconds start{};
  core::Seconds finish{};
  CollectiveCost standalone;  ///< the request's cost with the links to itself
  double slowdown = 1.0;      ///< bandwidth-term stretch from sharing (>= 1 up to rounding)

  [[nodiscard]] core::Seconds duration() const { return finish - start; }
};

/// Completion of every request when they share the links max-min fairly.
std::vector<ConcurrentResult> simulate_concurrent(const topology::Topology& topology, const Calibration& calibration,
                                                  const std::vector<CollectiveRequest>& requests);

/// Result of a flow-level all-to-all.
struct AllToAllResult {
  core::Seconds time{};
  core::BytesPerSecond algbw{};  ///< per-rank bytes sent / time
  core::BytesPerSecond busbw{};  ///< algbw * (n-1)/n
  long long flows = 0;           ///< point-to-point flows simulated (0 on the symmetric shortcut)
  bool symmetric = false;        ///< true when the closed form for identical flows was used
};

/// All-to-all where every rank sends `per_rank` bytes split evenly over the group. When the group
/// is uniform (same ranks in every domain, one leaf or no oversubscription) every flow of a class
/// gets the same rate and the closed form is used, unless `force_flow_level`.
AllToAllResult simulate_alltoall(const topology::Topology& topology, const Calibration& calibration,
                                 const topology::Group& group, core::Bytes per_rank, bool force_flow_level = false);

/// All-to-all-v: `matrix[i * n + j]` bytes from the group's i-th rank to its j-th (n = group size).
AllToAllResult simulate_alltoallv(const topology::Topology& topology, const Calibration& calibration,
                                  const topology::Group& group, const std::vector<double>& matrix);

}  // namespace fmsim::collectives
