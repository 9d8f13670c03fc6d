// The physical topology of a cluster: GPUs, NVLink domains, NICs per node and the fabric above them.
//
//        leaf switch (nodes_per_leaf nodes; uplinks oversubscribed by `oversubscription`)
//        /                         |
//   node 0: NIC rail 0..g-1    node 1: NIC rail 0..g-1      each GPU uses the NIC(s) on its own
//     |  |  ...  |               |  |  ...  |                PCIe switch (rail-optimized)
//   GPU0 GPU1 .. GPUg-1        GPUg ...                      GPUs of one NVLink domain talk over
//     \____NVSwitch____/         \____NVSwitch____/          NVLink, never through a NIC
//
// An NVLink domain is `domain_gpus` consecutive ranks: 8 on an HGX instance, 36 or 72 when an
// UltraServer / NVL72 rack joins several nodes into one domain, 1 when GPUs have no NVLink peer.
// Ranks are numbered node-major (ranks 0..g-1 on node 0), so a group's placement is its rank list.
#pragma once

#include <string>
#include <vector>

#include "core/units.hpp"
#include "hardware/specs.hpp"

namespace fmsim::topology {

/// GPU generation as NCCL's tuning tables index it (by CUDA compute capability).
/// Physical description of a cluster, in the terms the network and collective models need.
struct Topology {
  // Sizes.
  int gpus = 1;
  int nodes = 1;
  int gpus_per_node = 1;
  int domain_gpus = 1;  ///< GPUs in one NVLink domain (may span nodes; 1 = no NVLink peer)
  int leaves = 1;       ///< leaf switches
  int nodes_per_leaf = 1;

  // Scale-up (NVLink / NVSwitch).
  hardware::Architecture architecture = hardware::Architecture::Hopper;  ///< the GPU spec's generation
  int sm_version = 90;
  int nvlink_links = 0;                     ///< NVLink links per GPU
  core::BytesPerSecond nvlink_bandwidth{};  ///< per GPU, one direction, line rate
  bool nvswitch = false;
  bool nvls = false;  ///< NVLink SHARP multicast/reduction in the switch

  // Scale-out (EFA / InfiniBand).
  hardware::FabricKind fabric_kind = hardware::FabricKind::None;
  std::string fabric;  ///< catalog name, e.g. "efa-v2"
  int fabric_generation = 0;
  core::Seconds net_latency{};      ///< per hop as NCCL's net model charges it (Simple: x2)
  core::Seconds message_latency{};  ///< per hop for small LL/LL128 messages
  double net_efficiency = 1.0;      ///< achievable fraction of NIC line rate
  int nics_per_node = 0;
  core::BytesPerSecond nic_bandwidth{};           ///< one NIC, one direction
  core::BytesPerSecond node_network_bandwidth{};  ///< one node, all NICs, one direction
  double oversubscription = 1.0;                  ///< above the leaf switch
  hardware::CpuVendor cpu_vendor = hardware::CpuVendor::Intel;

  [[nodiscard]] int node_of(int rank) const { return rank / gpus_per_node; }
  [[nodiscard]] int domain_of(int rank) const { return rank / domain_gpus; }
  [[nodiscard]] int leaf_of_node(int node) const { return node / nodes_per_leaf; }
  [[nodiscard]] int domains() const { return (gpus + domain_gpus - 1) / domain_gpus; }
  [[nodiscard]] bool has_network() const { return node_network_bandwidth.value() > 0.0; }
  /// NIC line rate per GPU: the node's NICs shared evenly by its GPUs (rail-optimized).
  [[nodiscard]] core::BytesPerSecond nic_bandwidth_per_gpu() const {
    return node_network_bandwidth / static_cast<double>(gpus_per_node);
  }
  /// NICs on one GPU's rail (at least 1 when the node has any NIC; 0 without).
  [[nodiscard]] int nics_per_gpu() const {
    if (nics_per_node <= 0) return 0;
    return nics_per_node >= gpus_per_node ? nics_per_node / gpus_per_node : 1;
  }

  // Links of the flow-level network model. Every GPU has an NVLink transmit and receive port
  // (to its NVSwitch) and a NIC rail transmit and receive port; every leaf switch has an uplink
  // and a downlink to the spine.
  [[nodiscard]] int link_count() const { return 4 * gpus + 2 * leaves; }
  [[nodiscard]] int nvlink_tx(int gpu) const { return gpu; }
  [[nodiscard]] int nvlink_rx(int gpu) const { return gpus + gpu; }
  [[nodiscard]] int nic_tx(int gpu) const { return 2 * gpus + gpu; }
  [[nodiscard]] int nic_rx(int gpu) const { return 3 * gpus + gpu; }
  [[nodiscard]] int leaf_up(int leaf) const { return 4 * gpus + leaf; }
  [[nodiscard]] int leaf_down(int leaf) const { return 4 * gpus + leaves + leaf; }
  /// Capacity of every link, bytes/s: NVLink at line rate, NIC rails at line rate times the
  /// fabric efficiency, leaf uplinks at their nodes' NIC total divided by the oversubscription.
  [[nodiscard]] std::vector<double> link_capacities() const;
  /// Appends the links a transfer from `src` to `dst` crosses (none when src == dst): NVLink
  /// inside a domain, otherwise the sender's NIC rail, the leaf uplinks when the leaves differ,
  /// and the receiver's NIC rail.
  void route(int src, int dst, std::vector<int>& links) const;
};

/// Builds the topology of a cluster. Never fails on a valid spec; a system without NICs gets a
/// topology whose cross-domain routes have zero capacity (the cost model reports them infeasible).
Topology build_topology(const hardware::ClusterSpec& cluster);

}  // namespace fmsim::topology
