// Range checks for numeric flags with messages a person can read: "--gbs: must be a whole number
// from 1 to 9223372036854775807 (2^63-1), got -1" (exit 2). CLI11's own Range/PositiveNumber print
// their double bounds with std::to_string, a 309-digit number for the largest double.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>

namespace fmsim::cli {

/// "2147483647 (2^31-1)" for the usual type limits, the number alone otherwise.
std::string readable_bound(long long v);

/// A whole number from lo to hi (both inclusive); rejects fractions, exponents and text.
CLI::Validator whole_number(long long lo, long long hi);

/// A finite real number from lo to hi (both inclusive).
CLI::Validator real_range(double lo, double hi);

/// A finite real number greater than zero.
CLI::Validator positive_real();

/// 1 to the largest value of the flag's own integer type, or a real number > 0.
template <class T>
CLI::Validator positive(const T& /*field*/) {
  if constexpr (std::is_integral_v<T>) {
    return whole_number(1, static_cast<long long>(std::numeric_limits<T>::max()));
  } else {
    return positive_real();
  }
}

/// A value the reader `parse` accepts (it throws core::InputError otherwise, whose message becomes
/// the flag's error): checks a flag when it is given, before any work, whether or not the option
/// that uses it is given too (`--metrics-resolution nan` without --metrics-out was accepted).
CLI::Validator parsed_by(std::function<void(const std::string&)> parse, std::string description);

/// Adds a finite-number check to every real-valued option (CLI11 type FLOAT) of `app` and of its
/// subcommands, so no command accepts nan or inf ("--rate: must be a finite number, got nan"); a
/// flag's own range check, where it has one, still applies.
void require_finite_reals(CLI::App& app);

/// Did-you-mean for the words of a command line CLI11 could not place: "unknown subcommand 'traim';
/// did you mean train?" (the subcommands of the command it is under), "unknown flag '--tpp' of
/// `fmsim train`; did you mean --tp?" (the flags of that command and of the ones above it). The
/// first such word of argv; "" when every word is a known subcommand, flag or value.
std::string unknown_word_message(const CLI::App& app, int argc, const char* const* argv);

/// CLI11's parse error message made readable where it is about a number: "Could not convert:
/// --tp = 1e30" becomes "--tp: must be a whole number, got 1e30"; the flag's type name (INT, UINT,
/// FLOAT) is looked up in the parsed command. Other messages pass unchanged.
std::string readable_parse_error(const std::string& what, const CLI::App& app);

}  // namespace fmsim::cli
