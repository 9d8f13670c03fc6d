// Loading the hardware catalog from the shipped YAML files and user overrides.
#pragma once

#include <string>
#include <vector>

#include "hardware/catalog.hpp"

namespace fmsim::config {

/// The shipped catalog (data/hardware/*.yaml, embedded in the binary) with each user file applied
/// on top, in order. Throws core::InputError (file:line: field: message) on any bad entry.
hardware::Catalog load_catalog(const std::vector<std::string>& user_files = {});

}  // namespace fmsim::config
