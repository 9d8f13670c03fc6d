// Building a Topology from a ClusterSpec, and the link catalogue of the flow-level model.
#include "topology/topology.hpp"

#include <algorithm>

namespace fmsim::topology {

Topology build_topology(const hardware::ClusterSpec& cluster) {
  Topology t;
  const hardware::SystemSpec& sys = cluster.system;
  t.gpus_per_node = std::max(1, sys.gpus_per_node);
  t.nodes = std::max(1, cluster.nodes());
  t.gpus = t.nodes * t.gpus_per_node;
  t.domain_gpus = std::clamp(sys.nvlink_domain_gpus, 1, t.gpus);
  t.nodes_per_leaf = cluster.nodes_per_leaf > 0 ? std::min(cluster.nodes_per_leaf, t.nodes) : t.nodes;
  t.leaves = (t.nodes + t.nodes_per_leaf - 1) / t.nodes_per_leaf;

  t.sm_version = cluster.gpu.sm_version;
  t.architecture = cluster.gpu.architecture;
  t.nvlink_links = t.domain_gpus > 1 ? cluster.gpu.nvlink_links : 0;
  t.nvlink_bandwidth = t.domain_gpus > 1 ? cluster.gpu.nvlink_per_direction() : core::BytesPerSecond{};
  t.nvswitch = sys.nvswitch && t.domain_gpus > 1;
  t.nvls = sys.nvls && t.nvswitch;

  t.fabric_kind = cluster.fabric.kind;
  t.fabric = cluster.fabric.name;
  t.fabric_generation = cluster.fabric.generation;
  t.net_latency = cluster.fabric.latency;
  t.message_latency =
      cluster.fabric.message_latency.value() > 0.0 ? cluster.fabric.message_latency : cluster.fabric.latency;
  t.net_efficiency = cluster.fabric.efficiency > 0.0 ? cluster.fabric.efficiency : 1.0;
  t.nics_per_node = sys.nics_per_node;
  t.nic_bandwidth = sys.nic_bandwidth;
  t.node_network_bandwidth = sys.network_bandwidth.value() > 0.0
                                 ? sys.network_bandwidth
                                 : sys.nic_bandwidth * static_cast<double>(std::max(0, sys.nics_per_node));
  t.oversubscription = std::max(1.0, cluster.oversubscription);
  t.cpu_vendor = sys.cpu_vendor;
  return t;
}

std::vector<double> Topology::link_capacities() const {
  std::vector<double> cap(static_cast<std::size_t>(link_count()), 0.0);
  const double nvl = nvlink_bandwidth.value();
  const double nic = nic_bandwidth_per_gpu().value() * net_efficiency;
  for (int g = 0; g < gpus; ++g) {
    cap[static_cast<std::size_t>(nvlink_tx(g))] = nvl;
    cap[static_cast<std::size_t>(nvlink_rx(g))] = nvl;
    cap[static_cast<std::size_t>(nic_tx(g))] = nic;
    cap[static_cast<std::size_t>(nic_rx(g))] = nic;
  }
  for (int l = 0; l < leaves; ++l) {
    const int first = l * nodes_per_leaf;
    const int count = std::min(nodes_per_leaf, nodes - first);
    const double uplink = count * gpus_per_node * nic / oversubscription;
    cap[static_cast<std::size_t>(leaf_up(l))] = uplink;
    cap[static_cast<std::size_t>(leaf_down(l))] = uplink;
  }
  return cap;
}

void Topology::route(int src, int dst, std::vector<int>& links) const {
  if (src == dst) return;
  if (domain_of(src) == domain_of(dst)) {
    links.push_back(nvlink_tx(src));
    links.push_back(nvlink_rx(dst));
    return;
  }
  links.push_back(nic_tx(src));
  const int leaf_src = leaf_of_node(node_of(src));
  const int leaf_dst = leaf_of_node(node_of(dst));
  if (leaf_src != leaf_dst) {
    links.push_back(leaf_up(leaf_src));
    links.push_back(leaf_down(leaf_dst));
  }
  links.push_back(nic_rx(dst));
}

}  // namespace fmsim::topology
