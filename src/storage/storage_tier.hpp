// What one storage tier delivers to one job on one cluster: aggregate and per-node bandwidth,
// request-rate limits, capacity and whether the data survives the loss of a node.
//
// Tiers (hardware::StorageKind):
//   InstanceNvme  per-node local SSDs; bandwidth = per-node rate x nodes; lost with the node.
//   FsxLustre     aggregate = provisioned TiB x throughput per TiB; per-client cap from the catalog
//                 (EFA + GPUDirect Storage clients reach far more than ENA clients).
//   S3            no aggregate bandwidth limit; PUT/GET request rate per partitioned prefix
//                 x prefixes; per-connection throughput x connections per node; multipart parts.
//   S3Express     as S3, but the request rates are per directory bucket (not per prefix).
//   HostMemory    in-memory checkpoints: GPU-to-host copy rate per GPU; capacity = host DRAM.
// Sources: docs/models/storage.md (FSx performance guide, S3 performance guidelines).
#pragma once

#include <string>

#include "core/units.hpp"
#include "hardware/specs.hpp"

namespace fmsim::storage {

/// The performance of one tier as seen by one job. A zero rate or capacity means "no limit".
struct TierPerformance {
  std::string name;
  hardware::StorageKind kind = hardware::StorageKind::S3;
  core::BytesPerSecond aggregate_write{};  ///< whole tier, all clients; 0 = unbounded
  core::BytesPerSecond aggregate_read{};
  core::BytesPerSecond per_node_write{};  ///< one client node; 0 = unbounded
  core::BytesPerSecond per_node_read{};
  double write_requests_per_s = 0.0;  ///< aggregate request-rate cap; 0 = none
  double read_requests_per_s = 0.0;
  core::Bytes request_size{};  ///< bytes per request (multipart part / ranged GET)
  core::Seconds latency{};     ///< first-byte latency of one request
  core::Bytes capacity{};      ///< 0 = unbounded
  bool node_local = false;     ///< data lives on the node and is lost with it
  bool remote = true;          ///< traffic crosses the node's network interfaces
};

/// Knobs of the client side that the catalog does not fix.
struct TierOptions {
  int connections_per_node = 64;               ///< concurrent S3 requests per node
  core::Bytes part_size = core::mib(64);       ///< S3 multipart part / ranged GET size
  core::BytesPerSecond host_copy{};            ///< GPU<->host copy per GPU (host-memory tier)
  core::BytesPerSecond nvme_write_per_node{};  ///< used when the system spec leaves NVMe rates at 0
  core::BytesPerSecond nvme_read_per_node{};
};

/// The tier `spec`, attached to `cluster` as `attachment`.
TierPerformance tier_performance(const hardware::StorageSpec& spec, const hardware::StorageAttachment& attachment,
                                 const hardware::ClusterSpec& cluster, const TierOptions& options = {});

/// Host DRAM of every node used as a checkpoint tier (in-memory checkpoints).
TierPerformance host_memory_tier(const hardware::ClusterSpec& cluster, const TierOptions& options);

/// A tier described by plain numbers (no catalog): aggregate and per-node bandwidth.
TierPerformance custom_tier(std::string name, core::BytesPerSecond aggregate, core::BytesPerSecond per_node,
                            core::Bytes capacity = {});

/// "instance-nvme", "fsx-lustre", "s3", "s3-express", "host-memory".
std::string to_string(hardware::StorageKind kind);

}  // namespace fmsim::storage
