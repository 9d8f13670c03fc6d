// InputError formatting and the failure path of FMSIM_CHECK.
#include "core/error.hpp"

#include <fmt/format.h>

namespace fmsim::core {
namespace {

std::string compose(const std::string& file, int line, const std::string& field, const std::string& message) {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += fmt::format(":{}", line);
    out += ": ";
  }
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

}  // namespace

InputError::InputError(std::string file, int line, std::string field, std::string message)
    : std::runtime_error(compose(file, line, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(std::move(message)) {}

InputError InputError::flag(std::string flag, std::string message) {
  return InputError("", 0, std::move(flag), std::move(message));
}

void check_failed(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError(fmt::format("internal error: {} ({} failed at {}:{})", message, condition, file, line));
}

}  // namespace fmsim::core
