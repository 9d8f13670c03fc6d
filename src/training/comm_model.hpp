// The training simulator's view of communication: collectives over rank groups on the cluster.
#pragma once

#include <functional>

#include "collectives/collective.hpp"
#include "core/units.hpp"
#include "parallelism/layout.hpp"

namespace fmsim::training {

/// A group of ranks in node-major rank order: ranks first, first+stride, ..., (size members).
/// Rank order follows Megatron: TP innermost, then CP, then DP (EP carved from it), PP outermost.
struct CommGroup {
  int size = 1;
  int stride = 1;
};

/// Every communication group of a layout, in Megatron rank order (TP innermost, then CP, then DP
/// with EP carved from it, PP outermost). The one definition the step model and the planner share.
struct CommGroups {
  CommGroup tp, cp, dp, fsdp, ep, expert_dp, pp;
};
inline CommGroups groups_of(const parallelism::Layout& l) {
  return CommGroups{.tp = {l.tp, 1},
                    .cp = {l.cp, l.tp},
                    .dp = {l.dp, l.tp * l.cp},
                    .fsdp = {l.fsdp_shard_size(), l.tp * l.cp},
                    .ep = {l.ep, l.etp},
                    .expert_dp = {l.expert_dp(), l.ep * l.etp},
                    .pp = {l.pp, l.tp * l.cp * l.dp}};
}

/// NVLink domains of `domain_gpus` GPUs that `group` spans (members `stride` ranks apart,
/// node-major): 1 when the whole group fits in one domain.
inline int domains_spanned(CommGroup group, int domain_gpus) {
  const long span = static_cast<long>(group.size) * group.stride;
  const long domain = domain_gpus > 0 ? domain_gpus : 1;
  if (group.size <= 1 || span <= domain) return 1;
  return static_cast<int>(span / domain < group.size ? (span + domain - 1) / domain : group.size);
}

/// Time of one collective of `bytes` (nccl-tests size convention: all-reduce buffer, all-gather
/// output, reduce-scatter input, all-to-all send buffer per rank, send/recv message) on `group`.
/// Identical groups running at once (all DP groups of a node) use different NIC rails, which the
/// collectives model's per-group NIC count already captures.
using CommCostFn = std::function<core::Seconds(collectives::Op op, CommGroup group, core::Bytes bytes)>;

}  // namespace fmsim::training
