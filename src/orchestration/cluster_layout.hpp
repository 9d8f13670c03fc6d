// The cluster as a scheduler sees it: named nodes, the switch tree above them (Slurm's
// topology/tree: leaf switches under spines) and NVLink blocks (UltraServers, Slurm's
// topology/block), built from a catalog cluster or read from a topology.conf.
#pragma once

#include <string>
#include <vector>

#include "hardware/specs.hpp"

namespace fmsim::orchestration {

/// One switch of the tree. Level 0 switches are leaves and hold nodes; higher levels hold switches.
struct Switch {
  std::string name;
  int level = 0;
  int parent = -1;            ///< index into ClusterLayout::switches; -1 at the top
  std::vector<int> nodes;     ///< node indices under this switch (all descendants), ascending
  std::vector<int> children;  ///< switch indices directly below
};

/// Nodes, switches and blocks. Node order is Slurm's node order (slurm.conf NodeName order).
struct ClusterLayout {
  std::vector<std::string> node_names;
  int gpus_per_node = 8;
  std::string instance_type;         ///< catalog system, "" when read from slurm.conf alone
  double price_per_node_hour = 0.0;  ///< USD; 0 = unknown
  std::vector<Switch> switches;      ///< empty: flat network (topology/none)
  std::vector<int> node_leaf;        ///< leaf switch of each node, -1 when none
  std::vector<int> node_block;       ///< NVLink block (UltraServer) of each node, -1 when none
  int block_size = 0;                ///< nodes per block; 0 = no blocks
  /// Hops between switches through their lowest common ancestor (Slurm's switches_dist);
  /// kUnreachable when they share none.
  std::vector<std::vector<int>> switch_distance;

  static constexpr int kUnreachable = 1 << 28;
  bool single_tree_ = false;  ///< set by finalize()
  /// True when every node is under at most one leaf and every switch has at most one parent
  /// (set by finalize()): a switch's free nodes are then the sum of its children's.
  bool disjoint_tree_ = false;
  [[nodiscard]] int nodes() const { return static_cast<int>(node_names.size()); }
  [[nodiscard]] int index_of(const std::string& node) const;  ///< -1 when absent
  /// True when one switch holds every node (then tree placement fits any job that has the nodes).
  [[nodiscard]] bool single_tree() const { return single_tree_; }
  /// Computes node lists of upper switches, node_leaf and switch_distance from leaves and parents.
  void finalize();
};

/// The layout of a catalog cluster: nodes named <prefix>1..N in order; UltraServers become
/// blocks of system.nodes nodes; EFA leaves of nodes_per_leaf nodes (or of one UltraServer, or 16
/// nodes when the catalog says non-blocking) under one spine per 16 leaves and a root when there
/// is more than one spine.
ClusterLayout layout_from_cluster(const hardware::ClusterSpec& cluster, const std::string& prefix = "node");

/// A flat layout (no switches, no blocks) of these nodes, in this order: a cluster read from
/// slurm.conf's NodeName lines before any topology.conf.
ClusterLayout layout_from_names(std::vector<std::string> names);
/// A flat layout of `count` nodes named <prefix>1..<prefix>count.
ClusterLayout flat_layout(int count, const std::string& prefix = "n");

/// topology.conf text for the layout: one SwitchName line per switch, leaves with Nodes=, upper
/// switches with Switches= (topology/tree), or BlockName lines (topology/block).
std::string write_topology_conf(const ClusterLayout& layout, bool blocks);
/// Kubernetes node labels (topology.k8s.aws/network-node-layer-1..3, and the UltraServer id),
/// one `kubectl label node` line per node.
std::string write_node_labels(const ClusterLayout& layout);
/// Compressed Slurm host list of these node indices ("node[1-4,7]").
std::string hostlist(const ClusterLayout& layout, const std::vector<int>& nodes);

}  // namespace fmsim::orchestration
