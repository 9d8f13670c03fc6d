// Loading the hardware catalog from the shipped YAML files and user overrides.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/catalog.hpp"

namespace fmsim::config {

/// The shipped catalog (data/hardware/*.yaml, embedded in the binary) with each user file applied
/// on top, in order. Throws core::InputError (file:line: field: message) on any bad entry.
///
/// An entry in a user file whose `name` (or alias) matches an existing entry of the same section
/// is merged into it field by field: the fields it gives replace the old ones, the rest are kept
/// (`aliases` is replaced as a whole). An entry with `base: OTHER` starts as a copy of OTHER's
/// fields (not its name, display name or aliases). Any other entry is new and must give every
/// required field. Shipped files must give every value as {value, source}; user files may write
/// plain values ("989 TFLOPS"), whose source is recorded as the file and line. Schema and
/// examples: docs/models/catalog.md.
hardware::Catalog load_catalog(const std::vector<std::string>& user_files = {});

/// The shipped catalog with one user catalog given as YAML text (`file` names it in errors), as
/// load_catalog({file}) reads it from disk.
hardware::Catalog load_catalog_text(std::string_view text, const std::string& file);

/// The YAML spellings of the catalog's enums ("hopper", "ultraserver", "efa", "fsx-lustre", "amd").
std::string_view to_string(hardware::Architecture architecture);
std::string_view to_string(hardware::SystemKind kind);
std::string_view to_string(hardware::FabricKind kind);
std::string_view to_string(hardware::StorageKind kind);
std::string_view to_string(hardware::CpuVendor vendor);

}  // namespace fmsim::config
