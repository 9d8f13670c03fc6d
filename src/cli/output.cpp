// Atomic file output and whole-file input for commands.
#include "cli/output.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace fmsim::cli {

void write_file_atomically(const std::string& path, std::string_view contents, const std::string& flag) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw core::InputError::flag(flag, "cannot write '" + path + "': " + std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw core::InputError::flag(flag, "cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw core::InputError::flag(flag, "cannot write '" + path + "': " + ec.message());
  }
}

std::string read_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError::flag(flag, "cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fmsim::cli
