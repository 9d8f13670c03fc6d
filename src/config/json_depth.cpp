// The nesting bound of JSON text (json_depth.hpp).
#include "config/json_depth.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace fmsim::config {

void check_json_depth(std::string_view text, const std::string& file, int first_line) {
  int depth = 0;
  int line = first_line;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote or a backslash, does not end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw core::InputError(
            file, line, "",
            fmt::format("JSON nested deeper than {} levels (arrays and objects); allowed: at most {}", kMaxJsonDepth,
                        kMaxJsonDepth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

}  // namespace fmsim::config
