// Storage tier performance from catalog specs (see storage_tier.hpp for the per-kind rules).
#include "storage/storage_tier.hpp"

#include <algorithm>

namespace fmsim::storage {
namespace {

core::BytesPerSecond min_nonzero(core::BytesPerSecond a, core::BytesPerSecond b) {
  if (a.value() <= 0.0) return b;
  if (b.value() <= 0.0) return a;
  return std::min(a, b);
}

}  // namespace

std::string to_string(hardware::StorageKind kind) {
  switch (kind) {
    case hardware::StorageKind::InstanceNvme: return "instance-nvme";
    case hardware::StorageKind::FsxLustre: return "fsx-lustre";
    case hardware::StorageKind::S3: return "s3";
    case hardware::StorageKind::S3Express: return "s3-express";
    case hardware::StorageKind::HostMemory: return "host-memory";
  }
  return "?";
}

TierPerformance tier_performance(const hardware::StorageSpec& spec, const hardware::StorageAttachment& attachment,
                                 const hardware::ClusterSpec& cluster, const TierOptions& options) {
  TierPerformance t;
  t.name = spec.name;
  t.kind = spec.kind;
  const double nodes = cluster.nodes();
  const core::BytesPerSecond nic = cluster.system.network_bandwidth;
  switch (spec.kind) {
    case hardware::StorageKind::InstanceNvme: {
      const auto write =
          cluster.system.local_nvme_write.value() > 0 ? cluster.system.local_nvme_write : options.nvme_write_per_node;
      const auto read =
          cluster.system.local_nvme_read.value() > 0 ? cluster.system.local_nvme_read : options.nvme_read_per_node;
      t.per_node_write = write;
      t.per_node_read = read;
      t.aggregate_write = write * nodes;
      t.aggregate_read = read * nodes;
      t.capacity = cluster.system.local_nvme_device_size * (cluster.system.local_nvme_devices * nodes);
      t.node_local = true;
      t.remote = false;
      break;
    }
    case hardware::StorageKind::FsxLustre: {
      const core::Bytes capacity = attachment.capacity.value() > 0 ? attachment.capacity : spec.min_capacity;
      const core::BytesPerSecond per_tib =
          attachment.throughput_per_tib.value() > 0 ? attachment.throughput_per_tib : spec.throughput_per_tib;
      const double tib = capacity / core::tib(1);
      // Disk throughput bounds sustained writes; reads of hot data may burst to the network
      // rate, but a checkpoint restore or a first-epoch read is not cached, so disk bounds both.
      t.aggregate_write = per_tib * tib;
      t.aggregate_read = per_tib * tib;
      t.per_node_write = min_nonzero(spec.max_client_throughput, nic);
      t.per_node_read = t.per_node_write;
      t.capacity = capacity;
      break;
    }
    case hardware::StorageKind::S3:
    case hardware::StorageKind::S3Express: {
      // S3 scales request rates per partitioned prefix; S3 Express quotes them per directory bucket.
      const double scale = spec.kind == hardware::StorageKind::S3 ? std::max(1, attachment.prefixes) : 1.0;
      t.write_requests_per_s = spec.put_requests_per_s * scale;
      t.read_requests_per_s = spec.get_requests_per_s * scale;
      t.request_size = options.part_size;
      const core::BytesPerSecond connections = spec.per_connection_throughput * options.connections_per_node;
      t.per_node_write = min_nonzero(connections, nic);
      t.per_node_read = t.per_node_write;
      t.latency = spec.first_byte_latency;
      break;
    }
    case hardware::StorageKind::HostMemory: return host_memory_tier(cluster, options);
  }
  return t;
}

TierPerformance host_memory_tier(const hardware::ClusterSpec& cluster, const TierOptions& options) {
  TierPerformance t;
  t.name = "host-memory";
  t.kind = hardware::StorageKind::HostMemory;
  t.per_node_write = options.host_copy * cluster.gpus_per_node();
  t.per_node_read = t.per_node_write;
  t.aggregate_write = t.per_node_write * cluster.nodes();
  t.aggregate_read = t.aggregate_write;
  t.capacity = cluster.system.host_memory * cluster.nodes();
  t.node_local = true;
  t.remote = false;
  return t;
}

TierPerformance custom_tier(std::string name, core::BytesPerSecond aggregate, core::BytesPerSecond per_node,
                            core::Bytes capacity) {
  TierPerformance t;
  t.name = std::move(name);
  t.kind = hardware::StorageKind::FsxLustre;
  t.aggregate_write = aggregate;
  t.aggregate_read = aggregate;
  t.per_node_write = per_node;
  t.per_node_read = per_node;
  t.capacity = capacity;
  return t;
}

}  // namespace fmsim::storage
