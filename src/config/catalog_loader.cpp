// Placeholder: the YAML catalog loader lands with the catalog data.
#include "config/catalog_loader.hpp"

namespace fmsim::config {

hardware::Catalog load_catalog(const std::vector<std::string>& /*user_files*/) { return {}; }

}  // namespace fmsim::config
