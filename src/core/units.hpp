// Strong unit types (bytes, seconds, FLOPs, FLOP/s, bytes/s) and their parsing from text.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace fmsim::core {

/// A quantity of one physical dimension, stored as a double in SI base units
/// (bytes, seconds, FLOPs, bytes/s, FLOP/s). Only dimensionally meaningful
/// arithmetic compiles: same-kind addition, scaling by a number, and the
/// cross-kind operators declared below.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  /// The value in SI base units.
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr Quantity& operator*=(double k) {
    value_ *= k;
    return *this;
  }
  constexpr Quantity& operator/=(double k) {
    value_ /= k;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.value_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.value_ / k); }
  /// Ratio of two quantities of the same kind is a plain number.
  friend constexpr double operator/(Quantity a, Quantity b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(Quantity, Quantity) = default;
  friend constexpr bool operator==(Quantity, Quantity) = default;

 private:
  double value_ = 0.0;
};

struct BytesTag {};
struct SecondsTag {};
struct FlopsTag {};
struct BytesPerSecondTag {};
struct FlopsPerSecondTag {};
struct WattsTag {};
struct PerSecondTag {};

using Bytes = Quantity<BytesTag>;
using Seconds = Quantity<SecondsTag>;
using Flops = Quantity<FlopsTag>;
using BytesPerSecond = Quantity<BytesPerSecondTag>;
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;
using Watts = Quantity<WattsTag>;
/// A count per second: tokens/s, requests/s.
using PerSecond = Quantity<PerSecondTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.value() / t.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Bytes operator*(Seconds t, BytesPerSecond r) { return r * t; }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr FlopsPerSecond operator/(Flops f, Seconds t) { return FlopsPerSecond(f.value() / t.value()); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.value() * t.value()); }

// Factories. Decimal prefixes are powers of 10, binary prefixes powers of 2.
constexpr Bytes bytes(double v) { return Bytes(v); }
constexpr Bytes kib(double v) { return Bytes(v * 1024.0); }
constexpr Bytes mib(double v) { return Bytes(v * 1024.0 * 1024.0); }
constexpr Bytes gib(double v) { return Bytes(v * 1024.0 * 1024.0 * 1024.0); }
constexpr Bytes tib(double v) { return Bytes(v * 1024.0 * 1024.0 * 1024.0 * 1024.0); }
constexpr Bytes gb(double v) { return Bytes(v * 1e9); }
constexpr Bytes tb(double v) { return Bytes(v * 1e12); }
constexpr Seconds seconds(double v) { return Seconds(v); }
constexpr Seconds ms(double v) { return Seconds(v * 1e-3); }
constexpr Seconds us(double v) { return Seconds(v * 1e-6); }
constexpr Seconds ns(double v) { return Seconds(v * 1e-9); }
constexpr Seconds minutes(double v) { return Seconds(v * 60.0); }
constexpr Seconds hours(double v) { return Seconds(v * 3600.0); }
constexpr Seconds days(double v) { return Seconds(v * 86400.0); }
constexpr BytesPerSecond gb_per_s(double v) { return BytesPerSecond(v * 1e9); }
constexpr BytesPerSecond tb_per_s(double v) { return BytesPerSecond(v * 1e12); }
constexpr BytesPerSecond gbps(double v) { return BytesPerSecond(v * 1e9 / 8.0); }
constexpr FlopsPerSecond tflops(double v) { return FlopsPerSecond(v * 1e12); }
constexpr FlopsPerSecond pflops(double v) { return FlopsPerSecond(v * 1e15); }
constexpr Flops flops(double v) { return Flops(v); }
constexpr Watts watts(double v) { return Watts(v); }

/// Result of parsing a quantity from text: a value, or the reason it failed.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;  ///< empty on success; says what was wrong and what is allowed
  explicit operator bool() const { return value.has_value(); }
};

/// "80 GiB", "141 GB", "512MiB", "2.3 TB", "8" (plain bytes), "1.5e9 B". Units: B, KB, MB, GB,
/// TB, PB (decimal), KiB, MiB, GiB, TiB, PiB (binary), and the nccl-tests shorthand K, M, G, T
/// (binary, as in `-e 16G`).
Parsed<Bytes> parse_bytes(std::string_view text);
/// "400 GB/s", "3200 Gbps", "3.2 Tbps", "900 GB/s", "2.7 GB/s", "250 MB/s", "12.5 GiB/s".
Parsed<BytesPerSecond> parse_bandwidth(std::string_view text);
/// "989.4 TFLOPS", "2.25 PFLOPS", "19.5 TFLOP/s", "1e15 FLOPS".
Parsed<FlopsPerSecond> parse_flops_rate(std::string_view text);
/// "2.5 us", "10 s", "5 min", "3.1 h", "54 d", "300 ms", "100 ns".
Parsed<Seconds> parse_duration(std::string_view text);
/// "700 W", "1.2 kW".
Parsed<Watts> parse_power(std::string_view text);
/// "15T", "1.5e12", "300B", "2M" tokens or other plain counts with SI suffixes K, M, B/G, T.
Parsed<double> parse_count(std::string_view text);

/// Human-readable renderings with a sensible prefix: "80 GiB", "400 GB/s", "2.25 PFLOP/s", "1.20 ms".
std::string format_bytes(Bytes b);
std::string format_bandwidth(BytesPerSecond r);
std::string format_flops_rate(FlopsPerSecond r);
std::string format_duration(Seconds t);

}  // namespace fmsim::core
