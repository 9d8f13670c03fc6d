// Rank groups (a TP group inside a node, a DP group striding across nodes, an explicit list) and
// their classification against a topology: which NVLink domains, nodes, leaves and NICs they use.
#pragma once

#include <vector>

#include "topology/topology.hpp"

namespace fmsim::topology {

/// A set of ranks. Either arithmetic, ranks first, first+stride, ..., first+(size-1)*stride,
/// or an explicit list (which then wins). Ranks are global, node-major.
struct Group {
  int first = 0;
  int size = 1;
  int stride = 1;
  std::vector<int> ranks;  ///< explicit ranks; empty for an arithmetic group

  /// `size` consecutive ranks from `first` (a TP group, a whole cluster).
  static Group contiguous(int first, int size) { return Group{first, size, 1, {}}; }
  /// `size` ranks `stride` apart (a DP group with TP innermost has stride tp).
  static Group strided(int first, int size, int stride) { return Group{first, size, stride, {}}; }
  /// An explicit rank list (any order; duplicates are a caller bug).
  static Group of(std::vector<int> list) {
    const int n = static_cast<int>(list.size());
    return Group{0, n, 1, std::move(list)};
  }
  /// Every rank of the topology.
  static Group all(const Topology& t) { return contiguous(0, t.gpus); }

  [[nodiscard]] int count() const { return ranks.empty() ? size : static_cast<int>(ranks.size()); }
  [[nodiscard]] int rank(int i) const {
    return ranks.empty() ? first + i * stride : ranks[static_cast<std::size_t>(i)];
  }
  /// The ranks in ascending order.
  [[nodiscard]] std::vector<int> sorted_ranks() const;
};

/// What a group spans, which decides the links a collective over it crosses.
struct GroupShape {
  int size = 1;            ///< ranks in the group
  int nodes = 1;           ///< distinct nodes (hosts)
  int domains = 1;         ///< distinct NVLink domains ("nodes" in NCCL's model; MNNVL counts as one)
  int leaves = 1;          ///< distinct leaf switches
  int max_per_node = 1;    ///< most group ranks on one node
  int max_per_domain = 1;  ///< most group ranks in one NVLink domain
  int min_per_domain = 1;  ///< fewest group ranks in one of its domains
  int nics_per_node = 0;   ///< NICs of one node the group's ranks own (rails), at most the node's

  /// True when the whole group sits in one NVLink domain: it never touches a NIC.
  [[nodiscard]] bool single_domain() const { return domains == 1; }
  /// True when every domain holds the same number of group ranks.
  [[nodiscard]] bool uniform() const { return max_per_domain == min_per_domain; }

  friend bool operator==(const GroupShape&, const GroupShape&) = default;
};

/// Classifies `group` on `t`. O(size) for arithmetic groups, O(size log size) for explicit lists.
/// Ranks must lie in [0, t.gpus) (checked).
GroupShape classify(const Topology& t, const Group& group);

}  // namespace fmsim::topology
