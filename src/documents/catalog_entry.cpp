// One catalog entry as a document: every value with its SI number, unit, rendering and source
// (`fmsim catalog show`, and each entry of `fmsim catalog <list> --json`).
#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/catalog_loader.hpp"
#include "core/strings.hpp"
#include "documents/catalog.hpp"
#include "documents/text_table.hpp"

namespace fmsim::documents {
namespace {

using hardware::FabricSpec;
using hardware::GpuSpec;
using hardware::ProvenanceMap;
using hardware::StorageSpec;
using hardware::SystemSpec;
using nlohmann::json;

/// Decimal sizes as vendors print them: "80 GB", "126.5 MB", "3.84 TB".
std::string format_decimal_bytes(core::Bytes b) {
  const double v = b.value();
  if (v >= 1e12) return fmt::format("{:.4g} TB", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.4g} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.4g} MB", v / 1e6);
  return fmt::format("{:.4g} B", v);
}

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

void print_entry(std::ostream& out, std::string_view type, const std::string& name, const std::string& display_name,
                 const std::vector<std::string>& aliases, const std::vector<Field>& fields,
                 const ProvenanceMap& provenance) {
  out << fmt::format("{} {}: {}\n", type, name, display_name);
  if (!aliases.empty()) out << fmt::format("aliases: {}\n", core::join(aliases, ", "));
  out << "\n";
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
  t.print(out);
  if (any_unverified) {
    out << "\nunverified: not confirmed by docs/reference/hardware.md (or from outside it); "
           "derived: computed from sourced values (see the note).\n";
  }
}

}  // namespace

std::string format_gbps(core::BytesPerSecond r) { return fmt::format("{:g} Gbps", r.value() * 8.0 / 1e9); }

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

void print_catalog_entry(std::ostream& out, const GpuSpec& g) {
  print_entry(out, "gpu", g.name, g.display_name, g.aliases, gpu_fields(g), g.provenance);
}
void print_catalog_entry(std::ostream& out, const SystemSpec& s) {
  print_entry(out, "system", s.name, s.display_name, s.aliases, system_fields(s), s.provenance);
}
void print_catalog_entry(std::ostream& out, const FabricSpec& f) {
  print_entry(out, "fabric", f.name, f.display_name, f.aliases, fabric_fields(f), f.provenance);
}
void print_catalog_entry(std::ostream& out, const StorageSpec& s) {
  print_entry(out, "storage", s.name, s.display_name, s.aliases, storage_fields(s), s.provenance);
}

}  // namespace fmsim::documents
