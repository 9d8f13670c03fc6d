// Names, bus-bandwidth factors and the algorithm registry.
#include "collectives/collective.hpp"

#include <array>
#include <string>

#include "core/strings.hpp"

namespace fmsim::collectives {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::AllReduce: return "all_reduce";
    case Op::AllGather: return "all_gather";
    case Op::ReduceScatter: return "reduce_scatter";
    case Op::Broadcast: return "broadcast";
    case Op::Reduce: return "reduce";
    case Op::AllToAll: return "all_to_all";
    case Op::SendRecv: return "sendrecv";
  }
  return "all_reduce";
}

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Nvls: return "nvls";
    case Algorithm::NvlsTree: return "nvls_tree";
    case Algorithm::Pat: return "pat";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Direct: return "direct";
  }
  return "auto";
}

std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::Auto: return "auto";
    case Protocol::LL: return "LL";
    case Protocol::LL128: return "LL128";
    case Protocol::Simple: return "Simple";
  }
  return "auto";
}

namespace {
std::string squash(std::string_view s) {
  std::string out;
  for (char c : core::to_lower(s)) {
    if (c != '_' && c != '-') out.push_back(c);
  }
  return out;
}
}  // namespace

std::optional<Op> op_from_name(std::string_view name) {
  const std::string s = squash(name);
  if (s == "allreduce") return Op::AllReduce;
  if (s == "allgather") return Op::AllGather;
  if (s == "reducescatter") return Op::ReduceScatter;
  if (s == "broadcast") return Op::Broadcast;
  if (s == "reduce") return Op::Reduce;
  if (s == "alltoall" || s == "alltoallv") return Op::AllToAll;
  if (s == "sendrecv" || s == "send" || s == "recv" || s == "p2p") return Op::SendRecv;
  return std::nullopt;
}

std::optional<Algorithm> algorithm_from_name(std::string_view name) {
  const std::string s = squash(name);
  for (Algorithm a : {Algorithm::Auto, Algorithm::Ring, Algorithm::Tree, Algorithm::Nvls, Algorithm::NvlsTree,
                      Algorithm::Pat, Algorithm::Hierarchical, Algorithm::Direct}) {
    if (squash(algorithm_name(a)) == s) return a;
  }
  return std::nullopt;
}

std::optional<Protocol> protocol_from_name(std::string_view name) {
  const std::string s = squash(name);
  for (Protocol p : {Protocol::Auto, Protocol::LL, Protocol::LL128, Protocol::Simple}) {
    if (squash(protocol_name(p)) == s) return p;
  }
  return std::nullopt;
}

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
