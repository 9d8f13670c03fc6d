// Quantities given as flag values.
#include "config/flag_values.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {

double checked_real(double v, double lo, double hi, const std::string& flag, const std::string& unit) {
  if (std::isfinite(v) && v >= lo && v <= hi) return v;
  throw core::InputError::flag(
      flag, fmt::format("{:g} is out of range; allowed: {:g} to {:g}{}", v, lo, hi, unit.empty() ? "" : " " + unit));
}

long long checked_whole(long long v, long long lo, long long hi, const std::string& flag, const std::string& unit) {
  if (v >= lo && v <= hi) return v;
  throw core::InputError::flag(
      flag, fmt::format("{} is out of range; allowed: {} to {}{}", v, core::format_thousands(static_cast<double>(lo)),
                        core::format_thousands(static_cast<double>(hi)), unit.empty() ? "" : " " + unit));
}

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

std::int64_t parse_unix_time(const std::string& text, const std::string& flag) {
  const std::string t(core::trim_blanks(text));
  if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() <= 12) {
    return std::stoll(t);
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  const int n = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z);
  const bool date_only = std::sscanf(t.c_str(), "%4d-%2d-%2d", &y, &mo, &d) == 3 && t.size() == 10;
  if (!(date_only || (n == 7 && z == 'Z' && t.size() == 20)) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
      mi > 59 || s > 59 || y < 1970) {
    throw core::InputError::flag(flag, fmt::format("\"{}\" is not a time; use ISO 8601 UTC (2026-01-01T00:00:00Z, "
                                                   "2026-01-01) or Unix seconds",
                                                   text));
  }
  if (date_only) h = mi = s = 0;
  const auto days = std::chrono::sys_days(std::chrono::year(y) / std::chrono::month(static_cast<unsigned>(mo)) /
                                          std::chrono::day(static_cast<unsigned>(d)));
  return days.time_since_epoch().count() * 86400LL + h * 3600LL + mi * 60LL + s;
}

}  // namespace fmsim::config
