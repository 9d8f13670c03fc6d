// Collective operations, algorithms and protocols; the options and result of a cost estimate;
// the registry of algorithms with their citations.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "core/units.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::collectives {

enum class Op { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

/// Auto lets the model pick the fastest algorithm NCCL would run; Hierarchical is not an NCCL
/// algorithm (frameworks build it from sub-communicators) and is used only when forced.
enum class Algorithm { Auto, Ring, Tree, Nvls, NvlsTree, Pat, Hierarchical, Direct };

/// NCCL protocols: LL (8-byte flag+data stores), LL128 (128-byte lines), Simple (bulk copies).
enum class Protocol { Auto, LL, LL128, Simple };

/// The words of `fmsim collective --op` and the `collective` column of collectives CSVs; canonical
/// names are nccl-tests' ("all_reduce"; "allreduce" and "all-reduce" are the same word).
inline constexpr core::Word<Op> kOpWordList[] = {
    {Op::AllReduce, "all_reduce"},
    {Op::AllGather, "all_gather"},
    {Op::ReduceScatter, "reduce_scatter"},
    {Op::Broadcast, "broadcast"},
    {Op::Reduce, "reduce"},
    {Op::AllToAll, "all_to_all", "alltoallv"},
    {Op::SendRecv, "sendrecv", "send, recv, p2p"},
};
inline constexpr core::Vocabulary<Op> kOpWords{"collective", kOpWordList};

/// The words of --algo (NCCL_ALGO spellings).
inline constexpr core::Word<Algorithm> kAlgorithmWordList[] = {
    {Algorithm::Auto, "auto"},
    {Algorithm::Ring, "ring"},
    {Algorithm::Tree, "tree"},
    {Algorithm::Nvls, "nvls"},
    {Algorithm::NvlsTree, "nvls_tree"},
    {Algorithm::Pat, "pat"},
    {Algorithm::Hierarchical, "hierarchical"},
    {Algorithm::Direct, "direct"},
};
inline constexpr core::Vocabulary<Algorithm> kAlgorithmWords{"collective algorithm", kAlgorithmWordList};

/// The words of --proto (NCCL_PROTO spellings).
inline constexpr core::Word<Protocol> kProtocolWordList[] = {
    {Protocol::Auto, "auto"},
    {Protocol::LL, "LL"},
    {Protocol::LL128, "LL128"},
    {Protocol::Simple, "Simple"},
};
inline constexpr core::Vocabulary<Protocol> kProtocolWords{"NCCL protocol", kProtocolWordList};

constexpr std::string_view op_name(Op op) { return kOpWords.name(op); }  ///< "all_reduce", ...
constexpr std::string_view algorithm_name(Algorithm a) {
  return kAlgorithmWords.name(a);
}  ///< "ring", "nvls_tree", ...
constexpr std::string_view protocol_name(Protocol p) { return kProtocolWords.name(p); }  ///< "LL", "LL128", "Simple"
inline std::optional<Op> op_from_name(std::string_view name) { return kOpWords.parse(name); }
inline std::optional<Algorithm> algorithm_from_name(std::string_view name) { return kAlgorithmWords.parse(name); }
inline std::optional<Protocol> protocol_from_name(std::string_view name) { return kProtocolWords.parse(name); }

/// nccl-tests bus-bandwidth factor: busbw = algbw * factor(n). all_reduce 2(n-1)/n;
/// all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce, send/recv 1.
double bus_factor(Op op, int ranks);

/// Choices a caller may force.
struct Options {
  Algorithm algorithm = Algorithm::Auto;
  Protocol protocol = Protocol::Auto;
};

/// The predicted cost of one collective.
///
/// `bytes` follows nccl-tests: the buffer size for all_reduce, broadcast, reduce and send/recv;
/// the gathered (output) size for all_gather; the input size for reduce_scatter; each rank's
/// whole send buffer for all_to_all. algbw = bytes / time; busbw = algbw * bus_factor.
struct CollectiveCost {
  core::Seconds time{};
  core::Seconds latency{};  ///< the size-independent part of `time`
  core::BytesPerSecond algbw{};
  core::BytesPerSecond busbw{};
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int channels = 0;
  bool feasible = true;  ///< false when the forced algorithm cannot run on this group
};

/// One entry of the algorithm registry.
struct AlgorithmInfo {
  Algorithm id;
  std::string_view name;
  std::string_view summary;
  std::string_view citation;
};

/// Every algorithm the model knows, with a one-line summary and the source it follows.
std::span<const AlgorithmInfo> algorithm_registry();

}  // namespace fmsim::collectives
