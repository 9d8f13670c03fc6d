// What a model asks of the communication layer: the time of one collective on a group of ranks.
// The training step model, the serving iteration model, RL's weight sync and the cluster twin's
// placed training jobs all take a CommCostFn; make_comm_cost answers it with the collectives model
// on a cluster's topology (tests pass a fixed network instead).
#pragma once

#include <functional>

#include "collectives/collective.hpp"
#include "core/units.hpp"
#include "hardware/specs.hpp"

namespace fmsim::collectives {

/// A group of ranks in node-major rank order: ranks first, first+stride, ..., (size members).
/// Rank order follows Megatron: TP innermost, then CP, then DP (EP carved from it), PP outermost.
struct CommGroup {
  int size = 1;
  int stride = 1;
};

/// Time of one collective of `bytes` (nccl-tests size convention: all-reduce buffer, all-gather
/// output, reduce-scatter input, all-to-all send buffer per rank, send/recv message) on `group`.
/// Identical groups running at once (all DP groups of a node) use different NIC rails, which the
/// collectives model's per-group NIC count already captures.
using CommCostFn = std::function<core::Seconds(Op op, CommGroup group, core::Bytes bytes)>;

/// A CommCostFn answering with the collectives model (NCCL-style algorithm selection) on the
/// physical topology of `cluster`. Results are memoised per (op, group, size), so a step costs
/// each distinct collective once; copies share the memo, safe across the planner's threads.
CommCostFn make_comm_cost(const hardware::ClusterSpec& cluster);

}  // namespace fmsim::collectives
