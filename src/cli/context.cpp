// Lazy catalog loading for the commands.
#include "cli/context.hpp"

#include "config/catalog_loader.hpp"

namespace fmsim::cli {

const hardware::Catalog& Context::catalog() {
  if (!catalog_) catalog_ = std::make_unique<hardware::Catalog>(config::load_catalog(catalog_files));
  return *catalog_;
}

}  // namespace fmsim::cli
