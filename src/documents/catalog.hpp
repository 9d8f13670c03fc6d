// The hardware catalog as documents: the tables of GPUs, systems, fabrics and storage, one entry
// with every value and its source, and a cluster spec's shape (`fmsim catalog`). Each comes as a
// JSON document (every value in SI units with its unit) and as the text the command prints.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "core/units.hpp"
#include "hardware/catalog.hpp"

namespace fmsim::documents {

/// The four lists of the catalog, one table each.
enum class CatalogList { Gpus, Systems, Fabrics, Storage };

/// Every entry of a list: type, name, display name, aliases, identity fields, and `values`, each
/// value with `value` (SI), `unit`, `text`, `source` (null when not given), `verified`, `derived`.
nlohmann::json catalog_list_json(const hardware::Catalog& catalog, CatalogList list);
/// The list as an aligned table, one row per entry: '-' for a value not given, '*' for unverified.
void print_catalog_list(std::ostream& out, const hardware::Catalog& catalog, CatalogList list);

/// One entry (of the four kinds) as catalog_list_json writes it.
nlohmann::json catalog_entry_json(const hardware::GpuSpec& gpu);
nlohmann::json catalog_entry_json(const hardware::SystemSpec& system);
nlohmann::json catalog_entry_json(const hardware::FabricSpec& fabric);
nlohmann::json catalog_entry_json(const hardware::StorageSpec& storage);
/// One entry as `catalog show` prints it: heading, aliases, and a table of every given value with
/// its source and note.
void print_catalog_entry(std::ostream& out, const hardware::GpuSpec& gpu);
void print_catalog_entry(std::ostream& out, const hardware::SystemSpec& system);
void print_catalog_entry(std::ostream& out, const hardware::FabricSpec& fabric);
void print_catalog_entry(std::ostream& out, const hardware::StorageSpec& storage);

/// A resolved cluster spec: system, GPU, fabric, counts, network per node, fabric shape, price,
/// storage attachments.
nlohmann::json catalog_cluster_json(const hardware::ClusterSpec& cluster);
void print_catalog_cluster(std::ostream& out, const hardware::ClusterSpec& cluster);

/// A NIC or network rate as vendors quote it, in gigabits per second: "400 Gbps".
std::string format_gbps(core::BytesPerSecond rate);

}  // namespace fmsim::documents
