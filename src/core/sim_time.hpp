// Integer simulated time in nanoseconds, so event ordering is exact and runs are reproducible.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>

#include "core/units.hpp"

namespace fmsim::core {

/// A point or span of simulated time, an integer count of nanoseconds (range +-292 years).
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ns(std::int64_t ns) { return SimTime(ns); }
  /// Rounds to the nearest nanosecond.
  static SimTime from_seconds(Seconds s) { return SimTime(static_cast<std::int64_t>(std::llround(s.value() * 1e9))); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(INT64_MAX); }

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }
  [[nodiscard]] constexpr Seconds to_seconds() const { return Seconds(static_cast<double>(ns_) * 1e-9); }

  friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime(a.ns_ + b.ns_); }
  friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime(a.ns_ - b.ns_); }
  constexpr SimTime& operator+=(SimTime o) {
    ns_ += o.ns_;
    return *this;
  }
  friend constexpr auto operator<=>(SimTime, SimTime) = default;
  friend constexpr bool operator==(SimTime, SimTime) = default;

 private:
  constexpr explicit SimTime(std::int64_t ns) : ns_(ns) {}
  std::int64_t ns_ = 0;
};

}  // namespace fmsim::core
