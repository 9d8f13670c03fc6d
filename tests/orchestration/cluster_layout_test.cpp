// The cluster layout the scheduler twin places jobs on, and the topology.conf / node labels it writes.
#include <gtest/gtest.h>

#include "orchestration/cluster_layout.hpp"

namespace fmsim::orchestration {
namespace {

hardware::ClusterSpec instances(int count, int nodes_per_leaf = 0) {
  hardware::ClusterSpec c;
  c.system.name = "p5.48xlarge";
  c.system.gpus_per_node = 8;
  c.system.nodes = 1;
  c.system.price_per_hour_usd = 55.04;
  c.count = count;
  c.nodes_per_leaf = nodes_per_leaf;
  return c;
}

hardware::ClusterSpec ultraservers(int count) {
  hardware::ClusterSpec c;
  c.system.name = "u-p6e-gb200x72";
  c.system.kind = hardware::SystemKind::UltraServer;
  c.system.gpus_per_node = 4;
  c.system.nodes = 18;
  c.count = count;
  return c;
}

// 40 instances, non-blocking catalog entry: leaves of 16 nodes (16, 16, 8) under one spine.
TEST(ClusterLayout, InstancesGetLeavesOfSixteenUnderOneSpine) {
  const auto layout = layout_from_cluster(instances(40));
  ASSERT_EQ(layout.nodes(), 40);
  ASSERT_EQ(layout.switches.size(), 4u);
  EXPECT_EQ(layout.switches[0].nodes.size(), 16u);
  EXPECT_EQ(layout.switches[2].nodes.size(), 8u);
  EXPECT_EQ(layout.switches[3].name, "spine1");
  EXPECT_EQ(layout.switches[3].level, 1);
  EXPECT_EQ(layout.switches[3].nodes.size(), 40u);
  // Two leaves meet at the spine: one hop up from each.
  EXPECT_EQ(layout.switch_distance[0][1], 2);
  EXPECT_EQ(layout.switch_distance[0][0], 0);
  EXPECT_EQ(layout.node_leaf[17], 1);
  EXPECT_NEAR(layout.price_per_node_hour, 55.04, 1e-9);
}

// 17 leaves need two spines (16 leaves each) and a root: leaf 1 to leaf 17 is 4 hops.
TEST(ClusterLayout, MoreThanSixteenLeavesGetARoot) {
  const auto layout = layout_from_cluster(instances(17 * 4, 4));
  ASSERT_EQ(layout.switches.size(), 17u + 2u + 1u);
  EXPECT_EQ(layout.switches.back().name, "root");
  EXPECT_EQ(layout.switches.back().level, 2);
  EXPECT_EQ(layout.switch_distance[0][16], 4);
  EXPECT_EQ(layout.switch_distance[0][15], 2);
}

// A GB200 NVL72 UltraServer is 18 nodes of 4 GPUs: one NVLink block per UltraServer.
TEST(ClusterLayout, UltraServersAreBlocksOfEighteen) {
  const auto layout = layout_from_cluster(ultraservers(4));
  ASSERT_EQ(layout.nodes(), 72);
  EXPECT_EQ(layout.block_size, 18);
  EXPECT_EQ(layout.node_block[17], 0);
  EXPECT_EQ(layout.node_block[18], 1);
  EXPECT_EQ(layout.gpus_per_node, 4);
  const std::string conf = write_topology_conf(layout, true);
  EXPECT_NE(conf.find("BlockName=block1 Nodes=node[1-18]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("BlockName=block4 Nodes=node[55-72]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("BlockSizes=18\n"), std::string::npos) << conf;
}

TEST(ClusterLayout, TreeTopologyConfAsSlurmReadsIt) {
  const auto layout = layout_from_cluster(instances(20));
  const std::string conf = write_topology_conf(layout, false);
  EXPECT_NE(conf.find("SwitchName=leaf1 Nodes=node[1-16]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("SwitchName=leaf2 Nodes=node[17-20]\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("SwitchName=spine1 Switches=leaf1,leaf2\n"), std::string::npos) << conf;
}

// EKS: layer-3 is the network node closest to the instance, layer-1 the farthest.
TEST(ClusterLayout, NodeLabelsCloseLayerIsTheLeaf) {
  const auto layout = layout_from_cluster(instances(20));
  const std::string labels = write_node_labels(layout);
  EXPECT_NE(labels.find("kubectl label node node17 topology.k8s.aws/network-node-layer-1=spine1 "
                        "topology.k8s.aws/network-node-layer-2=spine1 topology.k8s.aws/network-node-layer-3=leaf2"),
            std::string::npos)
      << labels;
}

TEST(ClusterLayout, HostlistCompressesRuns) {
  ClusterLayout layout;
  layout.node_names = {"n1", "n2", "n3", "n5", "n7", "n8", "gpu01", "gpu02", "login"};
  EXPECT_EQ(hostlist(layout, {0, 1, 2, 3, 4, 5}), "n[1-3,5,7-8]");
  EXPECT_EQ(hostlist(layout, {3}), "n5");
  EXPECT_EQ(hostlist(layout, {6, 7, 8, 0}), "n1,gpu[01-02],login");
}

}  // namespace
}  // namespace fmsim::orchestration
