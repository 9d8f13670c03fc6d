// `fmsim topology`: the flags resolved into the cluster's layout and what to write for it,
// Slurm's topology.conf (tree or block plugin) or Kubernetes node labels. The text and JSON are
// documents/topology.hpp's.
#pragma once

#include <string>

#include "hardware/catalog.hpp"
#include "orchestration/cluster_layout.hpp"

namespace fmsim::jobspec {

/// The flag values of `fmsim topology`.
struct TopologyFlags {
  std::string flavour;  ///< slurm | k8s
  std::string cluster = "p5.48xlarge:32";
  std::string plugin;  ///< tree | block; default block for UltraServers, tree otherwise
  std::string node_prefix = "node";
};

/// A validated topology job.
struct TopologyJob {
  orchestration::ClusterLayout layout;
  bool slurm = true;    ///< topology.conf; else Kubernetes node labels
  bool blocks = false;  ///< topology/block (NVLink blocks); else topology/tree
  std::string system;   ///< the catalog system, for messages
};

/// InputError naming the flag: an unknown flavour or plugin, a node prefix that is not a Kubernetes
/// node name and Slurm host name prefix, more than 100,000 nodes, the block plugin without NVLink
/// blocks, a plugin for k8s.
TopologyJob resolve_topology_job(const TopologyFlags& flags, const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
