// Quantities given as flag values ("405B", "120TiB", "2GB/s", "30d"): parsed with core/units.hpp,
// refused with an InputError naming the flag when not positive (durations: negative or over ten
// years).
#pragma once

#include <cstdint>
#include <string>

#include "core/units.hpp"

namespace fmsim::config {

/// `v` when it is a finite number from `lo` to `hi` (both inclusive); otherwise InputError naming
/// `flag`: "--rate: nan is out of range; allowed: 0 to 1e+06 requests/s" (`unit` after the bounds).
double checked_real(double v, double lo, double hi, const std::string& flag, const std::string& unit = "");
/// `v` when it is from `lo` to `hi` (both inclusive); otherwise InputError naming `flag`:
/// "--num-requests: 1000000000 is out of range; allowed: 1 to 1,000,000 requests" (`unit` after).
long long checked_whole(long long v, long long lo, long long hi, const std::string& flag, const std::string& unit = "");

/// "405B", "1.5e12", "70000000000".
double parse_count_flag(const std::string& text, const std::string& flag);
core::Bytes parse_bytes_flag(const std::string& text, const std::string& flag);
core::BytesPerSecond parse_bandwidth_flag(const std::string& text, const std::string& flag);
core::Seconds parse_duration_flag(const std::string& text, const std::string& flag);
/// A wall-clock time: ISO 8601 UTC ("2026-01-01T00:00:00Z", "2026-01-01") or Unix seconds, as
/// Unix seconds; InputError naming `flag` otherwise.
std::int64_t parse_unix_time(const std::string& text, const std::string& flag);

}  // namespace fmsim::config
