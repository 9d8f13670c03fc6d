// Topology construction, link catalogue and group classification.
#include "topology/topology.hpp"

#include <gtest/gtest.h>

#include "../collectives/test_clusters.hpp"
#include "topology/group.hpp"

namespace fmsim::topology {
namespace {

TEST(Topology, SizesFollowTheClusterSpec) {
  // 4 instances of 8 GPUs: 32 GPUs, 4 nodes, NVLink domain = one instance.
  const Topology t = build_topology(testing::hgx_h100(4));
  EXPECT_EQ(t.gpus, 32);
  EXPECT_EQ(t.nodes, 4);
  EXPECT_EQ(t.domain_gpus, 8);
  EXPECT_EQ(t.domains(), 4);
  EXPECT_EQ(t.architecture, hardware::Architecture::Hopper);
  // Per-GPU rail: 3200 Gbps / 8 GPUs = 400 Gbps = 50 GB/s; 4 NICs per GPU.
  EXPECT_DOUBLE_EQ(t.nic_bandwidth_per_gpu().value(), 50e9);
  EXPECT_EQ(t.nics_per_gpu(), 4);
}

TEST(Topology, Nvl72RackIsOneDomainOverEighteenNodes) {
  // An NVL72 rack: 18 nodes x 4 GPUs, one 72-GPU NVLink domain.
  const Topology t = build_topology(testing::nvl72(2));
  EXPECT_EQ(t.gpus, 144);
  EXPECT_EQ(t.nodes, 36);
  EXPECT_EQ(t.domain_of(71), 0);
  EXPECT_EQ(t.domain_of(72), 1);
  EXPECT_NE(t.node_of(0), t.node_of(71));
}

TEST(Topology, RoutesUseNvlinkInsideADomainAndNicRailsAcross) {
  const Topology t = build_topology(testing::hgx_h100(2));
  std::vector<int> r;
  t.route(1, 5, r);  // same instance: NVLink out of 1, into 5
  EXPECT_EQ(r, (std::vector<int>{t.nvlink_tx(1), t.nvlink_rx(5)}));
  r.clear();
  t.route(1, 9, r);  // across instances: rail of GPU 1 out, rail of GPU 9 in (one leaf)
  EXPECT_EQ(r, (std::vector<int>{t.nic_tx(1), t.nic_rx(9)}));
  r.clear();
  t.route(3, 3, r);
  EXPECT_TRUE(r.empty());
}

TEST(Topology, OversubscribedLeavesAddUplinks) {
  // 4 nodes, 2 per leaf, 2:1 oversubscribed: crossing leaves adds the up and down links, whose
  // capacity is the leaf's NIC total / 2.
  hardware::ClusterSpec c = testing::hgx_h100(4, 1.0);
  c.nodes_per_leaf = 2;
  c.oversubscription = 2.0;
  const Topology t = build_topology(c);
  EXPECT_EQ(t.leaves, 2);
  std::vector<int> r;
  t.route(0, 16, r);
  EXPECT_EQ(r, (std::vector<int>{t.nic_tx(0), t.leaf_up(0), t.leaf_down(1), t.nic_rx(16)}));
  const std::vector<double> cap = t.link_capacities();
  EXPECT_DOUBLE_EQ(cap[static_cast<std::size_t>(t.leaf_up(0))], 2 * 400e9 / 2.0);
}

TEST(Group, TensorParallelGroupStaysInOneDomain) {
  // TP=8 innermost: ranks 8..15 are one instance, one domain, 8 ranks per domain.
  const Topology t = build_topology(testing::hgx_h100(4));
  const GroupShape s = classify(t, Group::contiguous(8, 8));
  EXPECT_EQ(s.size, 8);
  EXPECT_EQ(s.domains, 1);
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.max_per_domain, 8);
  EXPECT_TRUE(s.single_domain());
}

TEST(Group, DataParallelGroupStridesAcrossNodes) {
  // DP with TP=8 innermost: stride 8, one rank per node, using that rank's 4 NICs per node.
  const Topology t = build_topology(testing::hgx_h100(4));
  const GroupShape s = classify(t, Group::strided(3, 4, 8));
  EXPECT_EQ(s.domains, 4);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.max_per_domain, 1);
  EXPECT_EQ(s.nics_per_node, 4);
  EXPECT_TRUE(s.uniform());
}

TEST(Group, ExpertGroupMayOrMayNotFitADomain) {
  // EP=16 over 72-GPU racks fits one NVLink domain; over 8-GPU instances it spans two.
  const GroupShape rack = classify(build_topology(testing::nvl72(1)), Group::contiguous(0, 16));
  EXPECT_EQ(rack.domains, 1);
  EXPECT_EQ(rack.nodes, 4);
  const GroupShape hgx = classify(build_topology(testing::hgx_h100(2)), Group::contiguous(0, 16));
  EXPECT_EQ(hgx.domains, 2);
}

TEST(Group, ExplicitListIsClassifiedInAnyOrder) {
  // Ranks {9, 0, 1, 17}: domains 0 (two ranks), 1 and 2 (one each): not uniform.
  const Topology t = build_topology(testing::hgx_h100(3));
  const GroupShape s = classify(t, Group::of({9, 0, 1, 17}));
  EXPECT_EQ(s.domains, 3);
  EXPECT_EQ(s.max_per_domain, 2);
  EXPECT_EQ(s.min_per_domain, 1);
  EXPECT_FALSE(s.uniform());
}

}  // namespace
}  // namespace fmsim::topology
