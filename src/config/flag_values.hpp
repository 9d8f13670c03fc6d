// Quantities given as flag values ("405B", "120TiB", "2GB/s", "30d"): parsed with core/units.hpp,
// refused with an InputError naming the flag when not positive (durations: negative or over ten
// years).
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"

namespace fmsim::config {

/// "405B", "1.5e12", "70000000000".
double parse_count_flag(const std::string& text, const std::string& flag);
core::Bytes parse_bytes_flag(const std::string& text, const std::string& flag);
core::BytesPerSecond parse_bandwidth_flag(const std::string& text, const std::string& flag);
core::Seconds parse_duration_flag(const std::string& text, const std::string& flag);
/// A wall-clock time: ISO 8601 UTC ("2026-01-01T00:00:00Z", "2026-01-01") or Unix seconds, as
/// Unix seconds; InputError naming `flag` otherwise.
std::int64_t parse_unix_time(const std::string& text, const std::string& flag);

}  // namespace fmsim::config
