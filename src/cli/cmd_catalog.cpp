// fmsim catalog: tables of GPUs, systems, fabrics and storage; one entry with every value and its
// source; a cluster spec resolved against the catalog.
#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::cli {
namespace {

using hardware::Catalog;
using hardware::FabricSpec;
using hardware::GpuSpec;
using hardware::ProvenanceMap;
using hardware::StorageSpec;
using hardware::SystemSpec;
using nlohmann::json;

constexpr std::string_view kUnverifiedMark = "*";

// ---------------------------------------------------------------------------------------------
// Formatting

/// Decimal sizes as vendors print them: "80 GB", "126.5 MB", "3.84 TB".
std::string format_decimal_bytes(core::Bytes b) {
  const double v = b.value();
  if (v >= 1e12) return fmt::format("{:.4g} TB", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.4g} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.4g} MB", v / 1e6);
  return fmt::format("{:.4g} B", v);
}

std::string format_gbps(core::BytesPerSecond r) { return fmt::format("{:g} Gbps", r.value() * 8.0 / 1e9); }

/// Up to 5 significant digits with the largest prefix that keeps the number at least 1, so a
/// value reads as the catalog wrote it: "989.4 TFLOP/s", "3.35 TB/s", "75 us".
std::string format_prefixed(double v, std::initializer_list<std::pair<double, std::string_view>> prefixes) {
  for (const auto& [factor, unit] : prefixes) {
    if (std::fabs(v) >= factor) return fmt::format("{:.5g} {}", v / factor, unit);
  }
  const auto& last = *(prefixes.end() - 1);
  return fmt::format("{:.5g} {}", v / last.first, last.second);
}
std::string format_flops(core::FlopsPerSecond r) {
  return format_prefixed(r.value(), {{1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}});
}
std::string format_rate(core::BytesPerSecond r) {
  return format_prefixed(r.value(), {{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1.0, "B/s"}});
}
std::string format_time(core::Seconds t) {
  return format_prefixed(t.value(), {{1.0, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}});
}

/// One value of a spec, for `show` and --json: its SI number (or text/bool) and a rendering.
struct Field {
  std::string key;
  json value;        // SI number, bool or string
  std::string unit;  // SI unit of `value` ("B", "B/s", "FLOP/s", "s", "W", "USD/h", "1/s"); empty if none
  std::string text;  // human rendering
};

Field quantity(std::string key, double si, std::string unit, std::string text) {
  return Field{std::move(key), si, std::move(unit), std::move(text)};
}
Field bytes_field(std::string key, core::Bytes b, bool decimal) {
  return quantity(std::move(key), b.value(), "B", decimal ? format_decimal_bytes(b) : core::format_bytes(b));
}
Field bandwidth_field(std::string key, core::BytesPerSecond r) {
  return quantity(std::move(key), r.value(), "B/s", format_rate(r));
}
Field nic_field(std::string key, core::BytesPerSecond r) {
  return quantity(std::move(key), r.value(), "B/s", format_gbps(r));
}
Field flops_field(std::string key, core::FlopsPerSecond r) {
  return quantity(std::move(key), r.value(), "FLOP/s", r.value() > 0 ? format_flops(r) : "0 (unsupported)");
}
Field duration_field(std::string key, core::Seconds t) {
  return quantity(std::move(key), t.value(), "s", format_time(t));
}
Field count_field(std::string key, double n) { return Field{std::move(key), n, "", fmt::format("{:g}", n)}; }
Field bool_field(std::string key, bool b) { return Field{std::move(key), b, "", b ? "yes" : "no"}; }
Field text_field(std::string key, const std::string& s) { return Field{std::move(key), s, "", s}; }

std::vector<Field> gpu_fields(const GpuSpec& g) {
  return {text_field("architecture", std::string(config::to_string(g.architecture))),
          count_field("sm_version", g.sm_version),
          count_field("sm_count", g.sm_count),
          bytes_field("l2_cache", g.l2_cache, true),
          flops_field("fp64", g.fp64),
          flops_field("tf32", g.tf32),
          flops_field("bf16", g.bf16),
          flops_field("fp16", g.fp16),
          flops_field("fp8", g.fp8),
          flops_field("fp4", g.fp4),
          bytes_field("hbm_capacity", g.hbm_capacity, true),
          bytes_field("hbm_usable", g.hbm_usable, false),
          bandwidth_field("hbm_bandwidth", g.hbm_bandwidth),
          count_field("nvlink_generation", g.nvlink_generation),
          count_field("nvlink_links", g.nvlink_links),
          bandwidth_field("nvlink_bandwidth", g.nvlink_bandwidth),
          quantity("tdp", g.tdp.value(), "W", fmt::format("{:g} W", g.tdp.value()))};
}

std::vector<Field> system_fields(const SystemSpec& s) {
  std::vector<Field> f{
      text_field("kind", std::string(config::to_string(s.kind))),
      text_field("gpu", s.gpu),
      count_field("gpus_per_node", s.gpus_per_node),
      count_field("nodes", s.nodes),
      count_field("nvlink_domain_gpus", s.nvlink_domain_gpus),
      bool_field("nvswitch", s.nvswitch),
      bool_field("nvls", s.nvls),
      bandwidth_field("nvlink_aggregate", s.nvlink_aggregate),
      text_field("fabric", s.fabric.empty() ? std::string("none") : s.fabric),
      count_field("nics_per_node", s.nics_per_node),
      nic_field("nic_bandwidth", s.nic_bandwidth),
      nic_field("network_bandwidth", s.network_bandwidth),
      count_field("vcpus", s.vcpus),
      text_field("cpu", s.cpu),
      text_field("cpu_vendor", std::string(config::to_string(s.cpu_vendor))),
      bytes_field("host_memory", s.host_memory, false),
      count_field("local_nvme_devices", s.local_nvme_devices),
      bytes_field("local_nvme_device_size", s.local_nvme_device_size, true),
      bandwidth_field("local_nvme_read", s.local_nvme_read),
      bandwidth_field("local_nvme_write", s.local_nvme_write),
      quantity("price_per_hour", s.price_per_hour_usd, "USD/h", fmt::format("{:g} USD/h", s.price_per_hour_usd)),
      text_field("price_kind", s.price_kind_name()),
      text_field("price_date", s.price_date),
  };
  return f;
}

std::vector<Field> fabric_fields(const FabricSpec& f) {
  return {text_field("kind", std::string(config::to_string(f.kind))),
          count_field("generation", f.generation),
          duration_field("latency", f.latency),
          duration_field("message_latency", f.message_latency),
          count_field("efficiency", f.efficiency),
          bool_field("gpudirect_rdma", f.gpudirect_rdma)};
}

Field per_tib_field(std::string key, core::BytesPerSecond r) {
  return quantity(std::move(key), r.value(), "B/s/TiB", fmt::format("{:g} MB/s/TiB", r.value() / 1e6));
}
Field rate_field(std::string key, double per_s) {
  return quantity(std::move(key), per_s, "1/s", fmt::format("{:g} /s", per_s));
}

std::vector<Field> storage_fields(const StorageSpec& s) {
  return {text_field("kind", std::string(config::to_string(s.kind))),
          per_tib_field("throughput_per_tib", s.throughput_per_tib),
          per_tib_field("network_baseline_per_tib", s.network_baseline_per_tib),
          per_tib_field("network_burst_per_tib", s.network_burst_per_tib),
          bytes_field("min_capacity", s.min_capacity, false),
          bytes_field("capacity_increment", s.capacity_increment, false),
          bool_field("efa_capable", s.efa_capable),
          nic_field("max_client_throughput", s.max_client_throughput),
          rate_field("metadata_iops", s.metadata_iops),
          rate_field("get_requests_per_s", s.get_requests_per_s),
          rate_field("put_requests_per_s", s.put_requests_per_s),
          bandwidth_field("per_connection_throughput", s.per_connection_throughput),
          duration_field("first_byte_latency", s.first_byte_latency),
          bytes_field("max_part_size", s.max_part_size, false),
          count_field("max_parts", s.max_parts)};
}

// Identity fields (kind, gpu, ...) have no provenance; a value field without provenance was not
// given in any catalog file and only holds its default.
bool is_identity(const std::string& key) {
  return key == "kind" || key == "gpu" || key == "fabric" || key == "architecture" || key == "cpu_vendor" ||
         key == "price_kind" || key == "price_date";
}

json entry_json(std::string_view type, const std::string& name, const std::string& display_name,
                const std::vector<std::string>& aliases, const std::vector<Field>& fields,
                const ProvenanceMap& provenance) {
  json values = json::object();
  json identity = json::object();
  for (const auto& f : fields) {
    const auto p = provenance.find(f.key);
    if (is_identity(f.key)) {
      identity[f.key] = f.value;
      continue;
    }
    json v{{"value", f.value}, {"text", f.text}};
    if (!f.unit.empty()) v["unit"] = f.unit;
    if (p != provenance.end()) {
      v["source"] = p->second.source;
      v["verified"] = p->second.verified;
      v["derived"] = p->second.derived;
      if (!p->second.note.empty()) v["note"] = p->second.note;
    } else {
      v["source"] = nullptr;  // not given: the default (zero = unknown or unsupported)
    }
    values[f.key] = v;
  }
  json out{{"type", type}, {"name", name}, {"display_name", display_name}, {"aliases", aliases}};
  out.update(identity);
  out["values"] = values;
  return out;
}

json catalog_entry_json(const GpuSpec& g) {
  return entry_json("gpu", g.name, g.display_name, g.aliases, gpu_fields(g), g.provenance);
}
json catalog_entry_json(const SystemSpec& s) {
  json j = entry_json("system", s.name, s.display_name, s.aliases, system_fields(s), s.provenance);
  j["gpus"] = s.gpus();
  return j;
}
json catalog_entry_json(const FabricSpec& f) {
  return entry_json("fabric", f.name, f.display_name, f.aliases, fabric_fields(f), f.provenance);
}
json catalog_entry_json(const StorageSpec& s) {
  return entry_json("storage", s.name, s.display_name, s.aliases, storage_fields(s), s.provenance);
}

// ---------------------------------------------------------------------------------------------
// Tables

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

void print_gpus(const Catalog& catalog) {
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
  t.print(std::cout);
  std::cout << "\nDense tensor-core peaks (TF = 10^12 FLOP/s); HBM nominal in GB, usable (driver-visible) in GiB;\n"
               "NVLink bandwidth per GPU, bidirectional.";
  print_footer(std::cout);
}

void print_systems(const Catalog& catalog) {
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
  t.print(std::cout);
  std::cout << "\nPer node: NICs, network Gbps (one direction), vCPUs, host memory, NVMe. GPUS is one unit of the\n"
               "system (an UltraServer or rack has several nodes); price is per unit, us-east-1.";
  print_footer(std::cout);
}

void print_fabrics(const Catalog& catalog) {
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
  t.print(std::cout);
  std::cout << "\nLatency: per network message as NCCL's model charges it; message latency: small (LL) messages;\n"
               "efficiency: achievable fraction of NIC line rate (see data/hardware/fabrics.yaml).";
  print_footer(std::cout);
}

void print_storage(const Catalog& catalog) {
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
  t.print(std::cout);
  std::cout << "\nFSx for Lustre rates are per TiB provisioned; S3 request rates per partitioned prefix, S3 Express\n"
               "per directory bucket; instance NVMe rates are per system (fmsim catalog show SYSTEM).";
  print_footer(std::cout);
}

// ---------------------------------------------------------------------------------------------
// show

void print_entry(std::string_view type, const std::string& name, const std::string& display_name,
                 const std::vector<std::string>& aliases, const std::vector<Field>& fields,
                 const ProvenanceMap& provenance) {
  std::cout << fmt::format("{} {}: {}\n", type, name, display_name);
  if (!aliases.empty()) std::cout << fmt::format("aliases: {}\n", core::join(aliases, ", "));
  std::cout << "\n";
  TextTable t({{"FIELD"}, {"VALUE"}, {"SOURCE"}, {"NOTE"}});
  bool any_unverified = false;
  for (const auto& f : fields) {
    const auto p = provenance.find(f.key);
    if (is_identity(f.key)) {
      if (!f.text.empty()) t.add({f.key, f.text, "", ""});
      continue;
    }
    if (p == provenance.end()) continue;  // not given anywhere: nothing to show or cite
    std::string source = p->second.source;
    std::vector<std::string> flags;
    if (!p->second.verified) flags.emplace_back("unverified");
    if (p->second.derived) flags.emplace_back("derived");
    if (!flags.empty()) source += " (" + core::join(flags, ", ") + ")";
    any_unverified = any_unverified || !p->second.verified;
    t.add({f.key, f.text, source, p->second.note});
  }
  t.print(std::cout);
  if (any_unverified) {
    std::cout << "\nunverified: not confirmed by docs/reference/hardware.md (or from outside it); "
                 "derived: computed from sourced values (see the note).\n";
  }
}

/// Every name and alias in the catalog, for "did you mean".
std::vector<std::string> all_names(const Catalog& catalog) {
  std::vector<std::string> out;
  for (const auto& v : {catalog.gpu_names(), catalog.system_names(), catalog.fabric_names(), catalog.storage_names()}) {
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

void show(const Catalog& catalog, const std::string& name, bool as_json) {
  if (const auto* g = catalog.find_gpu(name)) {
    if (as_json)
      std::cout << catalog_entry_json(*g).dump(2) << "\n";
    else
      print_entry("gpu", g->name, g->display_name, g->aliases, gpu_fields(*g), g->provenance);
    return;
  }
  if (const auto* s = catalog.find_system(name)) {
    if (as_json)
      std::cout << catalog_entry_json(*s).dump(2) << "\n";
    else
      print_entry("system", s->name, s->display_name, s->aliases, system_fields(*s), s->provenance);
    return;
  }
  if (const auto* f = catalog.find_fabric(name)) {
    if (as_json)
      std::cout << catalog_entry_json(*f).dump(2) << "\n";
    else
      print_entry("fabric", f->name, f->display_name, f->aliases, fabric_fields(*f), f->provenance);
    return;
  }
  if (const auto* s = catalog.find_storage(name)) {
    if (as_json)
      std::cout << catalog_entry_json(*s).dump(2) << "\n";
    else
      print_entry("storage", s->name, s->display_name, s->aliases, storage_fields(*s), s->provenance);
    return;
  }
  throw core::InputError::flag("NAME", core::unknown_name_message("catalog entry", name, all_names(catalog)));
}

// ---------------------------------------------------------------------------------------------
// cluster

json cluster_json(const hardware::ClusterSpec& c) {
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

void print_cluster(const hardware::ClusterSpec& c) {
  std::cout << fmt::format("cluster {}: {} x {} = {} nodes, {} x {} GPUs\n", c.name, c.count, c.system.name, c.nodes(),
                           c.gpus(), c.gpu.name);
  std::cout << fmt::format("  NVLink domain: {} GPUs{}\n", c.nvlink_domain_gpus(), c.system.nvls ? " (NVLS)" : "");
  if (!c.fabric.name.empty()) {
    std::cout << fmt::format("  scale-out:     {} x {} per node = {} per node ({})\n", c.system.nics_per_node,
                             format_gbps(c.system.nic_bandwidth), format_gbps(c.system.network_bandwidth),
                             c.fabric.name);
  }
  std::cout << fmt::format("  fabric shape:  {}\n", c.oversubscription > 1.0
                                                        ? fmt::format("{:g}:1 oversubscribed above {} nodes per leaf",
                                                                      c.oversubscription, c.nodes_per_leaf)
                                                        : std::string("non-blocking"));
  for (const auto& a : c.storage) {
    std::cout << fmt::format("  storage:       {}{}{}\n", a.storage,
                             a.capacity.value() > 0 ? ", " + core::format_bytes(a.capacity) : "",
                             a.mount.empty() ? "" : " at " + a.mount);
  }
  if (c.system.price_per_hour_usd > 0) {
    std::cout << fmt::format("  price:         {:.2f} USD/h ({}, {})\n", c.price_per_hour_usd(),
                             c.system.price_kind_name(), c.system.price_date);
  }
}

}  // namespace

void add_catalog_command(CLI::App& app, Context& ctx) {
  auto* catalog = app.add_subcommand(
      "catalog", "Show the hardware catalog: GPUs, systems (EC2 instances, UltraServers, DGX/NVL72), fabrics, storage");
  catalog->require_subcommand(1);
  catalog->footer(
      "Every value carries a unit and a source (a key of docs/reference/hardware.md); unverified values\n"
      "are marked '*'. Add or override entries with --catalog FILE (see docs/models/catalog.md).\n"
      "\n"
      "Examples:\n"
      "  fmsim catalog gpus\n"
      "  fmsim catalog systems --json\n"
      "  fmsim catalog show p5en.48xlarge\n"
      "  fmsim catalog show H100 --json\n"
      "  fmsim catalog cluster u-p6e-gb200x72:4\n"
      "  fmsim --catalog examples/custom_catalog.yaml catalog show h100-sxm-96gb-500w");

  struct ListCommand {
    const char* name;
    const char* help;
    void (*print)(const Catalog&);
    json (*to_json)(const Catalog&);
  };
  static const ListCommand kLists[] = {
      {"gpus", "GPUs: dense BF16/FP8/FP4/TF32 peaks, HBM nominal and usable, bandwidth, NVLink, TDP", &print_gpus,
       [](const Catalog& c) {
         json a = json::array();
         for (const auto& g : c.gpus()) a.push_back(catalog_entry_json(g));
         return a;
       }},
      {"systems", "Systems: GPUs, NVLink domain, NVLS, fabric and NICs, host, NVMe, price per hour", &print_systems,
       [](const Catalog& c) {
         json a = json::array();
         for (const auto& s : c.systems()) a.push_back(catalog_entry_json(s));
         return a;
       }},
      {"fabrics", "Scale-out fabrics (EFA v1-v4, InfiniBand): latency, efficiency, GPUDirect RDMA", &print_fabrics,
       [](const Catalog& c) {
         json a = json::array();
         for (const auto& f : c.fabrics()) a.push_back(catalog_entry_json(f));
         return a;
       }},
      {"storage", "Storage: instance NVMe, FSx for Lustre deployment types, S3, S3 Express One Zone", &print_storage,
       [](const Catalog& c) {
         json a = json::array();
         for (const auto& s : c.storage()) a.push_back(catalog_entry_json(s));
         return a;
       }},
  };
  for (const auto& list : kLists) {
    auto* sub = catalog->add_subcommand(list.name, list.help);
    sub->footer(fmt::format("Examples:\n  fmsim catalog {0}\n  fmsim catalog {0} --json", list.name));
    auto as_json = std::make_shared<bool>(false);
    sub->add_flag("--json", *as_json, "Print a JSON array; every value in SI units with its unit and source");
    sub->callback([&ctx, &list, as_json] {
      if (*as_json) {
        std::cout << list.to_json(ctx.catalog()).dump(2) << "\n";
      } else {
        list.print(ctx.catalog());
      }
    });
  }

  auto* show_cmd = catalog->add_subcommand(
      "show", "Show one entry (GPU, system, fabric or storage) with every value and its source");
  auto name = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  show_cmd->add_option("NAME", *name, "Catalog name or alias, e.g. p5.48xlarge, H100, efa-v3, fsx-persistent2-1000")
      ->required();
  show_cmd->add_flag("--json", *show_json, "Print as JSON (SI values with unit, source, verified, derived, note)");
  show_cmd->footer(
      "Examples:\n"
      "  fmsim catalog show p5en.48xlarge\n"
      "  fmsim catalog show H100 --json\n"
      "  fmsim --catalog examples/custom_catalog.yaml catalog show h100-sxm-96gb-500w");
  show_cmd->callback([&ctx, name, show_json] { show(ctx.catalog(), *name, *show_json); });

  auto* cluster_cmd = catalog->add_subcommand(
      "cluster", "Resolve a cluster spec (SYSTEM[:COUNT] or a kind: Cluster YAML file) and print its shape");
  auto spec = std::make_shared<std::string>();
  auto cluster_as_json = std::make_shared<bool>(false);
  cluster_cmd->add_option("SPEC", *spec, "e.g. p5.48xlarge:64, u-p6e-gb200x72:4, dgx-h100:128, or cluster.yaml")
      ->required();
  cluster_cmd->add_flag("--json", *cluster_as_json, "Print as JSON (SI units)");
  cluster_cmd->footer(
      "Examples:\n"
      "  fmsim catalog cluster u-p6e-gb200x72:4\n"
      "  fmsim catalog cluster p5en.48xlarge:16 --json\n"
      "  fmsim catalog cluster dgx-h100:128");
  cluster_cmd->callback([&ctx, spec, cluster_as_json] {
    const auto cluster = config::parse_cluster(ctx.catalog(), *spec, "SPEC");
    if (*cluster_as_json) {
      std::cout << cluster_json(cluster).dump(2) << "\n";
    } else {
      print_cluster(cluster);
    }
  });
}

}  // namespace fmsim::cli
