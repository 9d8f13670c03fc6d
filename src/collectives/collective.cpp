// Names, bus-bandwidth factors and the algorithm registry.
#include "collectives/collective.hpp"

#include <array>
#include <string>

#include "core/strings.hpp"

namespace fmsim::collectives {

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  if (ranks <= 1) return 1.0;
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1.0) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll: return (n - 1.0) / n;
    case Op::Broadcast:
    case Op::Reduce:
    case Op::SendRecv: return 1.0;
  }
  return 1.0;
}

std::span<const AlgorithmInfo> algorithm_registry() {
  static constexpr std::array<AlgorithmInfo, 7> kRegistry{{
      {Algorithm::Ring, "ring", "pipelined ring over all ranks; 2(n-1) steps for all-reduce, n-1 for gathers",
       "Patarasuk & Yuan, JPDC 2009; NCCL 2.30.7 src/graph/tuning.cc"},
      {Algorithm::Tree, "tree", "intra-node chain plus inter-node double binary tree (all-reduce)",
       "Sanders, Speck & Traeff, Parallel Computing 2009; NCCL 2.4 double binary trees"},
      {Algorithm::Nvls, "nvls", "NVLink SHARP: reduction and multicast in the NVSwitch, one NVLink domain",
       "NCCL 2.17+ NVLS; NCCL 2.30.7 src/graph/tuning.cc (nvlsEfficiency)"},
      {Algorithm::NvlsTree, "nvls_tree", "NVLS inside each domain plus a tree across domains (all-reduce)",
       "NCCL 2.18+ NVLSTree; NCCL 2.30.7 src/graph/tuning.cc"},
      {Algorithm::Pat, "pat", "Parallel Aggregated Trees for all-gather/reduce-scatter at one rank per node",
       "Jeaugey, arXiv:2506.20252; NCCL 2.23+"},
      {Algorithm::Hierarchical, "hierarchical",
       "intra-domain reduce-scatter, per-rail ring across domains, intra-domain all-gather (forced only)",
       "Jia et al., arXiv:1807.11205 (2D/hierarchical all-reduce)"},
      {Algorithm::Direct, "direct", "point-to-point sends: all-to-all(v) and send/recv over NVLink or NIC rails",
       "NCCL p2p (ncclSend/ncclRecv); nccl-tests alltoall_perf"},
  }};
  return kRegistry;
}

}  // namespace fmsim::collectives
