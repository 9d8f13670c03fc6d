// JSON string escaping and exact nanosecond-to-microsecond rendering.
#include "observability/json_text.hpp"

#include <fmt/format.h>

#include "core/strings.hpp"

namespace fmsim::observability {

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t len = core::utf8_sequence_length(text, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

void append_ns_as_us(std::string& out, std::int64_t ns) {
  // Work on the magnitude as unsigned so INT64_MIN does not overflow.
  const bool negative = ns < 0;
  const std::uint64_t magnitude = negative ? (~static_cast<std::uint64_t>(ns) + 1) : static_cast<std::uint64_t>(ns);
  const std::uint64_t whole = magnitude / 1000;
  std::uint64_t frac = magnitude % 1000;
  if (negative) out.push_back('-');
  out += fmt::format("{}", whole);
  if (frac == 0) return;
  int digits = 3;
  while (frac % 10 == 0) {
    frac /= 10;
    --digits;
  }
  out += fmt::format(".{:0{}}", frac, digits);
}

}  // namespace fmsim::observability
