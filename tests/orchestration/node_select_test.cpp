// Node selection as Slurm 22.05's select/cons_tres does it for whole-node jobs.
#include <gtest/gtest.h>

#include "orchestration/node_select.hpp"

namespace fmsim::orchestration {
namespace {

ClusterLayout flat_cluster(int n) { return flat_layout(n); }

// Two leaves of `per_leaf` nodes under one spine.
ClusterLayout two_leaves(int per_leaf) {
  ClusterLayout layout = flat_cluster(2 * per_leaf);
  for (int l = 0; l < 2; ++l) {
    Switch leaf;
    leaf.name = "s" + std::to_string(l + 1);
    leaf.parent = 2;
    for (int i = 0; i < per_leaf; ++i) leaf.nodes.push_back(l * per_leaf + i);
    layout.switches.push_back(leaf);
  }
  Switch top;
  top.name = "top";
  layout.switches.push_back(top);
  layout.finalize();
  return layout;
}

NodeSet with(int size, std::initializer_list<int> free) {
  NodeSet s(size);
  for (int i : free) s.set(i);
  return s;
}

TEST(NodeSet, CountsAndMembers) {
  NodeSet s(130);
  s.set(0);
  s.set(64);
  s.set(129);
  EXPECT_EQ(s.count(), 3);
  EXPECT_EQ(s.members(), (std::vector<int>{0, 64, 129}));
  EXPECT_EQ(NodeSet(130, true).count(), 130);
  EXPECT_EQ(s.count_and(with(130, {64, 65})), 1);
}

// _eval_nodes: the smallest run of consecutive free nodes that holds the job.
TEST(NodeSelect, ConsecutiveBestFitRun) {
  const auto layout = flat_cluster(13);
  const auto free = with(13, {0, 1, 4, 5, 6, 7, 8, 10, 11, 12});  // runs of 2, 5, 3
  EXPECT_EQ(select_nodes(layout, Placement::Consecutive, free, {3}), (std::vector<int>{10, 11, 12}));
  EXPECT_EQ(select_nodes(layout, Placement::Consecutive, free, {2}), (std::vector<int>{0, 1}));
  // No run holds 7: the largest run first (5), then the smallest run holding the remaining 2.
  EXPECT_EQ(select_nodes(layout, Placement::Consecutive, free, {7}), (std::vector<int>{0, 1, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(select_nodes(layout, Placement::Consecutive, free, {11}).empty());
}

// _eval_nodes_topo: a leaf that holds the whole job, the one with the fewest free nodes.
TEST(NodeSelect, TreePrefersTheTightestLeafThatHoldsTheJob) {
  const auto layout = two_leaves(8);
  const auto free = with(16, {0, 1, 2, 8, 9, 10, 11, 12});  // s1: 3 free, s2: 5 free
  EXPECT_EQ(select_nodes(layout, Placement::Tree, free, {3}), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(select_nodes(layout, Placement::Tree, free, {4}), (std::vector<int>{8, 9, 10, 11}));
  // 6 nodes span both leaves: the larger leaf first, then one node of the other.
  EXPECT_EQ(select_nodes(layout, Placement::Tree, free, {6}), (std::vector<int>{0, 8, 9, 10, 11, 12}));
  // Consecutive placement would take the run 8-11 for 4 nodes too but the run 0-2 + 8 for... any 3 fit.
  EXPECT_TRUE(can_place(layout, Placement::Tree, free, {8}));
  EXPECT_FALSE(can_place(layout, Placement::Tree, free, {9}));
}

// topology/block: segments never straddle a block; --exclusive=topo takes only wholly free blocks.
TEST(NodeSelect, BlockSegmentsStayInsideNvlinkBlocks) {
  ClusterLayout layout = flat_cluster(12);
  layout.block_size = 4;
  layout.node_block = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  layout.finalize();
  const auto free = with(12, {1, 2, 3, 4, 5, 6, 7, 10, 11});  // block free counts 3, 4, 2
  // Two segments of 2: the block holding both with the fewest free nodes is block 1 (4 free; block
  // 0 holds one segment only).
  EXPECT_EQ(select_nodes(layout, Placement::Block, free, {4, 2}), (std::vector<int>{4, 5, 6, 7}));
  // One segment of 2: block 2 (2 free) fits exactly.
  EXPECT_EQ(select_nodes(layout, Placement::Block, free, {2, 2}), (std::vector<int>{10, 11}));
  // Segment of 3 x 2: blocks 0 and 1 hold one each.
  EXPECT_EQ(select_nodes(layout, Placement::Block, free, {6, 3}).size(), 6u);
  EXPECT_TRUE(select_nodes(layout, Placement::Block, free, {9, 3}).empty());
  NodeRequest exclusive{2, 2, true};
  EXPECT_EQ(select_nodes(layout, Placement::Block, free, exclusive), (std::vector<int>{4, 5}));
}

// Runs of consecutive members, found a word at a time: across the 64-node word boundary, at the
// very end of the set, and a single node; the same as walking the nodes one by one.
TEST(NodeSet, RunsMatchANodeByNodeWalk) {
  NodeSet s(200);
  for (int i : {0, 1, 2, 60, 61, 62, 63, 64, 65, 127, 128, 150, 199}) s.set(i);
  const std::vector<std::pair<int, int>> expected{{0, 2}, {60, 65}, {127, 128}, {150, 150}, {199, 199}};
  EXPECT_EQ(s.runs(), expected);
  EXPECT_EQ(NodeSet(128, true).runs(), (std::vector<std::pair<int, int>>{{0, 127}}));
  EXPECT_TRUE(NodeSet(70).runs().empty());
}

}  // namespace
}  // namespace fmsim::orchestration
