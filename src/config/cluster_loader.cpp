// Cluster specs from "SYSTEM[:COUNT]" on the command line or a `kind: Cluster` YAML file.
#include "config/cluster_loader.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <optional>

#include "config/yaml_reader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

using hardware::Catalog;
using hardware::ClusterSpec;
using hardware::StorageAttachment;
using hardware::StorageKind;
using hardware::SystemSpec;

bool looks_like_file(const std::string& text) {
  return text.ends_with(".yaml") || text.ends_with(".yml") || text.find('/') != std::string::npos;
}

// The GPU and fabric a system names; the loader has already checked that both exist.
ClusterSpec make_cluster(const Catalog& catalog, const SystemSpec& system, int count) {
  ClusterSpec c;
  c.system = system;
  const hardware::GpuSpec* gpu = catalog.find_gpu(system.gpu);
  FMSIM_CHECK(gpu != nullptr, "system " + system.name + " names an unknown gpu " + system.gpu);
  c.gpu = *gpu;
  if (!system.fabric.empty()) {
    const hardware::FabricSpec* fabric = catalog.find_fabric(system.fabric);
    FMSIM_CHECK(fabric != nullptr, "system " + system.name + " names an unknown fabric " + system.fabric);
    c.fabric = *fabric;
  }
  c.count = count;
  c.name = fmt::format("{}:{}", system.name, count);
  return c;
}

// Why `count` units of `system` are too many (more than kMaxClusterGpus GPUs), or nullopt.
std::optional<std::string> too_many_units(const SystemSpec& system, long long count) {
  const long long gpus = count * system.gpus();
  if (count <= kMaxClusterGpus && gpus <= kMaxClusterGpus) return std::nullopt;
  return fmt::format("{} units of {} ({} GPUs each) is {} GPUs, more than the {} (2^22) GPUs a cluster may hold", count,
                     system.name, system.gpus(), gpus, kMaxClusterGpus);
}

const SystemSpec& find_system_or_flag_error(const Catalog& catalog, const std::string& name, const std::string& flag) {
  const SystemSpec* system = catalog.find_system(name);
  if (!system) throw core::InputError::flag(flag, core::unknown_name_message("system", name, catalog.system_names()));
  return *system;
}

StorageAttachment read_attachment(const Catalog& catalog, const YamlNode& item) {
  item.expect_map("a storage attachment (storage, capacity, throughput_per_tib, prefixes, mount)");
  item.check_keys({"storage", "capacity", "throughput_per_tib", "prefixes", "mount"});
  StorageAttachment a;
  const YamlNode storage_node = item["storage"];
  const hardware::StorageSpec* spec = catalog.find_storage(storage_node.as_string());
  if (!spec) {
    storage_node.fail(core::unknown_name_message("storage", storage_node.as_string(), catalog.storage_names()));
  }
  a.storage = spec->name;
  if (const auto mount = item.find("mount")) a.mount = mount->as_string();
  if (const auto capacity = item.find("capacity")) {
    a.capacity = capacity->as_bytes(Bound::Positive);
    if (spec->min_capacity.value() > 0.0 && a.capacity < spec->min_capacity) {
      capacity->fail(fmt::format("{} is below the smallest {} file system ({})", core::format_bytes(a.capacity),
                                 spec->name, core::format_bytes(spec->min_capacity)));
    }
  } else if (spec->kind == StorageKind::FsxLustre) {
    item["capacity"].fail(
        fmt::format("missing required field: an FSx for Lustre file system ({}) needs its "
                    "provisioned capacity, e.g. 'capacity: 1200 TiB'",
                    spec->name));
  }
  if (const auto rate = item.find("throughput_per_tib")) {
    std::string value = rate->as_string();
    if (value.ends_with("/TiB")) value.resize(value.size() - 4);
    const auto parsed = core::parse_bandwidth(value);
    if (!parsed) rate->fail(parsed.error);
    rate->check_bound(parsed.value->value(), Bound::Positive, rate->as_string());
    a.throughput_per_tib = *parsed.value;
  }
  if (const auto prefixes = item.find("prefixes")) a.prefixes = prefixes->as_int(Bound::Positive);
  return a;
}

// A `kind: Cluster` document; `default_name` names the cluster when the document does not.
ClusterSpec load_cluster_document(const Catalog& catalog, const YamlDocument& doc, const std::string& default_name) {
  const YamlNode root = doc.node();
  if (!root.is_defined() || root.is_null()) root.fail("the cluster file is empty; expected kind: Cluster");
  root.expect_map("a cluster (kind: Cluster, system, count)");
  root.check_keys({"kind", "name", "system", "count", "gpus", "storage", "fabric"});
  const YamlNode kind = root["kind"];
  if (kind.as_string() != "Cluster") {
    kind.fail(fmt::format("this file is a '{}'; a cluster file has kind: Cluster", kind.as_string()));
  }
  const YamlNode system_node = root["system"];
  const SystemSpec* system = catalog.find_system(system_node.as_string());
  if (!system) {
    system_node.fail(core::unknown_name_message("system", system_node.as_string(), catalog.system_names()));
  }
  const auto count_node = root.find("count");
  const auto gpus_node = root.find("gpus");
  if (count_node && gpus_node) gpus_node->fail("give either count (units of the system) or gpus, not both");
  long long count = 1;
  if (count_node) {
    count = count_node->as_int(Bound::Positive);
  } else if (gpus_node) {
    const long long gpus = gpus_node->as_int(Bound::Positive);
    count = (gpus + system->gpus() - 1) / system->gpus();
  } else {
    root["count"].fail(fmt::format("missing required field: how many {} units (or gpus: N)", system->name));
  }
  if (const auto why = too_many_units(*system, count)) (count_node ? *count_node : *gpus_node).fail(*why);

  ClusterSpec cluster = make_cluster(catalog, *system, static_cast<int>(count));
  cluster.name = root.has("name") ? root["name"].as_string() : default_name;

  if (const auto storage = root.find("storage")) {
    for (const YamlNode& item : storage->items()) cluster.storage.push_back(read_attachment(catalog, item));
  }
  if (const auto fabric = root.find("fabric")) {
    fabric->expect_map("a fabric shape (oversubscription, nodes_per_leaf)");
    fabric->check_keys({"oversubscription", "nodes_per_leaf"});
    if (const auto over = fabric->find("oversubscription")) {
      cluster.oversubscription = over->as_number(Bound::Positive);
      if (cluster.oversubscription < 1.0) {
        over->fail(
            fmt::format("{} is below 1; oversubscription is the ratio of downlink to uplink bandwidth "
                        "(1 = non-blocking, 2 = 2:1)",
                        cluster.oversubscription));
      }
    }
    if (const auto leaf = fabric->find("nodes_per_leaf")) cluster.nodes_per_leaf = leaf->as_int(Bound::Positive);
    if (cluster.oversubscription > 1.0 && cluster.nodes_per_leaf == 0) {
      fabric->fail("oversubscription above 1 needs nodes_per_leaf (how many nodes share one leaf switch)");
    }
  }
  return cluster;
}

}  // namespace

hardware::ClusterSpec parse_cluster(const hardware::Catalog& catalog, const std::string& text,
                                    const std::string& flag) {
  if (text.empty()) throw core::InputError::flag(flag, "empty cluster; expected SYSTEM[:COUNT] or a cluster YAML file");
  std::error_code ec;
  if (looks_like_file(text) || std::filesystem::is_regular_file(text, ec)) {
    if (!std::filesystem::is_regular_file(text, ec)) {
      throw core::InputError::flag(flag, fmt::format("cluster file '{}' does not exist", text));
    }
    return load_cluster_document(catalog, load_yaml_file(text, flag), std::filesystem::path(text).stem().string());
  }
  const auto colon = text.rfind(':');
  const std::string name = text.substr(0, colon);
  int count = 1;
  if (colon != std::string::npos) {
    const std::string count_text = text.substr(colon + 1);
    const auto [ptr, err] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
    if (count_text.empty() || err != std::errc() || ptr != count_text.data() + count_text.size() || count <= 0) {
      throw core::InputError::flag(
          flag, fmt::format("'{}': the count after ':' must be a whole number of at least 1, got '{}' "
                            "(e.g. p5.48xlarge:64)",
                            text, count_text));
    }
  }
  const SystemSpec& system = find_system_or_flag_error(catalog, name, flag);
  if (const auto why = too_many_units(system, count)) throw core::InputError::flag(flag, *why);
  return make_cluster(catalog, system, count);
}

hardware::ClusterSpec parse_cluster_text(const hardware::Catalog& catalog, std::string_view text,
                                         const std::string& file) {
  return load_cluster_document(catalog, load_yaml_text(text, file), std::filesystem::path(file).stem().string());
}

hardware::ClusterSpec cluster_for_gpus(const hardware::Catalog& catalog, const std::string& system, int gpus,
                                       const std::string& flag) {
  const SystemSpec& spec = find_system_or_flag_error(catalog, system, flag);
  if (gpus <= 0) throw core::InputError::flag(flag, fmt::format("{} GPUs: the GPU count must be at least 1", gpus));
  const long long count = (static_cast<long long>(gpus) + spec.gpus() - 1) / spec.gpus();
  if (const auto why = too_many_units(spec, count)) throw core::InputError::flag(flag, *why);
  return make_cluster(catalog, spec, static_cast<int>(count));
}

}  // namespace fmsim::config
