// The flattened topology/tree selection picks what select_nodes picks (Slurm 22.05's
// _eval_nodes_topo as node_select.cpp models it): same nodes for every free set and size.
#include "orchestration/tree_select.hpp"

#include <gtest/gtest.h>

#include <random>

namespace fmsim::orchestration {
namespace {

/// `count` nodes in leaves of `per_leaf` under spines of 16 leaves and a root (the catalog's layout).
ClusterLayout catalog_layout(int count, int per_leaf) {
  hardware::ClusterSpec c;
  c.system.name = "p5en.48xlarge";
  c.system.nodes = 1;
  c.count = count;
  c.nodes_per_leaf = per_leaf;
  return layout_from_cluster(c);
}

/// Two leaves that share a node (not a disjoint tree): the selector falls back to select_nodes.
ClusterLayout overlapping_leaves() {
  ClusterLayout layout = flat_layout(7);
  for (int l = 0; l < 2; ++l) {
    Switch leaf;
    leaf.name = "s" + std::to_string(l);
    leaf.parent = 2;
    for (int i = 0; i < 4; ++i) leaf.nodes.push_back(l * 3 + i);
    layout.switches.push_back(leaf);
  }
  Switch top;
  top.name = "top";
  layout.switches.push_back(top);
  layout.finalize();
  return layout;
}

/// Random free sets (each node free with probability p, p from sparse to dense) and sizes from
/// 1 to the free count plus one: the selector's nodes equal select_nodes'.
void expect_same_choices(const ClusterLayout& layout, int trials, std::uint64_t seed) {
  TreeSelector selector(layout);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < trials; ++t) {
    const double p = 0.05 + 0.9 * u(rng);
    NodeSet free(layout.nodes());
    for (int n = 0; n < layout.nodes(); ++n)
      if (u(rng) < p) free.set(n);
    std::uniform_int_distribution<int> size(1, free.count() + 1);
    const int need = size(rng);
    ASSERT_EQ(selector.select(free, need), select_nodes(layout, Placement::Tree, free, NodeRequest{need}))
        << "trial " << t << ", " << need << " nodes of " << free.count() << " free";
  }
}

TEST(TreeSelector, PicksWhatSelectNodesPicksOnTwoThousandNodes) {
  expect_same_choices(catalog_layout(2000, 16), 400, 1);
}

TEST(TreeSelector, PicksWhatSelectNodesPicksOnSmallTrees) {
  expect_same_choices(catalog_layout(40, 4), 400, 2);   // 10 leaves, one spine
  expect_same_choices(catalog_layout(300, 8), 400, 3);  // 38 leaves (the last short), 3 spines, a root
}

TEST(TreeSelector, FallsBackWhereLeavesOverlap) { expect_same_choices(overlapping_leaves(), 200, 4); }

}  // namespace
}  // namespace fmsim::orchestration
