// The job whose checkpoint is modelled, from the flag values of `fmsim checkpoint`, `fmsim goodput`
// and `fmsim run`: what is saved, by whom, to which tier.
#pragma once

#include <string>

#include "config/reliability_loader.hpp"
#include "core/units.hpp"
#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"
#include "storage/checkpoint_io.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::jobspec {

/// Raw flag values; empty strings and zeros mean "not given".
struct CheckpointJobFlags {
  std::string model;                ///< --model: preset or config.json
  std::string params;               ///< --params: "405B"
  double bytes_per_param = 0.0;     ///< --bytes-per-param
  double weight_bytes = 0.0;        ///< --weight-bytes
  std::string cluster;              ///< --cluster: "p5.48xlarge:2048" or a cluster YAML
  int nodes = 0;                    ///< --nodes (without --cluster)
  int gpus = 0;                     ///< --gpus (without --cluster)
  int gpus_per_node = 8;            ///< --gpus-per-node (without --cluster)
  int tp = 1;                       ///< --tp
  int pp = 1;                       ///< --pp
  std::string sharding = "zero1";   ///< --sharding: a word of parallelism::kShardingWords
  std::string storage;              ///< --storage: catalog key
  std::string capacity;             ///< --capacity (FSx)
  std::string throughput_per_tib;   ///< --throughput-per-tib (FSx)
  int prefixes = 0;                 ///< --prefixes (S3)
  std::string tier_bandwidth;       ///< --tier-bandwidth: a tier given by numbers
  std::string tier_node_bandwidth;  ///< --tier-node-bandwidth
  std::string node_network;         ///< --node-network: one node's egress
  bool async = false;               ///< --async
  std::string writer_throughput;    ///< --writer-throughput ("0" = unbounded)
  std::string device_to_host;       ///< --device-to-host
  std::string pageable_copy;        ///< --pageable-copy
  int keep = 2;                     ///< --keep
};

/// The resolved job: what is saved, by whom, to which tier.
struct CheckpointJob {
  std::string model;          ///< model name, or "" for --params
  bool has_contents = false;  ///< --model or --params given
  storage::CheckpointContents contents;
  storage::CheckpointLayout layout;
  storage::TierPerformance tier;
  bool has_tier = false;
  storage::CheckpointEngine engine;
  core::BytesPerSecond node_network{};  ///< 0 = unbounded
  hardware::ClusterSpec cluster;        ///< count/system filled from --cluster or --nodes/--gpus
  int keep = 2;
  config::CheckpointDefaults defaults;
};

/// Resolves the flags against the catalog and the shipped defaults; InputError naming the flag on
/// bad or inconsistent values (e.g. --tp x --pp not dividing the GPUs).
CheckpointJob resolve_checkpoint_job(const CheckpointJobFlags& flags, const hardware::Catalog& catalog);

/// The part of a checkpoint job that does not depend on its size and layout: node network,
/// contents (`parameters` x --bytes-per-param; none when `parameters` is 0), engine and tier.
/// `job.cluster` must be set; the size flags (--model, --params, --cluster, --nodes, --gpus, --tp,
/// --pp, --sharding) are not read, so `fmsim run` can derive them from its training layout.
void resolve_checkpoint_storage(CheckpointJob& job, double parameters, const CheckpointJobFlags& flags,
                                const hardware::Catalog& catalog);

/// The tier `name` of the catalog attached to `cluster` (capacity etc. from the cluster's own
/// attachment of that storage if it has one); InputError on `flag` when unknown.
storage::TierPerformance resolve_tier(const hardware::Catalog& catalog, const hardware::ClusterSpec& cluster,
                                      const std::string& name, const CheckpointJobFlags& flags,
                                      const config::CheckpointDefaults& defaults, const std::string& flag);

}  // namespace fmsim::jobspec
