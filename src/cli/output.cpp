// Atomic file output and whole-file input for commands.
#include "cli/output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "config/csv.hpp"
#include "core/error.hpp"

namespace fmsim::cli {

void write_file_atomically(const std::string& path, std::string_view contents, const std::string& flag) {
  // The temporary file sits beside the target (same file system, so the rename is atomic) and
  // carries the process id, so two processes writing the same path never share it.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
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

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        namespace fs = std::filesystem;
        if (path.empty()) return "an empty path; give a file name";
        std::error_code ec;
        if (fs::is_directory(path, ec)) return "'" + path + "' is a directory; give a file name";
        fs::path dir = fs::path(path).parent_path();
        if (dir.empty()) dir = ".";
        if (!fs::is_directory(dir, ec))
          return "cannot write '" + path + "': folder '" + dir.string() + "' does not exist";
        if (::access(dir.c_str(), W_OK) != 0) {
          return "cannot write '" + path + "': folder '" + dir.string() + "' is not writable";
        }
        return {};
      },
      "FILE", "OutputFile");
}

std::string read_file(const std::string& path, const std::string& flag) { return config::read_text_file(path, flag); }

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
}

}  // namespace fmsim::cli
