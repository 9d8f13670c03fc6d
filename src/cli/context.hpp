// State shared by all commands: global flags and the lazily loaded catalog.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hardware/catalog.hpp"

namespace fmsim::cli {

/// Global options and shared resources for the commands of one invocation.
class Context {
 public:
  std::vector<std::string> catalog_files;  ///< --catalog FILE (repeatable): user additions/overrides
  int exit_code = 0;                       ///< set by a command that wants a non-zero status

  /// The built-in catalog plus every --catalog file, loaded on first use.
  const hardware::Catalog& catalog();

 private:
  std::unique_ptr<hardware::Catalog> catalog_;
};

}  // namespace fmsim::cli
