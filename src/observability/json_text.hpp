// Small helpers that write JSON text by hand, so field order and number formatting are fixed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fmsim::observability {

/// Appends `text` as a quoted JSON string. Escapes `"`, `\` and control characters; bytes that
/// are not valid UTF-8 become U+FFFD, so the result always parses.
void append_json_string(std::string& out, std::string_view text);

/// Appends a nanosecond count as microseconds with up to three decimals, exactly
/// (1234567 ns -> 1234.567, 2000 ns -> 2, -1500 ns -> -1.5). No floating-point rounding.
void append_ns_as_us(std::string& out, std::int64_t ns);

}  // namespace fmsim::observability
