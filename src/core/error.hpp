// Errors: InputError for bad input (file, line, field), FMSIM_CHECK for bugs.
#pragma once

#include <stdexcept>
#include <string>

namespace fmsim::core {

/// Bad user input: a file, flag or field that is malformed or out of range.
/// Raised only at the edges (config/, cli/) and caught once in main, which exits with status 2.
/// what() reads `file:line: field: message`, omitting the parts that are empty or zero.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string field, std::string message);
  /// An error about a command-line flag or a value with no file behind it.
  static InputError flag(std::string flag, std::string message);

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] int line() const { return line_; }
  [[nodiscard]] const std::string& field() const { return field_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
};

/// A violated internal invariant: a bug in fmsim, never the user's fault.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void check_failed(const char* condition, const std::string& message, const char* file, int line);

}  // namespace fmsim::core

/// Checks an invariant in every build type; throws fmsim::core::InternalError when it fails.
#define FMSIM_CHECK(cond, message)                                                  \
  do {                                                                              \
    if (!(cond)) ::fmsim::core::check_failed(#cond, (message), __FILE__, __LINE__); \
  } while (false)
