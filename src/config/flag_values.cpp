// Quantities given as flag values.
#include "config/flag_values.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace fmsim::config {

double parse_count_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_count(text);
  if (!v || *v.value <= 0.0) {
    throw core::InputError::flag(flag, fmt::format("'{}' is not a positive count (e.g. 405B, 1.5e12)", text));
  }
  return *v.value;
}

core::Bytes parse_bytes_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_bytes(text);
  if (!v || v.value->value() <= 0.0) throw core::InputError::flag(flag, v ? "must be greater than zero" : v.error);
  return *v.value;
}

core::BytesPerSecond parse_bandwidth_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_bandwidth(text);
  if (!v || v.value->value() <= 0.0) throw core::InputError::flag(flag, v ? "must be greater than zero" : v.error);
  return *v.value;
}

core::Seconds parse_duration_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_duration(text);
  if (!v || v.value->value() < 0.0) throw core::InputError::flag(flag, v ? "must not be negative" : v.error);
  // Simulated time is integer nanoseconds (at most 292 years); a job's durations stay far inside.
  constexpr double kTenYears = 10 * 365.25 * 86400;
  if (v.value->value() > kTenYears)
    throw core::InputError::flag(flag, "'" + text + "' is too long; allowed: 0 to 10 years (3.16e8 s)");
  return *v.value;
}

}  // namespace fmsim::config
