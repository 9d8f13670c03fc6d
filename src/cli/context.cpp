// Lazy catalog loading for the commands.
#include "cli/context.hpp"

#include "config/catalog_loader.hpp"

namespace fmsim::cli {

const hardware::Catalog& Context::catalog() {
  if (catalog_files.empty()) {
    // The shipped catalog is embedded and never changes: parsed once per process, since a sweep
    // task or a Python session runs many commands (35 ms of a 45 ms prediction otherwise).
    static const hardware::Catalog shipped = config::load_catalog();
    return shipped;
  }
  if (!catalog_) catalog_ = std::make_unique<hardware::Catalog>(config::load_catalog(catalog_files));
  return *catalog_;
}

}  // namespace fmsim::cli
