// Tuning constants of the collective model: NCCL 2.30.7's own tables and the few factors fitted
// to published measurements. Shipped with sources in data/calibration/collectives.yaml and read by
// config::load_collectives_calibration; the defaults below equal the shipped file (a config test
// checks this), so library callers and unit tests get the same numbers without a file.
#pragma once

#include <array>
#include <vector>

#include "core/units.hpp"

namespace fmsim::collectives {

/// Per-protocol values, indexed LL, LL128, Simple.
using PerProtocol = std::array<double, 3>;
/// Per node-count bucket as NCCL indexes them: 1 node, 2 nodes, 3 or more.
using PerNodeBucket = std::array<double, 3>;

/// NCCL's latency model of one algorithm (microseconds), from tuning.cc baseLat / hwLat.
struct AlgorithmLatency {
  PerProtocol base{};
  PerProtocol nvlink{};   ///< per intra-node step over NVLink
  PerProtocol pci{};      ///< per intra-node step over PCIe
  PerProtocol network{};  ///< per inter-node step, before the fabric's own latency
  friend bool operator==(const AlgorithmLatency&, const AlgorithmLatency&) = default;
};

/// Constants that depend on the GPU generation. Bandwidths in GB/s (10^9 bytes/s) per direction.
struct FamilyTuning {
  double nvlink_link_bandwidth = 20.6;  ///< NCCL's effective bandwidth of one NVLink (topo.h)
  double ring_efficiency = 1.0;         ///< measured ring busbw / NCCL's NVLink model
  double nvls_efficiency = 0.85;        ///< NCCL nvlsEfficiency
  std::vector<double> channel_speeds;   ///< NCCL intra-node speed array (search.cc), descending
  int nvls_max_channels = 16;
  double ring_channel_bandwidth = 24.0;  ///< per-channel bandwidth used to count ring channels
  double ll_max_bandwidth = 141.0;       ///< llMaxBws for one node
  PerNodeBucket ring_ll128_per_channel{36.7, 36.7, 36.7};
  PerNodeBucket tree_ll128_per_channel{36.7, 36.7, 29.0};
  PerNodeBucket tree_per_channel{38.7, 41.4, 36.0};
  friend bool operator==(const FamilyTuning&, const FamilyTuning&) = default;
};

/// Everything the collective cost model is tuned with.
struct Calibration {
  AlgorithmLatency tree{{6.8, 14.0, 8.4}, {0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}};
  AlgorithmLatency ring{{6.6, 14.0, 8.4}, {0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
  AlgorithmLatency nvls{{0, 0, 0}, {0, 0, 25.0}, {0, 0, 0}, {0, 0, 18.0}};
  AlgorithmLatency nvls_tree{{0, 0, 0}, {0, 0, 25.0}, {0, 0, 0}, {0, 0, 20.9}};
  AlgorithmLatency pat{{8.0, 8.0, 8.0}, {0, 0, 4.0}, {0, 0, 4.0}, {0, 0, 14.0}};

  /// llMaxBws for multi-node groups by host CPU (2 nodes, 3+ nodes; the 1-node slot is unused).
  PerNodeBucket ll_max_bandwidth_intel{39.0, 39.0, 20.4};
  PerNodeBucket ll_max_bandwidth_amd{87.7, 22.5, 19.0};
  double net_overhead_intel_us = 1.0;  ///< per network post; x3 for Simple
  double net_overhead_amd_us = 2.0;

  double ring_ll_factor = 0.5;
  double ring_ll128_factor = 0.92;
  double tree_factor = 0.92;
  double tree_ll_factor = 0.263158;              ///< 1/3.8
  double tree_ll128_factor_one_node = 0.777778;  ///< 7/9
  double tree_ll128_factor_multi_node = 0.9375;  ///< 120/128
  double pat_factor = 0.75;
  double pat_log_latency_divisor = 3.5;  ///< PAT pays network latency / 3.5 per tree level
  double pat_per_rank_latency_us = 2.8;  ///< and this much per rank (NCCL's linear term)
  double ring_plateau_factor = 1.4;      ///< multi-node Simple ring all-reduce latency multiplier
  /// treeCorrectionFactor[protocol][log2(bytes/64)], 64 B to 512 MiB.
  std::array<std::array<double, 24>, 3> tree_correction{{
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
  }};
  int max_channels = 32;
  double pci_bandwidth = 24.0;  ///< GB/s, NCCL PCI_BW, for GPUs without an NVLink peer

  /// By NCCL's compute-capability class (Volta, Ampere, Hopper, Blackwell): family(sm_version).
  std::array<FamilyTuning, 4> families{{
      {20.0,
       0.96,
       0.0,
       {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},
       16,
       20.0,
       39.0,
       {20.0, 20.0, 20.0},
       {20.0, 20.0, 20.0},
       {26.5, 18.5, 10.0}},
      {20.0,
       0.96,
       0.0,
       {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},
       16,
       20.0,
       87.7,
       {20.0, 20.0, 20.0},
       {20.0, 20.0, 20.0},
       {24.0, 23.6, 17.8}},
      {20.6,
       0.99,
       0.85,
       {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3},
       16,
       24.0,
       141.0,
       {36.7, 36.7, 36.7},
       {36.7, 36.7, 29.0},
       {38.7, 41.4, 36.0}},
      {40.1,
       0.945,
       0.74,
       {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 18},
       16,
       40.0,
       282.0,
       {40.0, 40.0, 40.0},
       {55.6, 31.67, 20.0},
       {70.0, 42.8, 24.0}},
  }};

  /// NVLS channel budget: the NVLS graph gets channels x speed <= budget x NVLink bandwidth.
  double nvls_channel_budget = 0.9;
  /// Extra NVLS latency for each further node an NVLink domain spans (multi-node NVLink).
  double mnnvl_nvls_latency_per_node_us = 35.0;

  // Point-to-point (send/recv, all-to-all).
  double p2p_nvlink_efficiency = 0.87;  ///< fraction of NVLink line rate one p2p stream reaches
  int p2p_max_nics_per_gpu = 1;         ///< NICs one GPU's p2p traffic can use (NCCL's own IB/RoCE net)
  /// aws-ofi-nccl's RDMA protocol groups a GPU's EFA NICs into one multi-rail device and stripes
  /// messages over them, so on EFA p2p and all-to-all drive all of the GPU's NICs.
  bool p2p_efa_multi_rail = true;
  double p2p_base_latency_us = 6.0;
  double p2p_per_peer_latency_us = 0.1;  ///< issue cost per peer of an all-to-all

  /// NCCL's tuning tables by compute capability (src/graph/tuning.cc: sm 70 Volta, 80 Ampere, 90
  /// Hopper, 100 and later Blackwell, so Blackwell Ultra's sm 103 is tuned as Blackwell).
  [[nodiscard]] const FamilyTuning& family(int sm_version) const {
    return families[sm_version >= 100 ? 3 : sm_version >= 90 ? 2 : sm_version >= 80 ? 1 : 0];
  }
  friend bool operator==(const Calibration&, const Calibration&) = default;
};

}  // namespace fmsim::collectives
