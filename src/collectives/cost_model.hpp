// Analytical cost of one collective on a group of ranks: NCCL's alpha-beta model per algorithm and
// protocol (latency + bytes / bandwidth), with bandwidths taken from the links the group crosses.
//
// Method: the tuning model of NCCL 2.30.7 (src/graph/tuning.cc: base and per-hop latencies,
// protocol factors, per-channel caps, NVLS efficiency, tree correction factors) with the graph
// search replaced by physical link bandwidths:
//   * inside an NVLink domain: NVLink links x NCCL's per-link bandwidth (topo.h);
//   * across domains: the NIC rails of the group's ranks in each domain x the fabric's efficiency,
//     divided by the oversubscription when the group spans several leaf switches;
//   * NVLS: channels x speed from NCCL's speed array within the NVLink budget, x nvlsEfficiency;
//   * NVLS-tree: min(NVLS inside the domain, the tree across domains over the NIC rails).
// Selection evaluates every (algorithm, protocol) NCCL would consider and keeps the fastest, as
// ncclTopoGetAlgoTime does; Hierarchical is evaluated only when forced.
//
// Domain of validity: NVSwitch systems (HGX 8-GPU, NVL36/72), EFA v1-v4 and InfiniBand fabrics,
// groups of 2 to a few thousand ranks, messages of 8 B to 16 GiB. Measured error against
// validation/collectives.csv: see docs/validation.md. Not modelled: CollNet/SHARP,
// PXN rerouting, congestion from other jobs, NCCL tuner plugins.
#pragma once

#include <vector>

#include "collectives/calibration.hpp"
#include "collectives/collective.hpp"
#include "topology/group.hpp"
#include "topology/topology.hpp"

namespace fmsim::collectives {

/// Cost of `op` moving `bytes` (nccl-tests convention, see CollectiveCost) over a group of shape
/// `group`. Pure and allocation-free; well under a microsecond. A forced algorithm that cannot
/// run on the group (NVLS across domains, PAT with several ranks per node, a group crossing
/// domains on a system without NICs) gives feasible = false and an infinite time.
/// Network bandwidth one GPU's point-to-point traffic (send/recv, all-to-all) can drive, one
/// direction, before the fabric efficiency: all of its NICs on EFA with aws-ofi-nccl's multi-rail
/// devices, at most `p2p_max_nics_per_gpu` of them on NCCL's own IB/RoCE transport.
double p2p_nic_bandwidth(const topology::Topology& topology, const Calibration& calibration);

CollectiveCost estimate(const topology::Topology& topology, const Calibration& calibration,
                        const topology::GroupShape& group, Op op, core::Bytes bytes, const Options& options = {});

/// Same, classifying `group` first (O(group size)); classify once and reuse the shape in loops.
CollectiveCost estimate(const topology::Topology& topology, const Calibration& calibration,
                        const topology::Group& group, Op op, core::Bytes bytes, const Options& options = {});

/// Every feasible (algorithm, protocol) candidate for the op on the group, in registry order,
/// including Hierarchical; the one `estimate` picks by default is the fastest NCCL algorithm.
std::vector<CollectiveCost> candidates(const topology::Topology& topology, const Calibration& calibration,
                                       const topology::GroupShape& group, Op op, core::Bytes bytes);

}  // namespace fmsim::collectives
