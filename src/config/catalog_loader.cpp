// Loads the hardware catalog: shipped data/hardware/*.yaml, then user files merged on top.
//
// Loading has two passes. The first collects every entry's fields from all files, merging user
// overrides field by field and remembering for each field the YAML node (file, line, path) it
// came from. The second converts the merged fields into specs, so an error in any value points
// at the file and line that wrote it, whichever file that was.
#include "config/catalog_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <type_traits>

#include "config/cluster_loader.hpp"
#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

using hardware::Architecture;
using hardware::Catalog;
using hardware::CpuVendor;
using hardware::FabricKind;
using hardware::FabricSpec;
using hardware::GpuSpec;
using hardware::Provenance;
using hardware::ProvenanceMap;
using hardware::StorageKind;
using hardware::StorageSpec;
using hardware::SystemKind;
using hardware::SystemSpec;

// One section of a catalog file: its key, the noun used in messages, and its fields. `plain`
// fields are names, enums and references, written as bare scalars; every other field is a
// value that the shipped files give as {value, source}.
struct Section {
  std::string_view key;
  std::string_view noun;
  std::vector<std::string> plain;
  std::vector<std::string> sourced;

  [[nodiscard]] std::vector<std::string> allowed() const {
    std::vector<std::string> all = plain;
    all.insert(all.end(), sourced.begin(), sourced.end());
    return all;
  }
  [[nodiscard]] bool is_plain(const std::string& key_name) const {
    return std::find(plain.begin(), plain.end(), key_name) != plain.end();
  }
};

const Section kGpuSection{
    "gpus",
    "gpu",
    {"name", "display_name", "aliases", "base", "architecture"},
    {"sm_version", "sm_count", "l2_cache", "fp64", "tf32", "bf16", "fp16", "fp8", "fp4", "hbm_capacity", "hbm_usable",
     "hbm_bandwidth", "nvlink_generation", "nvlink_links", "nvlink_bandwidth", "host_link_bandwidth", "tdp"}};

const Section kSystemSection{
    "systems",
    "system",
    {"name", "display_name", "aliases", "base", "kind", "gpu", "fabric", "cpu_vendor", "price_kind", "price_date"},
    {"gpus_per_node", "nodes", "nvlink_domain_gpus", "nvswitch", "nvls", "nvlink_aggregate", "nics_per_node",
     "nic_bandwidth", "network_bandwidth", "vcpus", "cpu", "host_memory", "local_nvme_devices",
     "local_nvme_device_size", "local_nvme_read", "local_nvme_write", "price_per_hour"}};

const Section kFabricSection{"fabrics",
                             "fabric",
                             {"name", "display_name", "aliases", "base", "kind"},
                             {"generation", "latency", "message_latency", "efficiency", "gpudirect_rdma"}};

const Section kStorageSection{
    "storage",
    "storage",
    {"name", "display_name", "aliases", "base", "kind"},
    {"throughput_per_tib", "network_baseline_per_tib", "network_burst_per_tib", "min_capacity", "capacity_increment",
     "efa_capable", "max_client_throughput", "metadata_iops", "get_requests_per_s", "put_requests_per_s",
     "per_connection_throughput", "first_byte_latency", "max_part_size", "max_parts"}};

// Fields a `base:` copy does not inherit: they identify the base entry itself.
const std::set<std::string> kIdentityFields{"name", "display_name", "aliases", "base"};

struct FieldRef {
  YamlNode node;
  bool shipped = false;  // shipped data must give {value, source}
};

struct RawEntry {
  std::string name;
  YamlNode origin;  // the mapping that introduced the entry, for "missing field" errors
  std::map<std::string, FieldRef> fields;
  bool user = false;  // written (or merged into) by a user file: its shipped spec cannot be reused

  [[nodiscard]] std::vector<std::string> aliases() const {
    const auto it = fields.find("aliases");
    if (it == fields.end() || it->second.node.is_null()) return {};
    return it->second.node.as_string_list();
  }
};

// A section's entries. Copies share them: a load with user files starts from a copy of the
// shipped section and clones an entry only when a user file merges into it (writable()).
struct RawSection {
  const Section* section;
  std::vector<std::shared_ptr<RawEntry>> entries;

  /// The index of the entry named `name` (or with that alias), case-insensitive.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
    const std::string wanted = core::to_lower(name);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (core::to_lower(entries[i]->name) == wanted) return i;
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      for (const auto& alias : entries[i]->aliases()) {
        if (core::to_lower(alias) == wanted) return i;
      }
    }
    return std::nullopt;
  }
  /// Entry `i`, cloned first if a shipped entry shared with the cached shipped section.
  RawEntry& writable(std::size_t i, bool shipped) {
    if (!shipped && !entries[i]->user) entries[i] = std::make_shared<RawEntry>(*entries[i]);
    return *entries[i];
  }
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e->name);
    return out;
  }
};

struct RawCatalog {
  RawSection gpus{&kGpuSection, {}};
  RawSection systems{&kSystemSection, {}};
  RawSection fabrics{&kFabricSection, {}};
  RawSection storage{&kStorageSection, {}};
};

void check_name(const YamlNode& node, const std::string& name) {
  const bool ok = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+';
  });
  if (!ok) {
    node.fail(
        fmt::format("'{}' is not a valid name; use letters, digits and - _ . + only "
                    "(no spaces or ':'; put other spellings under aliases)",
                    name));
  }
}

void apply_entry(const YamlNode& item, RawSection& raw, bool shipped, std::set<std::string>& defined_here) {
  const Section& section = *raw.section;
  item.expect_map(fmt::format("a {} entry", section.noun));
  item.check_keys(section.allowed());
  const YamlNode name_node = item["name"];
  const std::string name = name_node.as_string();
  check_name(name_node, name);
  const auto found = raw.find(name);
  if (!defined_here.insert(core::to_lower(found ? raw.entries[*found]->name : name)).second) {
    name_node.fail(fmt::format("{} '{}' is defined twice in this file", section.noun, name));
  }
  RawEntry* entry = nullptr;
  if (const auto base = item.find("base")) {
    const std::string base_name = base->as_string();
    if (found) {
      base->fail(
          fmt::format("'base' is for new entries; {} '{}' already exists, so the fields given here "
                      "are merged into it",
                      section.noun, raw.entries[*found]->name));
    }
    const auto base_index = raw.find(base_name);
    if (!base_index) base->fail(core::unknown_name_message(section.noun, base_name, raw.names()));
    auto copy = std::make_shared<RawEntry>(RawEntry{name, item, {}});
    for (const auto& [key, field] : raw.entries[*base_index]->fields) {
      if (!kIdentityFields.contains(key)) copy->fields.emplace(key, field);
    }
    raw.entries.push_back(std::move(copy));
    entry = raw.entries.back().get();
  } else if (found) {
    entry = &raw.writable(*found, shipped);
  } else {
    raw.entries.push_back(std::make_shared<RawEntry>(RawEntry{name, item, {}}));
    entry = raw.entries.back().get();
  }
  for (const auto& [key, value] : item.entries()) {
    if (key == "base" || key == "name") continue;
    entry->fields.insert_or_assign(key, FieldRef{value, shipped});
  }
  if (!shipped) entry->user = true;
}

void apply_document(const YamlDocument& doc, bool shipped, RawCatalog& raw) {
  const YamlNode root = doc.node();
  if (!root.is_defined() || root.is_null()) {
    root.fail("the catalog file is empty; expected gpus:, systems:, fabrics: or storage:");
  }
  root.expect_map("a catalog with gpus:, systems:, fabrics: or storage:");
  root.check_keys({"kind", "gpus", "systems", "fabrics", "storage"});
  if (const auto kind = root.find("kind"); kind && kind->as_string() != "Catalog") {
    kind->fail(fmt::format("this file is a '{}'; a catalog file has kind: Catalog", kind->as_string()));
  }
  for (RawSection* section : {&raw.fabrics, &raw.gpus, &raw.systems, &raw.storage}) {
    const auto list = root.find(section->section->key);
    if (!list) continue;
    std::set<std::string> defined_here;
    for (const YamlNode& item : list->items()) apply_entry(item, *section, shipped, defined_here);
  }
}

// Reads the merged fields of one entry into a spec, recording each value's provenance.
class FieldReader {
 public:
  FieldReader(const RawEntry& entry, const Section& section, ProvenanceMap& provenance)
      : entry_(entry), section_(section), provenance_(provenance) {}

  [[nodiscard]] bool has(const std::string& key) const {
    const auto it = entry_.fields.find(key);
    return it != entry_.fields.end() && !it->second.node.is_null();
  }

  /// The node of a plain (unsourced) field, or nullopt.
  [[nodiscard]] std::optional<YamlNode> plain(const std::string& key) const {
    FMSIM_CHECK(section_.is_plain(key), "field " + key + " is not a plain field");
    if (!has(key)) return std::nullopt;
    return entry_.fields.at(key).node;
  }
  [[nodiscard]] YamlNode require_plain(const std::string& key) const {
    const auto node = plain(key);
    if (!node) missing(key);
    return *node;
  }

  /// The value node of a sourced field (recording its provenance), or nullopt.
  [[nodiscard]] std::optional<YamlNode> value(const std::string& key) const {
    FMSIM_CHECK(!section_.is_plain(key), "field " + key + " is a plain field");
    if (!has(key)) return std::nullopt;
    const FieldRef& field = entry_.fields.at(key);
    SourcedValue v = read_sourced(field.node, field.shipped);
    Provenance p{v.source, v.verified, v.derived, v.note};
    if (p.source.empty()) p.source = fmt::format("{}:{}", field.node.file(), field.node.line());
    provenance_[key] = std::move(p);
    return v.value;
  }

  /// Converts field `key` with `convert` into `out` if present; returns whether it was.
  template <class T, class F>
  bool set(const std::string& key, T& out, F&& convert) const {
    const auto node = value(key);
    if (!node) return false;
    out = convert(*node);
    return true;
  }
  template <class T, class F>
  void set_required(const std::string& key, T& out, F&& convert) const {
    if (!set(key, out, std::forward<F>(convert))) missing(key);
  }

  [[noreturn]] void missing(const std::string& key) const {
    const YamlNode& origin = entry_.origin;
    throw core::InputError(origin.file(), origin.line(), origin.path().empty() ? key : origin.path() + "." + key,
                           fmt::format("missing required field for {} '{}'", section_.noun, entry_.name));
  }

  /// Where field `key` was written (for errors found after conversion).
  [[nodiscard]] const YamlNode& node(const std::string& key) const { return entry_.fields.at(key).node; }
  [[nodiscard]] const RawEntry& entry() const { return entry_; }

 private:
  const RawEntry& entry_;
  const Section& section_;
  ProvenanceMap& provenance_;
};

// Converters for FieldReader::set.
auto bytes(Bound b) {
  return [b](const YamlNode& n) { return n.as_bytes(b); };
}
auto bandwidth(Bound b) {
  return [b](const YamlNode& n) { return n.as_bandwidth(b); };
}
auto flops(Bound b) {
  return [b](const YamlNode& n) { return n.as_flops_rate(b); };
}
auto duration(Bound b) {
  return [b](const YamlNode& n) { return n.as_duration(b); };
}
auto power(Bound b) {
  return [b](const YamlNode& n) { return n.as_power(b); };
}
auto integer(Bound b) {
  return [b](const YamlNode& n) { return n.as_int(b); };
}
auto number(Bound b) {
  return [b](const YamlNode& n) { return n.as_number(b); };
}
auto boolean() {
  return [](const YamlNode& n) { return n.as_bool(); };
}
auto text() {
  return [](const YamlNode& n) { return n.as_string(); };
}
// "1000 MB/s/TiB": a bandwidth per TiB of provisioned storage.
auto per_tib(Bound b) {
  return [b](const YamlNode& n) {
    const std::string value = n.as_string();
    constexpr std::string_view kSuffix = "/TiB";
    if (value.size() <= kSuffix.size() || value.substr(value.size() - kSuffix.size()) != kSuffix) {
      n.fail(fmt::format("'{}' must be a bandwidth per TiB of storage, e.g. '1000 MB/s/TiB'", value));
    }
    const auto parsed = core::parse_bandwidth(value.substr(0, value.size() - kSuffix.size()));
    if (!parsed) n.fail(parsed.error);
    n.check_bound(parsed.value->value(), b, value);
    return *parsed.value;
  };
}
auto request_rate(Bound b) {
  return [b](const YamlNode& n) { return n.as_number_with_unit({{"req/s", 1.0}, {"IOPS", 1.0}, {"/s", 1.0}}, b); };
}
auto usd_per_hour(Bound b) {
  return [b](const YamlNode& n) { return n.as_number_with_unit({{"USD/h", 1.0}, {"$/h", 1.0}}, b); };
}

std::string display_name(const FieldReader& r) {
  const auto node = r.plain("display_name");
  return node ? node->as_string() : r.entry().name;
}

std::vector<std::string> aliases(const FieldReader& r) {
  const auto node = r.plain("aliases");
  return node ? node->as_string_list() : std::vector<std::string>{};
}

GpuSpec build_gpu(const RawEntry& entry) {
  GpuSpec g;
  FieldReader r(entry, kGpuSection, g.provenance);
  g.name = entry.name;
  g.display_name = display_name(r);
  g.aliases = aliases(r);
  g.architecture = r.require_plain("architecture").as_word(hardware::kArchitectureWords);
  r.set("sm_version", g.sm_version, integer(Bound::Positive));
  r.set("sm_count", g.sm_count, integer(Bound::Positive));
  r.set("l2_cache", g.l2_cache, bytes(Bound::Positive));
  r.set("fp64", g.fp64, flops(Bound::NonNegative));
  r.set("tf32", g.tf32, flops(Bound::NonNegative));
  r.set_required("bf16", g.bf16, flops(Bound::Positive));
  if (!r.set("fp16", g.fp16, flops(Bound::NonNegative))) {
    g.fp16 = g.bf16;
    g.provenance["fp16"] = Provenance{g.provenance["bf16"].source, g.provenance["bf16"].verified, true,
                                      "not given; assumed equal to bf16"};
  }
  r.set("fp8", g.fp8, flops(Bound::NonNegative));
  r.set("fp4", g.fp4, flops(Bound::NonNegative));
  r.set_required("hbm_capacity", g.hbm_capacity, bytes(Bound::Positive));
  if (!r.set("hbm_usable", g.hbm_usable, bytes(Bound::Positive))) {
    g.hbm_usable = g.hbm_capacity;
    g.provenance["hbm_usable"] =
        Provenance{g.provenance["hbm_capacity"].source, false, true, "not given; nominal capacity assumed usable"};
  }
  r.set_required("hbm_bandwidth", g.hbm_bandwidth, bandwidth(Bound::Positive));
  r.set("nvlink_generation", g.nvlink_generation, integer(Bound::NonNegative));
  r.set("nvlink_links", g.nvlink_links, integer(Bound::NonNegative));
  r.set("nvlink_bandwidth", g.nvlink_bandwidth, bandwidth(Bound::NonNegative));
  if (!r.set("host_link_bandwidth", g.host_link_bandwidth, bandwidth(Bound::Positive))) {
    g.host_link_bandwidth = core::BytesPerSecond(32e9);
    g.provenance["host_link_bandwidth"] =
        Provenance{"", false, true, "not given; PCIe Gen4 x16 (32 GB/s per direction) assumed"};
  }
  r.set("tdp", g.tdp, power(Bound::Positive));
  return g;
}

FabricSpec build_fabric(const RawEntry& entry) {
  FabricSpec f;
  FieldReader r(entry, kFabricSection, f.provenance);
  f.name = entry.name;
  f.display_name = display_name(r);
  f.aliases = aliases(r);
  f.kind = r.require_plain("kind").as_word(hardware::kFabricKindWords);
  r.set("generation", f.generation, integer(Bound::NonNegative));
  r.set_required("latency", f.latency, duration(Bound::Positive));
  r.set("message_latency", f.message_latency, duration(Bound::Positive));
  r.set_required("efficiency", f.efficiency, number(Bound::Positive));
  if (f.efficiency > 1.0) {
    r.node("efficiency").fail(fmt::format("{} is a fraction of line rate and must be at most 1", f.efficiency));
  }
  r.set("gpudirect_rdma", f.gpudirect_rdma, boolean());
  return f;
}

StorageSpec build_storage(const RawEntry& entry) {
  StorageSpec s;
  FieldReader r(entry, kStorageSection, s.provenance);
  s.name = entry.name;
  s.display_name = display_name(r);
  s.aliases = aliases(r);
  s.kind = r.require_plain("kind").as_word(hardware::kStorageKindWords);
  if (s.kind == StorageKind::FsxLustre) {
    r.set_required("throughput_per_tib", s.throughput_per_tib, per_tib(Bound::Positive));
  } else {
    r.set("throughput_per_tib", s.throughput_per_tib, per_tib(Bound::Positive));
  }
  r.set("network_baseline_per_tib", s.network_baseline_per_tib, per_tib(Bound::Positive));
  r.set("network_burst_per_tib", s.network_burst_per_tib, per_tib(Bound::Positive));
  r.set("min_capacity", s.min_capacity, bytes(Bound::Positive));
  r.set("capacity_increment", s.capacity_increment, bytes(Bound::Positive));
  r.set("efa_capable", s.efa_capable, boolean());
  r.set("max_client_throughput", s.max_client_throughput, bandwidth(Bound::Positive));
  r.set("metadata_iops", s.metadata_iops, request_rate(Bound::Positive));
  if (s.kind == StorageKind::S3 || s.kind == StorageKind::S3Express) {
    r.set_required("get_requests_per_s", s.get_requests_per_s, request_rate(Bound::Positive));
    r.set_required("put_requests_per_s", s.put_requests_per_s, request_rate(Bound::Positive));
  } else {
    r.set("get_requests_per_s", s.get_requests_per_s, request_rate(Bound::Positive));
    r.set("put_requests_per_s", s.put_requests_per_s, request_rate(Bound::Positive));
  }
  r.set("per_connection_throughput", s.per_connection_throughput, bandwidth(Bound::Positive));
  r.set("first_byte_latency", s.first_byte_latency, duration(Bound::Positive));
  r.set("max_part_size", s.max_part_size, bytes(Bound::Positive));
  r.set("max_parts", s.max_parts, integer(Bound::Positive));
  return s;
}

bool is_iso_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  const int month = std::stoi(s.substr(5, 2));
  const int day = std::stoi(s.substr(8, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

SystemSpec build_system(const RawEntry& entry, const Catalog& catalog) {
  SystemSpec s;
  FieldReader r(entry, kSystemSection, s.provenance);
  s.name = entry.name;
  s.display_name = display_name(r);
  s.aliases = aliases(r);
  s.kind = r.require_plain("kind").as_word(hardware::kSystemKindWords);

  const YamlNode gpu_node = r.require_plain("gpu");
  const GpuSpec* gpu = catalog.find_gpu(gpu_node.as_string());
  if (!gpu) gpu_node.fail(core::unknown_name_message("gpu", gpu_node.as_string(), catalog.gpu_names()));
  s.gpu = gpu->name;

  r.set_required("gpus_per_node", s.gpus_per_node, integer(Bound::Positive));
  s.nodes = 1;
  r.set("nodes", s.nodes, integer(Bound::Positive));
  if (static_cast<long long>(s.gpus_per_node) * s.nodes > kMaxClusterGpus) {
    r.node(r.has("nodes") ? "nodes" : "gpus_per_node")
        .fail(fmt::format("{} nodes x {} GPUs is more than the {} (2^22) GPUs a cluster may hold", s.nodes,
                          s.gpus_per_node, kMaxClusterGpus));
  }
  s.nvlink_domain_gpus = s.gpus_per_node;
  if (r.set("nvlink_domain_gpus", s.nvlink_domain_gpus, integer(Bound::Positive))) {
    if (s.nvlink_domain_gpus > s.gpus() || s.gpus() % s.nvlink_domain_gpus != 0) {
      r.node("nvlink_domain_gpus")
          .fail(fmt::format("{} must divide the {} GPUs of one {} ({} nodes x {} GPUs)", s.nvlink_domain_gpus, s.gpus(),
                            s.name, s.nodes, s.gpus_per_node));
    }
  }
  s.nvswitch = false;
  r.set("nvswitch", s.nvswitch, boolean());
  s.nvls = false;
  if (r.set("nvls", s.nvls, boolean()) && s.nvls && !s.nvswitch) {
    r.node("nvls").fail("NVLink SHARP (nvls: true) needs an NVSwitch (nvswitch: true)");
  }
  r.set("nvlink_aggregate", s.nvlink_aggregate, bandwidth(Bound::NonNegative));

  if (const auto fabric_node = r.plain("fabric")) {
    const FabricSpec* fabric = catalog.find_fabric(fabric_node->as_string());
    if (!fabric) {
      fabric_node->fail(core::unknown_name_message("fabric", fabric_node->as_string(), catalog.fabric_names()));
    }
    s.fabric = fabric->name;
    r.set_required("nics_per_node", s.nics_per_node, integer(Bound::Positive));
    r.set_required("nic_bandwidth", s.nic_bandwidth, bandwidth(Bound::Positive));
  } else {
    r.set("nics_per_node", s.nics_per_node, integer(Bound::NonNegative));
    r.set("nic_bandwidth", s.nic_bandwidth, bandwidth(Bound::NonNegative));
  }
  if (!r.set("network_bandwidth", s.network_bandwidth, bandwidth(Bound::NonNegative))) {
    s.network_bandwidth = s.nic_bandwidth * static_cast<double>(s.nics_per_node);
    if (s.nics_per_node > 0) {
      const Provenance& nic = s.provenance["nic_bandwidth"];
      s.provenance["network_bandwidth"] = Provenance{nic.source, nic.verified, true, "nics_per_node x nic_bandwidth"};
    }
  }

  r.set("vcpus", s.vcpus, integer(Bound::Positive));
  r.set("cpu", s.cpu, text());
  if (const auto vendor = r.plain("cpu_vendor")) {
    s.cpu_vendor = vendor->as_word(hardware::kCpuVendorWords);
  }
  r.set("host_memory", s.host_memory, bytes(Bound::Positive));
  r.set("local_nvme_devices", s.local_nvme_devices, integer(Bound::NonNegative));
  r.set("local_nvme_device_size", s.local_nvme_device_size, bytes(Bound::Positive));
  r.set("local_nvme_read", s.local_nvme_read, bandwidth(Bound::Positive));
  r.set("local_nvme_write", s.local_nvme_write, bandwidth(Bound::Positive));

  if (r.set("price_per_hour", s.price_per_hour_usd, usd_per_hour(Bound::NonNegative))) {
    s.price_kind = r.require_plain("price_kind").as_word(hardware::kPriceKindWords);
    const YamlNode date = r.require_plain("price_date");
    s.price_date = date.as_string();
    if (!is_iso_date(s.price_date)) {
      date.fail(fmt::format("'{}' is not a date; write it as YYYY-MM-DD", s.price_date));
    }
  } else if (r.has("price_kind") || r.has("price_date")) {
    r.missing("price_per_hour");
  }
  return s;
}

// Names and aliases must identify one entry of a section (case-insensitive).
template <class Spec>
void check_unique_names(const std::vector<Spec>& specs, const RawSection& raw) {
  std::map<std::string, std::string> owner;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Spec& spec = specs[i];
    std::vector<std::string> names{spec.name};
    names.insert(names.end(), spec.aliases.begin(), spec.aliases.end());
    for (const auto& n : names) {
      const auto [it, inserted] = owner.emplace(core::to_lower(n), spec.name);
      if (inserted || it->second == spec.name) continue;
      const RawEntry& entry = *raw.entries[i];
      const auto field = entry.fields.find("aliases");
      const YamlNode& where = field != entry.fields.end() ? field->second.node : entry.origin;
      where.fail(fmt::format("'{}' already names {} '{}'; names and aliases must be unique", n, raw.section->noun,
                             it->second));
    }
  }
}

// The shipped entries' specs, built once per process, in the order of their raw entries.
struct ShippedSpecs {
  std::vector<FabricSpec> fabrics;
  std::vector<GpuSpec> gpus;
  std::vector<StorageSpec> storage;
  std::vector<SystemSpec> systems;
};

// A shipped system's spec still holds when its gpu and fabric fields name the same entries in
// this catalog (a user file may have replaced the aliases they were written with).
bool still_resolves(const SystemSpec& s, const RawEntry& entry, const Catalog& catalog) {
  const auto gpu = entry.fields.find("gpu");
  const GpuSpec* g = gpu == entry.fields.end() ? nullptr : catalog.find_gpu(gpu->second.node.as_string());
  if (g == nullptr || g->name != s.gpu) return false;
  const auto fabric = entry.fields.find("fabric");
  if (fabric == entry.fields.end() || fabric->second.node.is_null()) return s.fabric.empty();
  const FabricSpec* f = catalog.find_fabric(fabric->second.node.as_string());
  return f != nullptr && f->name == s.fabric;
}

// Converts a section's entries into specs: a shipped entry no user file touched reuses its spec
// from `built` (when given and `reuse` agrees), every other entry is converted from its fields.
template <class Spec, class Build, class Reuse>
std::vector<Spec> build_section(const RawSection& raw, const std::vector<Spec>* built, Build&& build_one,
                                Reuse&& reuse) {
  std::vector<Spec> specs;
  specs.reserve(raw.entries.size());
  for (std::size_t i = 0; i < raw.entries.size(); ++i) {
    const RawEntry& e = *raw.entries[i];
    if (built != nullptr && !e.user && i < built->size() && reuse((*built)[i], e)) {
      specs.push_back((*built)[i]);
    } else {
      specs.push_back(build_one(e));
    }
  }
  check_unique_names(specs, raw);
  return specs;
}

// The catalog of `raw`; with `shipped`, untouched shipped entries are copied from it rather than
// converted again (a load with --catalog files converts only what those files wrote).
Catalog build(const RawCatalog& raw, const ShippedSpecs* shipped = nullptr, ShippedSpecs* record = nullptr) {
  auto any = [](const auto&, const RawEntry&) { return true; };
  Catalog catalog;
  auto fabrics = build_section(raw.fabrics, shipped ? &shipped->fabrics : nullptr, build_fabric, any);
  if (record) record->fabrics = fabrics;
  for (auto& f : fabrics) catalog.add(std::move(f));

  auto gpus = build_section(raw.gpus, shipped ? &shipped->gpus : nullptr, build_gpu, any);
  if (record) record->gpus = gpus;
  for (auto& g : gpus) catalog.add(std::move(g));

  auto storage = build_section(raw.storage, shipped ? &shipped->storage : nullptr, build_storage, any);
  if (record) record->storage = storage;
  for (auto& s : storage) catalog.add(std::move(s));

  auto systems = build_section(
      raw.systems, shipped ? &shipped->systems : nullptr, [&](const RawEntry& e) { return build_system(e, catalog); },
      [&](const SystemSpec& s, const RawEntry& e) { return still_resolves(s, e, catalog); });
  if (record) record->systems = systems;
  for (auto& s : systems) catalog.add(std::move(s));
  return catalog;
}

// The shipped files, parsed and merged once per process, and their specs.
struct Shipped {
  RawCatalog raw;
  ShippedSpecs specs;
  Catalog catalog;
};

const Shipped& shipped_catalog() {
  static const Shipped shipped = [] {
    Shipped s;
    for (const auto& file : core::embedded_files()) {
      if (!file.path.starts_with("hardware/") || !file.path.ends_with(".yaml")) continue;
      apply_document(load_yaml_text(file.contents, "data/" + std::string(file.path)), true, s.raw);
    }
    s.catalog = build(s.raw, nullptr, &s.specs);
    return s;
  }();
  return shipped;
}

// The shipped catalog with `count` user documents applied in order (`user_doc(i)` parses the i-th).
template <class UserDoc>
Catalog load_documents(std::size_t count, UserDoc&& user_doc) {
  // yaml-cpp nodes shared between threads are not safe to read at once, so loads take turns
  // (the shipped-only catalog is cached above this, in cli::Context).
  static std::mutex turn;
  const std::lock_guard lock(turn);
  const Shipped& shipped = shipped_catalog();
  if (count == 0) return shipped.catalog;
  RawCatalog raw = shipped.raw;
  for (std::size_t i = 0; i < count; ++i) apply_document(user_doc(i), false, raw);
  return build(raw, &shipped.specs);
}

}  // namespace

hardware::Catalog load_catalog(const std::vector<std::string>& user_files) {
  // The shipped files are parsed and converted once per process (most of a load's 15 ms); a
  // load with user files converts only the entries those files write or merge into.
  return load_documents(user_files.size(), [&](std::size_t i) { return load_yaml_file(user_files[i], "--catalog"); });
}

hardware::Catalog load_catalog_text(std::string_view text, const std::string& file) {
  return load_documents(1, [&](std::size_t) { return load_yaml_text(text, file); });
}

std::string_view to_string(hardware::Architecture architecture) {
  return hardware::kArchitectureWords.name(architecture);
}

std::string_view to_string(hardware::SystemKind kind) {
  switch (kind) {
    case SystemKind::Instance: return "instance";
    case SystemKind::UltraServer: return "ultraserver";
    case SystemKind::Reference: return "reference";
  }
  return "?";
}

std::string_view to_string(hardware::FabricKind kind) {
  switch (kind) {
    case FabricKind::None: return "none";
    case FabricKind::Efa: return "efa";
    case FabricKind::InfiniBand: return "infiniband";
  }
  return "?";
}

std::string_view to_string(hardware::StorageKind kind) {
  switch (kind) {
    case StorageKind::InstanceNvme: return "instance-nvme";
    case StorageKind::FsxLustre: return "fsx-lustre";
    case StorageKind::S3: return "s3";
    case StorageKind::S3Express: return "s3-express";
    case StorageKind::HostMemory: return "host-memory";
  }
  return "?";
}

std::string_view to_string(hardware::CpuVendor vendor) {
  switch (vendor) {
    case CpuVendor::Intel: return "intel";
    case CpuVendor::Amd: return "amd";
    case CpuVendor::Arm: return "arm";
  }
  return "?";
}

}  // namespace fmsim::config
