// topology/tree node selection (select/cons_tres _eval_nodes_topo, as select_nodes does it) for
// one layout, many times: the switch tree flattened once into arrays (levels, parents, leaves,
// leaf-to-leaf distances), so that a selection costs a pass
// over the leaves rather than over every switch's record and every free node. The scheduler
// twin's backfill calls it for every job it plans; the choices are select_nodes' own
// (tests/orchestration/tree_select_test.cpp compares them on random free sets).
#pragma once

#include <cstdint>
#include <vector>

#include "orchestration/cluster_layout.hpp"
#include "orchestration/node_select.hpp"

namespace fmsim::orchestration {

class TreeSelector {
 public:
  /// `layout` must outlive the selector.
  explicit TreeSelector(const ClusterLayout& layout);
  /// select_nodes(layout, Placement::Tree, available, {need}). `free` = available.count() when the
  /// caller has counted it already (-1: count here).
  [[nodiscard]] std::vector<int> select(const NodeSet& available, int need, int free = -1);

 private:
  const ClusterLayout& layout_;
  bool fast_ = false;  ///< a disjoint tree with switches: the flattened path applies
  std::vector<int> level_, parent_;
  std::vector<int> leaves_;       ///< leaf switch indices, ascending
  std::vector<int> by_level_;     ///< switch indices by level, descending (the last index first among equals)
  std::vector<int> leaf_pos_;     ///< per switch: its position in leaves_ (-1: not a leaf)
  std::vector<int> segment_end_;  ///< per node: the last node of its run of consecutive nodes under one leaf (or none)
  std::vector<int> leaf_dist_;    ///< leaves x leaves (positions in leaves_): switch_distance
  std::vector<std::vector<int>> ancestors_;  ///< per switch: its parent, its parent's, ... (not itself)
  std::vector<char> subtree_;                ///< switches x switches: [a * s + i] = i is a or below a
  // Scratch space, kept between calls.
  std::vector<int> count_;
  std::vector<long> dist_;
  std::vector<int> live_;
};

}  // namespace fmsim::orchestration
