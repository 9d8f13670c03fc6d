// The catalog's lists as tables and JSON arrays, and a cluster spec's shape (`fmsim catalog gpus|
// systems|fabrics|storage|cluster`).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "config/catalog_loader.hpp"
#include "documents/catalog.hpp"
#include "documents/text_table.hpp"

namespace fmsim::documents {
namespace {

using hardware::Catalog;
using hardware::ProvenanceMap;
using nlohmann::json;

constexpr std::string_view kUnverifiedMark = "*";

/// A number for a table cell, "-" when zero (unknown or unsupported), starred when unverified.
std::string catalog_cell(double v, const ProvenanceMap& p, const std::string& key, std::string_view format = "{:g}") {
  if (v == 0.0) return "-";
  std::string s = fmt::format(fmt::runtime(format), v);
  const auto it = p.find(key);
  if (it != p.end() && !it->second.verified) s += kUnverifiedMark;
  return s;
}

void print_footer(std::ostream& out) {
  out << "\n"
      << kUnverifiedMark
      << " unverified in docs/reference/hardware.md; '-' not given. "
         "'fmsim catalog show NAME' lists every value with its source.\n";
}

void print_gpus(std::ostream& out, const Catalog& catalog) {
  TextTable t({{"NAME"},
               {"ARCH"},
               {"BF16 TF", true},
               {"FP8 TF", true},
               {"FP4 TF", true},
               {"TF32 TF", true},
               {"HBM GB", true},
               {"USABLE GiB", true},
               {"HBM TB/s", true},
               {"NVLINK", true},
               {"NVL GB/s", true},
               {"TDP W", true},
               {"SMS", true}});
  for (const auto& g : catalog.gpus()) {
    const auto& p = g.provenance;
    t.add({g.name, std::string(config::to_string(g.architecture)), catalog_cell(g.bf16.value() / 1e12, p, "bf16"),
           catalog_cell(g.fp8.value() / 1e12, p, "fp8"), catalog_cell(g.fp4.value() / 1e12, p, "fp4"),
           catalog_cell(g.tf32.value() / 1e12, p, "tf32"),
           catalog_cell(g.hbm_capacity.value() / 1e9, p, "hbm_capacity"),
           catalog_cell(g.hbm_usable.value() / core::gib(1).value(), p, "hbm_usable", "{:.1f}"),
           catalog_cell(g.hbm_bandwidth.value() / 1e12, p, "hbm_bandwidth"),
           catalog_cell(g.nvlink_generation, p, "nvlink_generation"),
           catalog_cell(g.nvlink_bandwidth.value() / 1e9, p, "nvlink_bandwidth"), catalog_cell(g.tdp.value(), p, "tdp"),
           catalog_cell(g.sm_count, p, "sm_count")});
  }
  t.print(out);
  out << "\nDense tensor-core peaks (TF = 10^12 FLOP/s); HBM nominal in GB, usable (driver-visible) in GiB;\n"
         "NVLink bandwidth per GPU, bidirectional.";
  print_footer(out);
}

void print_systems(std::ostream& out, const Catalog& catalog) {
  TextTable t({{"NAME"},
               {"KIND"},
               {"GPU"},
               {"GPUS", true},
               {"NODES", true},
               {"NVL DOMAIN", true},
               {"NVLS"},
               {"FABRIC"},
               {"NICS/NODE"},
               {"GBPS/NODE", true},
               {"VCPUS", true},
               {"HOST GiB", true},
               {"NVME TB", true},
               {"USD/H", true},
               {"PRICE"}});
  for (const auto& s : catalog.systems()) {
    const auto& p = s.provenance;
    const std::string nics =
        s.nics_per_node > 0 ? fmt::format("{}x{:g}G", s.nics_per_node, s.nic_bandwidth.value() * 8 / 1e9) : "-";
    const auto nics_p = p.find("nics_per_node");
    const bool nics_unverified = nics_p != p.end() && !nics_p->second.verified;
    const double nvme_tb = s.local_nvme_devices * s.local_nvme_device_size.value() / 1e12;
    t.add(
        {s.name, std::string(config::to_string(s.kind)), s.gpu, std::to_string(s.gpus()),
         catalog_cell(s.nodes, p, "nodes"), catalog_cell(s.nvlink_domain_gpus, p, "nvlink_domain_gpus"),
         s.nvls ? "yes" : "no", s.fabric.empty() ? "-" : s.fabric,
         nics + (nics_unverified ? std::string(kUnverifiedMark) : ""),
         catalog_cell(s.network_bandwidth.value() * 8 / 1e9, p, "network_bandwidth"), catalog_cell(s.vcpus, p, "vcpus"),
         catalog_cell(s.host_memory.value() / core::gib(1).value(), p, "host_memory", "{:.0f}"),
         catalog_cell(nvme_tb, p, "local_nvme_device_size", "{:.1f}"),
         catalog_cell(s.price_per_hour_usd, p, "price_per_hour", "{:.2f}"), s.price_kind ? s.price_kind_name() : "-"});
  }
  t.print(out);
  out << "\nPer node: NICs, network Gbps (one direction), vCPUs, host memory, NVMe. GPUS is one unit of the\n"
         "system (an UltraServer or rack has several nodes); price is per unit, us-east-1.";
  print_footer(out);
}

void print_fabrics(std::ostream& out, const Catalog& catalog) {
  TextTable t({{"NAME"},
               {"KIND"},
               {"GEN", true},
               {"LATENCY us", true},
               {"MSG LATENCY us", true},
               {"EFFICIENCY", true},
               {"GPUDIRECT"},
               {"DESCRIPTION"}});
  for (const auto& f : catalog.fabrics()) {
    const auto& p = f.provenance;
    t.add({f.name, std::string(config::to_string(f.kind)), catalog_cell(f.generation, p, "generation"),
           catalog_cell(f.latency.value() * 1e6, p, "latency"),
           catalog_cell(f.message_latency.value() * 1e6, p, "message_latency"),
           catalog_cell(f.efficiency, p, "efficiency"), f.gpudirect_rdma ? "yes" : "no", f.display_name});
  }
  t.print(out);
  out << "\nLatency: per network message as NCCL's model charges it; message latency: small (LL) messages;\n"
         "efficiency: achievable fraction of NIC line rate (see data/hardware/fabrics.yaml).";
  print_footer(out);
}

void print_storage(std::ostream& out, const Catalog& catalog) {
  TextTable t({{"NAME"},
               {"KIND"},
               {"MB/s/TiB", true},
               {"NET BASE", true},
               {"NET BURST", true},
               {"MIN GiB", true},
               {"EFA"},
               {"GET/s", true},
               {"PUT/s", true},
               {"CONN MB/s", true},
               {"LATENCY ms", true}});
  for (const auto& s : catalog.storage()) {
    const auto& p = s.provenance;
    t.add({s.name, std::string(config::to_string(s.kind)),
           catalog_cell(s.throughput_per_tib.value() / 1e6, p, "throughput_per_tib"),
           catalog_cell(s.network_baseline_per_tib.value() / 1e6, p, "network_baseline_per_tib"),
           catalog_cell(s.network_burst_per_tib.value() / 1e6, p, "network_burst_per_tib"),
           catalog_cell(s.min_capacity.value() / core::gib(1).value(), p, "min_capacity", "{:.0f}"),
           s.efa_capable ? "yes" : "no", catalog_cell(s.get_requests_per_s, p, "get_requests_per_s"),
           catalog_cell(s.put_requests_per_s, p, "put_requests_per_s"),
           catalog_cell(s.per_connection_throughput.value() / 1e6, p, "per_connection_throughput"),
           catalog_cell(s.first_byte_latency.value() * 1e3, p, "first_byte_latency")});
  }
  t.print(out);
  out << "\nFSx for Lustre rates are per TiB provisioned; S3 request rates per partitioned prefix, S3 Express\n"
         "per directory bucket; instance NVMe rates are per system (fmsim catalog show SYSTEM).";
  print_footer(out);
}

template <typename Spec>
json entries_json(const std::vector<Spec>& entries) {
  json a = json::array();
  for (const auto& e : entries) a.push_back(catalog_entry_json(e));
  return a;
}

}  // namespace

json catalog_list_json(const Catalog& catalog, CatalogList list) {
  switch (list) {
    case CatalogList::Gpus: return entries_json(catalog.gpus());
    case CatalogList::Systems: return entries_json(catalog.systems());
    case CatalogList::Fabrics: return entries_json(catalog.fabrics());
    case CatalogList::Storage: return entries_json(catalog.storage());
  }
  FMSIM_CHECK(false, "unknown catalog list");
  return {};
}

void print_catalog_list(std::ostream& out, const Catalog& catalog, CatalogList list) {
  switch (list) {
    case CatalogList::Gpus: return print_gpus(out, catalog);
    case CatalogList::Systems: return print_systems(out, catalog);
    case CatalogList::Fabrics: return print_fabrics(out, catalog);
    case CatalogList::Storage: return print_storage(out, catalog);
  }
}

json catalog_cluster_json(const hardware::ClusterSpec& c) {
  json storage = json::array();
  for (const auto& a : c.storage) {
    storage.push_back({{"storage", a.storage},
                       {"mount", a.mount},
                       {"capacity_bytes", a.capacity.value()},
                       {"throughput_per_tib_bytes_per_s", a.throughput_per_tib.value()},
                       {"prefixes", a.prefixes}});
  }
  return {{"name", c.name},
          {"system", c.system.name},
          {"gpu", c.gpu.name},
          {"fabric", c.fabric.name},
          {"count", c.count},
          {"nodes", c.nodes()},
          {"gpus", c.gpus()},
          {"gpus_per_node", c.gpus_per_node()},
          {"nvlink_domain_gpus", c.nvlink_domain_gpus()},
          {"network_bandwidth_per_node_bytes_per_s", c.system.network_bandwidth.value()},
          {"oversubscription", c.oversubscription},
          {"nodes_per_leaf", c.nodes_per_leaf},
          {"price_per_hour_usd", c.price_per_hour_usd()},
          {"price_kind", c.system.price_kind_name()},
          {"storage", storage}};
}

void print_catalog_cluster(std::ostream& out, const hardware::ClusterSpec& c) {
  out << fmt::format("cluster {}: {} x {} = {} nodes, {} x {} GPUs\n", c.name, c.count, c.system.name, c.nodes(),
                     c.gpus(), c.gpu.name);
  out << fmt::format("  NVLink domain: {} GPUs{}\n", c.nvlink_domain_gpus(), c.system.nvls ? " (NVLS)" : "");
  if (!c.fabric.name.empty()) {
    out << fmt::format("  scale-out:     {} x {} per node = {} per node ({})\n", c.system.nics_per_node,
                       format_gbps(c.system.nic_bandwidth), format_gbps(c.system.network_bandwidth), c.fabric.name);
  }
  out << fmt::format("  fabric shape:  {}\n", c.oversubscription > 1.0
                                                  ? fmt::format("{:g}:1 oversubscribed above {} nodes per leaf",
                                                                c.oversubscription, c.nodes_per_leaf)
                                                  : std::string("non-blocking"));
  for (const auto& a : c.storage) {
    out << fmt::format("  storage:       {}{}{}\n", a.storage,
                       a.capacity.value() > 0 ? ", " + core::format_bytes(a.capacity) : "",
                       a.mount.empty() ? "" : " at " + a.mount);
  }
  if (c.system.price_per_hour_usd > 0) {
    out << fmt::format("  price:         {:.2f} USD/h ({}, {})\n", c.price_per_hour_usd(), c.system.price_kind_name(),
                       c.system.price_date);
  }
}

}  // namespace fmsim::documents
