// Checkpoint size, how it is sharded over ranks and nodes, and the time to save and to load it.
//
// Size: parameters x bytes per parameter, split into working weights (bf16: 2 B) and optimizer
// state (mixed-precision Adam: fp32 master copy 4 B + first and second moments 8 B = 12 B), so
// 14 B/param by default (BLOOM-176B: 176e9 x 14 B = 2.3 TB, bigscience tr11 README).
//
// Sharding, ranks placed Megatron/DeepSpeed-style (tensor-parallel ranks innermost, then data
// parallel, then pipeline stages), so a node holds several data-parallel indices when TP < GPUs/node:
//   None       plain DDP: data-parallel rank 0 of each model-parallel shard writes everything.
//   Optimizer  ZeRO-1/2 or a distributed optimizer: optimizer state split over all ranks,
//              weights written by data-parallel rank 0 only (Megatron-DeepSpeed, BLOOM).
//   Full       ZeRO-3/FSDP or a deduplicating distributed checkpoint: all state over all ranks.
//
// Time: each rank copies its shard off the GPU and then serialises and writes it, one after the
// other (torch.save and DCP copy a tensor to host memory before writing it; an asynchronous save
// stages the whole shard first), so one rank's stream lasts copy + write. A synchronous save
// copies into pageable memory (slow: the driver bounces it through a pinned buffer); an
// asynchronous one into pinned staging buffers. Ranks, nodes and the tier work concurrently, so
// a save takes as long as the slowest of: the largest rank's stream, the busiest node's network
// egress and the tier's per-client cap, and the tier's aggregate bandwidth or request rate; plus
// one request latency. An asynchronous save blocks training only for the staging copy.
// Domain of validity: bulk sequential writes; metadata storms (millions of small files) are not
// modelled. See docs/models/storage.md.
#pragma once

#include <string>

#include "core/units.hpp"
#include "parallelism/layout.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::storage {

/// What a checkpoint holds, per model parameter.
struct CheckpointContents {
  double parameters = 0.0;
  double weight_bytes_per_param = 2.0;      ///< working weights (bf16)
  double optimizer_bytes_per_param = 12.0;  ///< fp32 master weights + Adam moments

  [[nodiscard]] double bytes_per_param() const { return weight_bytes_per_param + optimizer_bytes_per_param; }
  [[nodiscard]] core::Bytes weights() const { return core::Bytes(parameters * weight_bytes_per_param); }
  [[nodiscard]] core::Bytes optimizer() const { return core::Bytes(parameters * optimizer_bytes_per_param); }
  [[nodiscard]] core::Bytes total() const { return weights() + optimizer(); }
};

/// `bytes_per_param` in total, of which `weight_bytes` are the working weights (the rest is
/// optimizer state). Mixed-precision Adam: 14 and 2.
CheckpointContents checkpoint_contents(double parameters, double bytes_per_param = 14.0, double weight_bytes = 2.0);

using parallelism::Sharding;

/// What a checkpoint of a layout with this sharding holds sharded across data-parallel ranks:
/// "none" (ddp: one replica writes), "optimizer" (zero1, zero2: optimizer states), "full"
/// (fsdp: everything).
std::string_view sharded_state(Sharding sharding);

/// How the job's ranks are laid out.
struct CheckpointLayout {
  int ranks = 1;  ///< GPUs in the job
  int nodes = 1;
  int data_parallel = 1;    ///< model replicas; ranks / data_parallel = model-parallel size
  int tensor_parallel = 1;  ///< innermost rank group (placement only)
  Sharding sharding = Sharding::DistributedOptimizer;

  [[nodiscard]] int gpus_per_node() const { return ranks / nodes; }
  [[nodiscard]] int model_parallel() const { return ranks / data_parallel; }
};

/// Who writes and reads how much.
struct ShardPlan {
  core::Bytes total{};             ///< checkpoint size (bytes written once)
  int writers = 0;                 ///< ranks that write something
  core::Bytes max_writer_bytes{};  ///< the most one rank writes (and copies off its GPU)
  core::Bytes max_node_bytes{};    ///< the most one node writes
  core::Bytes load_total{};        ///< bytes read by all ranks together (replicas read their copy)
  core::Bytes max_rank_load{};
  core::Bytes max_node_load{};
};

ShardPlan plan_shards(const CheckpointContents& contents, const CheckpointLayout& layout);

/// How ranks move state between GPU and storage.
struct CheckpointEngine {
  core::BytesPerSecond device_to_host{};     ///< per GPU into pinned memory (async staging); 0 = unbounded
  core::BytesPerSecond pageable_copy{};      ///< per GPU to/from pageable memory (sync torch.save/load); 0 = as pinned
  core::BytesPerSecond writer_throughput{};  ///< one rank's serialise-and-write stream; 0 = unbounded
  core::BytesPerSecond reader_throughput{};  ///< one rank's read-and-deserialise stream; 0 = unbounded
  bool asynchronous = false;                 ///< only the GPU-to-host copy blocks training
};

enum class IoLimit { None, RankStream, NodeNetwork, NodeTier, TierBandwidth, TierRequests };

/// "rank stream", "node network", ...
std::string to_string(IoLimit limit);

/// Duration of each concurrent stage of one save or load, and the total.
struct IoTime {
  core::Seconds total{};
  core::Seconds rank_stream{};    ///< largest rank: device_copy + writer_stream, one after the other
  core::Seconds device_copy{};    ///< GPU <-> host copy of the largest rank's shard
  core::Seconds writer_stream{};  ///< its serialise-and-write (or read-and-deserialise) stream
  core::Seconds node_network{};
  core::Seconds node_tier{};
  core::Seconds tier_bandwidth{};
  core::Seconds tier_requests{};
  core::Seconds latency{};
  IoLimit bottleneck = IoLimit::None;
};

/// Cost of one checkpoint on one tier.
struct CheckpointEstimate {
  ShardPlan plan;
  IoTime save;
  IoTime load;
  core::Seconds staging_copy{};    ///< largest shard into pinned host memory (async / in-memory stall)
  core::Seconds pinned_restore{};  ///< largest rank's state back from pinned host memory (peer restore)
  core::Seconds blocking{};        ///< training stall per save: the whole save, or the staging copy if async
  core::Seconds persist{};         ///< from the start of a save until it can be restored
  core::Bytes retained{};          ///< bytes kept on the tier (`keep` checkpoints)
  bool fits = true;                ///< the tier's capacity holds `keep` checkpoints
};

/// Save and load times of `contents` laid out as `layout` on `tier`. `node_network` is one node's
/// egress (all NICs, one direction); it bounds remote tiers only. `keep` checkpoints are retained.
CheckpointEstimate estimate_checkpoint(const CheckpointContents& contents, const CheckpointLayout& layout,
                                       const TierPerformance& tier, const CheckpointEngine& engine,
                                       core::BytesPerSecond node_network, int keep = 2);

/// Time to copy `node_bytes` from each node to `copies` peers over `node_network` (in-memory
/// checkpoint replication, or a restore from a peer replica when copies = 1).
core::Seconds peer_transfer_time(core::Bytes node_bytes, int copies, core::BytesPerSecond node_network);

}  // namespace fmsim::storage
