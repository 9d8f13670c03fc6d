// Parsing and formatting of the strong unit types.
#include "core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <type_traits>
#include <utility>

#include "core/strings.hpp"

namespace fmsim::core {
namespace {

struct Split {
  double number = 0.0;
  std::string_view unit;
  bool ok = false;
};

// Splits "2.25 PFLOPS" into 2.25 and "PFLOPS". Rejects empty numbers, NaN and infinities.
Split split_number(std::string_view text) {
  Split out;
  text = trim_blanks(text);
  std::size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == '-' || text[i] == '+' ||
          ((text[i] == 'e' || text[i] == 'E') && i > 0 && i + 1 < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' || text[i + 1] == '+')))) {
    ++i;
  }
  if (i == 0) return out;
  std::string number(text.substr(0, i));
  std::string_view digits = number;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.number);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(out.number)) {
    return out;
  }
  out.unit = trim_blanks(text.substr(i));
  out.ok = true;
  return out;
}

template <class T>
Parsed<T> fail(std::string_view text, std::string_view what, std::string_view allowed) {
  Parsed<T> p;
  p.error = fmt::format("'{}' is not a {}; expected a number and a unit ({})", text, what, allowed);
  return p;
}

template <std::size_t N>
std::optional<double> lookup(std::string_view unit, const std::array<std::pair<std::string_view, double>, N>& table) {
  for (const auto& [name, factor] : table) {
    if (unit == name) return factor;
  }
  return std::nullopt;
}

constexpr double kKi = 1024.0;
constexpr std::array<std::pair<std::string_view, double>, 25> kByteUnits{{
    {"", 1.0},
    {"B", 1.0},
    {"bytes", 1.0},
    {"byte", 1.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"kB", 1e3},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
    {"K", kKi},
    {"M", kKi* kKi},
    {"G", kKi* kKi* kKi},
    {"T", kKi* kKi* kKi* kKi},
    {"k", kKi},
    {"m", kKi* kKi},
    {"g", kKi* kKi* kKi},
    {"t", kKi* kKi* kKi* kKi},
    {"Ki", kKi},
    {"Mi", kKi* kKi},
}};

constexpr std::array<std::pair<std::string_view, double>, 22> kBandwidthUnits{{
    {"B/s", 1.0},
    {"KB/s", 1e3},
    {"MB/s", 1e6},
    {"GB/s", 1e9},
    {"TB/s", 1e12},
    {"KiB/s", kKi},
    {"MiB/s", kKi* kKi},
    {"GiB/s", kKi* kKi* kKi},
    {"TiB/s", kKi* kKi* kKi* kKi},
    {"GBps", 1e9},
    {"MBps", 1e6},
    {"TBps", 1e12},
    {"bps", 1.0 / 8},
    {"Kbps", 1e3 / 8},
    {"Mbps", 1e6 / 8},
    {"Gbps", 1e9 / 8},
    {"Tbps", 1e12 / 8},
    {"Gbit/s", 1e9 / 8},
    {"Tbit/s", 1e12 / 8},
    {"Mbit/s", 1e6 / 8},
    {"Gb/s", 1e9 / 8},
    {"Tb/s", 1e12 / 8},
}};

constexpr std::array<std::pair<std::string_view, double>, 15> kFlopsUnits{{
    {"FLOPS", 1.0},
    {"GFLOPS", 1e9},
    {"TFLOPS", 1e12},
    {"PFLOPS", 1e15},
    {"EFLOPS", 1e18},
    {"FLOP/s", 1.0},
    {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12},
    {"PFLOP/s", 1e15},
    {"EFLOP/s", 1e18},
    {"TF", 1e12},
    {"PF", 1e15},
    {"GF", 1e9},
    {"TOPS", 1e12},
    {"POPS", 1e15},
}};

constexpr std::array<std::pair<std::string_view, double>, 21> kTimeUnits{{
    {"ns", 1e-9},        {"us", 1e-6},     {"µs", 1e-6},      {"ms", 1e-3},     {"s", 1.0},        {"sec", 1.0},
    {"seconds", 1.0},    {"min", 60.0},    {"minutes", 60.0}, {"m", 60.0},      {"h", 3600.0},     {"hr", 3600.0},
    {"hours", 3600.0},   {"hour", 3600.0}, {"d", 86400.0},    {"day", 86400.0}, {"days", 86400.0}, {"w", 604800.0},
    {"weeks", 604800.0}, {"second", 1.0},  {"minute", 60.0},
}};

constexpr std::array<std::pair<std::string_view, double>, 4> kPowerUnits{{
    {"W", 1.0},
    {"kW", 1e3},
    {"KW", 1e3},
    {"MW", 1e6},
}};

constexpr std::array<std::pair<std::string_view, double>, 10> kCountUnits{{
    {"", 1.0},
    {"K", 1e3},
    {"k", 1e3},
    {"M", 1e6},
    {"B", 1e9},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"m", 1e6},
    {"b", 1e9},
}};

template <class T, std::size_t N>
Parsed<T> parse_with(std::string_view text, const std::array<std::pair<std::string_view, double>, N>& units,
                     std::string_view what, std::string_view allowed, bool unit_required) {
  const Split s = split_number(text);
  if (!s.ok) return fail<T>(text, what, allowed);
  if (unit_required && s.unit.empty()) {
    Parsed<T> p;
    p.error = fmt::format("'{}' has no unit; a {} needs one of: {}", text, what, allowed);
    return p;
  }
  const auto factor = lookup(s.unit, units);
  if (!factor) {
    Parsed<T> p;
    p.error = fmt::format("'{}': unknown unit '{}' for a {}; allowed: {}", text, s.unit, what, allowed);
    return p;
  }
  const double value = s.number * *factor;
  if (!std::isfinite(value)) {
    Parsed<T> p;
    p.error = std::isnan(value) ? fmt::format("'{}' is not a number; a {} needs one", text, what)
                                : fmt::format("'{}' is too large for a {}", text, what);
    return p;
  }
  Parsed<T> p;
  p.value = T(value);
  return p;
}

// Sizes and counts become 64-bit integers downstream (byte counts, element counts, token
// counts), so their magnitude must stay below 2^63: a larger value would wrap to a negative
// integer instead of being refused. The sign is the caller's to check (most want > 0 and say so).
template <class T>
Parsed<T> within_int64(Parsed<T> p, std::string_view text, std::string_view what) {
  if (!p) return p;
  double v = 0.0;
  if constexpr (std::is_same_v<T, double>) {
    v = *p.value;
  } else {
    v = p.value->value();
  }
  if (std::fabs(v) >= 9223372036854775808.0) {
    p.value.reset();
    p.error = fmt::format("'{}' is too large for a {}; allowed: below 2^63 (9.2e18)", text, what);
  }
  return p;
}

std::string scaled(double v, const std::array<std::pair<double, std::string_view>, 5>& prefixes,
                   std::string_view base) {
  for (const auto& [factor, name] : prefixes) {
    if (std::fabs(v) >= factor) {
      const double x = v / factor;
      return fmt::format("{:.{}f} {}", x, x >= 100 ? 0 : (x >= 10 ? 1 : 2), name);
    }
  }
  return fmt::format("{:.2f} {}", v, base);
}

}  // namespace

Parsed<Bytes> parse_bytes(std::string_view text) {
  return within_int64(parse_with<Bytes>(text, kByteUnits, "size",
                                        "B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB, or K/M/G/T = binary", false),
                      text, "size");
}

Parsed<BytesPerSecond> parse_bandwidth(std::string_view text) {
  return parse_with<BytesPerSecond>(text, kBandwidthUnits, "bandwidth", "GB/s, TB/s, MB/s, GiB/s, Gbps, Tbps, Mbps",
                                    true);
}

Parsed<FlopsPerSecond> parse_flops_rate(std::string_view text) {
  return parse_with<FlopsPerSecond>(text, kFlopsUnits, "compute rate",
                                    "GFLOPS, TFLOPS, PFLOPS, TFLOP/s, PFLOP/s, TF, PF", true);
}

Parsed<Seconds> parse_duration(std::string_view text) {
  return parse_with<Seconds>(text, kTimeUnits, "duration", "ns, us, ms, s, min, h, d, w", true);
}

Parsed<Watts> parse_power(std::string_view text) {
  return parse_with<Watts>(text, kPowerUnits, "power", "W, kW", true);
}

Parsed<double> parse_count(std::string_view text) {
  return within_int64(
      parse_with<double>(text, kCountUnits, "count", "a number with optional K, M, B/G, T suffix", false), text,
      "count");
}

std::string format_bytes(Bytes b) {
  static constexpr std::array<std::pair<double, std::string_view>, 5> kPrefixes{{{kKi * kKi * kKi * kKi * kKi, "PiB"},
                                                                                 {kKi * kKi * kKi * kKi, "TiB"},
                                                                                 {kKi * kKi * kKi, "GiB"},
                                                                                 {kKi * kKi, "MiB"},
                                                                                 {kKi, "KiB"}}};
  return scaled(b.value(), kPrefixes, "B");
}

std::string format_bandwidth(BytesPerSecond r) {
  static constexpr std::array<std::pair<double, std::string_view>, 5> kPrefixes{
      {{1e15, "PB/s"}, {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}}};
  return scaled(r.value(), kPrefixes, "B/s");
}

std::string format_flops_rate(FlopsPerSecond r) {
  static constexpr std::array<std::pair<double, std::string_view>, 5> kPrefixes{
      {{1e18, "EFLOP/s"}, {1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1e6, "MFLOP/s"}}};
  return scaled(r.value(), kPrefixes, "FLOP/s");
}

std::string format_duration(Seconds t) {
  const double v = t.value();
  const double a = std::fabs(v);
  if (a >= 86400.0 * 2) return fmt::format("{:.1f} d", v / 86400.0);
  if (a >= 3600.0 * 2) return fmt::format("{:.1f} h", v / 3600.0);
  if (a >= 120.0) return fmt::format("{:.1f} min", v / 60.0);
  if (a >= 1.0) return fmt::format("{:.3f} s", v);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", v * 1e3);
  if (a >= 1e-6) return fmt::format("{:.2f} us", v * 1e6);
  return fmt::format("{:.0f} ns", v * 1e9);
}

}  // namespace fmsim::core
