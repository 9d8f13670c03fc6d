// Lookup over the generated table of embedded data files.
#include "core/embedded_data.hpp"

namespace fmsim::core {

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (const auto& f : embedded_files()) {
    if (f.path == path) return f.contents;
  }
  return std::nullopt;
}

}  // namespace fmsim::core
