// The training simulator's view of communication: collectives over rank groups on the cluster.
#pragma once

#include <functional>

#include "core/units.hpp"

namespace fmsim::training {

enum class CommOp { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

/// A group of ranks in node-major rank order: ranks first, first+stride, ..., (size members).
/// Rank order follows Megatron: TP innermost, then CP, then DP (EP carved from it), PP outermost.
struct CommGroup {
  int size = 1;
  int stride = 1;
};

/// Time of one collective of `bytes` (nccl-tests size convention: all-reduce buffer, all-gather
/// output, reduce-scatter input, all-to-all send buffer per rank, send/recv message) on `group`.
/// `concurrent` is how many identical groups run the same collective at once sharing the
/// node's NICs (e.g. all TP*CP DP-groups of a node reduce gradients together).
using CommCostFn = std::function<core::Seconds(CommOp op, CommGroup group, core::Bytes bytes, int concurrent)>;

}  // namespace fmsim::training
