// The hardware catalog fmsim ships (data/hardware, embedded), loaded once per test process.
#pragma once

#include <string>

#include "config/catalog_loader.hpp"

namespace fmsim::testing {

inline const hardware::Catalog& shipped_catalog() {
  static const hardware::Catalog catalog = config::load_catalog({});
  return catalog;
}

/// A catalog file among the bad-input fixtures of tests/data/catalog.
inline std::string catalog_fixture(const std::string& name) {
  return std::string(FMSIM_SOURCE_DIR) + "/tests/data/catalog/" + name;
}

}  // namespace fmsim::testing
