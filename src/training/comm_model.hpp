// The training simulator's view of communication: the rank groups of a layout and the NVLink
// domains they span (the cost of a collective on a group: collectives/comm_cost.hpp).
#pragma once

#include "collectives/comm_cost.hpp"
#include "parallelism/layout.hpp"

namespace fmsim::training {

/// Every communication group of a layout, in Megatron rank order (TP innermost, then CP, then DP
/// with EP carved from it, PP outermost). The one definition the step model and the planner share.
struct CommGroups {
  collectives::CommGroup tp, cp, dp, fsdp, ep, expert_dp, pp;
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
inline int domains_spanned(collectives::CommGroup group, int domain_gpus) {
  const long span = static_cast<long>(group.size) * group.stride;
  const long domain = domain_gpus > 0 ? domain_gpus : 1;
  if (group.size <= 1 || span <= domain) return 1;
  return static_cast<int>(span / domain < group.size ? (span + domain - 1) / domain : group.size);
}

}  // namespace fmsim::training
