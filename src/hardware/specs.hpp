// Hardware specifications as plain value types: GPUs, systems (instances, UltraServers,
// reference machines), scale-out fabrics, storage services, and a cluster built from them.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::hardware {

/// Where one value came from: a source key of docs/reference/hardware.md (e.g. "[EC2-AC]"),
/// whether the reference marks it unverified, and whether it is derived from other values.
struct Provenance {
  std::string source;
  bool verified = true;
  bool derived = false;
  std::string note;
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

/// Field name (as in the YAML file) -> provenance of that field's value.
using ProvenanceMap = std::map<std::string, Provenance>;

enum class Architecture { Ampere, Hopper, Blackwell, BlackwellUltra };

/// The words of `architecture:` in gpus.yaml and the keys of data/calibration/training.yaml
/// ("blackwell-ultra" and "blackwell_ultra" are one word).
inline constexpr core::Word<Architecture> kArchitectureWordList[] = {
    {Architecture::Ampere, "ampere"},
    {Architecture::Hopper, "hopper"},
    {Architecture::Blackwell, "blackwell"},
    {Architecture::BlackwellUltra, "blackwell-ultra"},
};
inline constexpr core::Vocabulary<Architecture> kArchitectureWords{"GPU architecture", kArchitectureWordList};

/// One GPU model. Throughputs are dense tensor-core peaks; zero means not supported.
struct GpuSpec {
  std::string name;                  ///< catalog key, e.g. "h100-sxm"
  std::string display_name;          ///< "NVIDIA H100 SXM 80GB"
  std::vector<std::string> aliases;  ///< other spellings accepted on input ("H100", "H100-SXM-80GB")
  Architecture architecture = Architecture::Hopper;
  int sm_version = 90;  ///< CUDA compute capability x10 (80, 90, 100, 103)
  int sm_count = 0;
  core::Bytes l2_cache{};
  core::FlopsPerSecond fp64{};
  core::FlopsPerSecond tf32{};
  core::FlopsPerSecond bf16{};
  core::FlopsPerSecond fp16{};
  core::FlopsPerSecond fp8{};
  core::FlopsPerSecond fp4{};
  core::Bytes hbm_capacity{};  ///< nominal, as marketed
  core::Bytes hbm_usable{};    ///< driver-visible; use this for out-of-memory verdicts
  core::BytesPerSecond hbm_bandwidth{};
  int nvlink_generation = 0;
  int nvlink_links = 0;
  core::BytesPerSecond nvlink_bandwidth{};  ///< per GPU, bidirectional, as NVIDIA quotes it
  /// GPU to host memory, per GPU and per direction: PCIe on x86 hosts, NVLink-C2C to Grace on
  /// GB200/GB300 (what offloaded optimizer states, activations or parameters move over).
  core::BytesPerSecond host_link_bandwidth{};
  core::Watts tdp{};
  core::Watts power_limit{};  ///< administrator power cap; zero = run at TDP
  ProvenanceMap provenance;

  /// Sustained compute clock under the power cap relative to TDP operation: dynamic power scales
  /// as f*V^2 with V roughly proportional to f, so f ~ P^(1/3). 1 when uncapped.
  [[nodiscard]] double power_clock_factor() const {
    if (power_limit.value() <= 0 || tdp.value() <= 0 || power_limit >= tdp) return 1.0;
    return std::cbrt(power_limit.value() / tdp.value());
  }

  /// Dense peak in precision p (zero if unsupported).
  [[nodiscard]] core::FlopsPerSecond peak(core::Precision p) const {
    switch (p) {
      case core::Precision::FP64: return fp64;
      case core::Precision::TF32: return tf32;
      case core::Precision::BF16: return bf16;
      case core::Precision::FP16: return fp16;
      case core::Precision::FP8: return fp8;
      case core::Precision::FP4: return fp4;
    }
    return bf16;
  }
  /// NVLink bandwidth per direction (half the bidirectional figure).
  [[nodiscard]] core::BytesPerSecond nvlink_per_direction() const { return nvlink_bandwidth / 2.0; }
};

enum class FabricKind { None, Efa, InfiniBand };

/// The words of a fabric's `kind:` in fabrics.yaml (None is no fabric, never written).
inline constexpr core::Word<FabricKind> kFabricKindWordList[] = {
    {FabricKind::Efa, "efa"},
    {FabricKind::InfiniBand, "infiniband"},
};
inline constexpr core::Vocabulary<FabricKind> kFabricKindWords{"fabric kind", kFabricKindWordList};

/// A scale-out network technology (EFA v1..v4, InfiniBand NDR), with the parameters the
/// collective model needs. Differences between generations are data, not code.
struct FabricSpec {
  std::string name;  ///< "efa-v2", "ib-ndr"
  std::string display_name;
  std::vector<std::string> aliases;
  FabricKind kind = FabricKind::None;
  int generation = 0;
  core::Seconds latency{};  ///< per-message network latency as NCCL's net model uses it
  /// Latency of one small (LL/LL128) message hop, when it differs from `latency` (the figure
  /// the net plugin reports to NCCL, which NCCL charges twice per Simple hop: send and flush).
  /// Zero means "same as latency".
  core::Seconds message_latency{};
  double efficiency = 1.0;  ///< achievable fraction of NIC line rate for large transfers
  bool gpudirect_rdma = true;
  ProvenanceMap provenance;
};

enum class SystemKind { Instance, UltraServer, Reference };
/// How a system's price_per_hour is bought (the AWS purchase options).
enum class PriceKind { OnDemand, CapacityBlock, Reserved, Spot };
inline constexpr core::Word<PriceKind> kPriceKindWordList[] = {
    {PriceKind::OnDemand, "on-demand"},
    {PriceKind::CapacityBlock, "capacity-block"},
    {PriceKind::Reserved, "reserved"},
    {PriceKind::Spot, "spot"},
};
inline constexpr core::Vocabulary<PriceKind> kPriceKindWords{"price kind", kPriceKindWordList};

enum class CpuVendor { Intel, Amd, Arm };

/// The words of a system's `kind:` and `cpu_vendor:` in systems.yaml.
inline constexpr core::Word<SystemKind> kSystemKindWordList[] = {
    {SystemKind::Instance, "instance"},
    {SystemKind::UltraServer, "ultraserver"},
    {SystemKind::Reference, "reference"},
};
inline constexpr core::Vocabulary<SystemKind> kSystemKindWords{"system kind", kSystemKindWordList};
inline constexpr core::Word<CpuVendor> kCpuVendorWordList[] = {
    {CpuVendor::Intel, "intel"},
    {CpuVendor::Amd, "amd"},
    {CpuVendor::Arm, "arm"},
};
inline constexpr core::Vocabulary<CpuVendor> kCpuVendorWords{"CPU vendor", kCpuVendorWordList};

/// A machine one rents or buys: an EC2 instance, an UltraServer (several instances in one
/// NVLink domain), or a reference system (DGX, NVL72 rack) that published numbers were taken on.
/// A "node" is one host (one OS image): an instance, or one compute tray of a rack.
struct SystemSpec {
  std::string name;  ///< "p5.48xlarge", "u-p6e-gb200x72", "dgx-h100"
  std::string display_name;
  std::vector<std::string> aliases;
  SystemKind kind = SystemKind::Instance;
  std::string gpu;  ///< GPU catalog key
  int gpus_per_node = 8;
  int nodes = 1;               ///< nodes in one unit of this system (18 for u-p6e-gb200x72)
  int nvlink_domain_gpus = 8;  ///< GPUs in one NVLink/NVSwitch domain (1 = none)
  bool nvswitch = true;
  bool nvls = false;                        ///< NVLink SHARP (multicast/in-switch reduction)
  core::BytesPerSecond nvlink_aggregate{};  ///< whole domain, bidirectional
  std::string fabric;                       ///< fabric catalog key; empty when there is no scale-out NIC
  int nics_per_node = 0;
  core::BytesPerSecond nic_bandwidth{};      ///< one NIC, one direction
  core::BytesPerSecond network_bandwidth{};  ///< one node, all NICs, one direction
  int vcpus = 0;
  std::string cpu;
  CpuVendor cpu_vendor = CpuVendor::Intel;
  core::Bytes host_memory{};
  int local_nvme_devices = 0;
  core::Bytes local_nvme_device_size{};
  core::BytesPerSecond local_nvme_read{};   ///< one node, all devices
  core::BytesPerSecond local_nvme_write{};  ///< one node, all devices
  double price_per_hour_usd = 0.0;          ///< per unit of this system (per UltraServer for u-*); 0 = unknown
  std::optional<PriceKind> price_kind;      ///< with the price; none when the price is unknown
  std::string price_date;                   ///< ISO date of the price snapshot
  ProvenanceMap provenance;

  [[nodiscard]] int gpus() const { return gpus_per_node * nodes; }
  /// kPriceKindWords' name of price_kind; "" when unknown.
  [[nodiscard]] std::string price_kind_name() const {
    return price_kind ? std::string(kPriceKindWords.name(*price_kind)) : std::string();
  }
};

enum class StorageKind { InstanceNvme, FsxLustre, S3, S3Express, HostMemory };

/// The words of a storage service's `kind:` in storage.yaml.
inline constexpr core::Word<StorageKind> kStorageKindWordList[] = {
    {StorageKind::InstanceNvme, "instance-nvme"}, {StorageKind::FsxLustre, "fsx-lustre"},   {StorageKind::S3, "s3"},
    {StorageKind::S3Express, "s3-express"},       {StorageKind::HostMemory, "host-memory"},
};
inline constexpr core::Vocabulary<StorageKind> kStorageKindWords{"storage kind", kStorageKindWordList};

/// A storage service or tier. Fields not meaningful for a kind stay zero.
struct StorageSpec {
  std::string name;  ///< "fsx-persistent2-1000", "s3", "s3-express", "instance-nvme"
  std::string display_name;
  std::vector<std::string> aliases;
  StorageKind kind = StorageKind::S3;
  // FSx for Lustre: performance scales with provisioned capacity.
  core::BytesPerSecond throughput_per_tib{};  ///< disk throughput per TiB provisioned
  core::BytesPerSecond network_baseline_per_tib{};
  core::BytesPerSecond network_burst_per_tib{};
  core::Bytes min_capacity{};
  core::Bytes capacity_increment{};
  bool efa_capable = false;
  core::BytesPerSecond max_client_throughput{};  ///< one client instance
  double metadata_iops = 0.0;
  // Object storage: request rates per partitioned prefix, throughput per connection.
  double get_requests_per_s = 0.0;
  double put_requests_per_s = 0.0;
  core::BytesPerSecond per_connection_throughput{};
  core::Seconds first_byte_latency{};
  core::Bytes max_part_size{};
  int max_parts = 0;
  ProvenanceMap provenance;
};

/// Where a storage tier is attached to a cluster, and how big it is.
struct StorageAttachment {
  std::string storage;                        ///< storage catalog key
  std::string mount;                          ///< e.g. "/fsx", optional
  core::Bytes capacity{};                     ///< provisioned capacity (FSx), 0 = unbounded (S3)
  core::BytesPerSecond throughput_per_tib{};  ///< override of the deployment's per-TiB rate, 0 = default
  int prefixes = 1;                           ///< S3 prefixes the data is spread over
};

/// A cluster: `count` units of one system, its GPU and fabric resolved, plus storage and the
/// shape of the scale-out fabric above the nodes.
struct ClusterSpec {
  std::string name;
  SystemSpec system;
  GpuSpec gpu;
  FabricSpec fabric;
  int count = 1;                  ///< units of `system` (instances, UltraServers or racks)
  double oversubscription = 1.0;  ///< above the leaf switch; 1 = non-blocking
  int nodes_per_leaf = 0;         ///< nodes under one leaf switch; 0 = all (non-blocking)
  std::vector<StorageAttachment> storage;

  [[nodiscard]] int nodes() const { return count * system.nodes; }
  [[nodiscard]] int gpus() const { return nodes() * system.gpus_per_node; }
  [[nodiscard]] int gpus_per_node() const { return system.gpus_per_node; }
  /// GPUs in one NVLink domain, never more than the cluster holds.
  [[nodiscard]] int nvlink_domain_gpus() const {
    return system.nvlink_domain_gpus < gpus() ? system.nvlink_domain_gpus : gpus();
  }
  [[nodiscard]] double price_per_hour_usd() const { return system.price_per_hour_usd * count; }
};

}  // namespace fmsim::hardware
