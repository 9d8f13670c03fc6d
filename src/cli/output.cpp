// Atomic file output and whole-file input for commands.
#include "cli/output.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "config/csv.hpp"
#include "core/error.hpp"

namespace fmsim::cli {

namespace {

// The open batch of this thread: a command's run() and everything it calls share one thread.
thread_local OutputBatch* current_batch = nullptr;

void remove_quietly(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& flag, const std::string& why) {
  throw core::InputError::flag(flag, "cannot write '" + path + "': " + why);
}

void rename_into_place(const std::string& temporary, const std::string& path, const std::string& flag) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    remove_quietly(temporary);
    cannot_write(path, flag, "it is a directory; give a file name");
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    remove_quietly(temporary);
    cannot_write(path, flag, ec.message());
  }
}

// Writes `contents` to a temporary name beside `path` (same file system, so the rename is atomic)
// carrying the process id and a counter, so neither two processes nor two outputs of one command
// writing the same path share it; returns that name.
std::string write_temporary(const std::string& path, std::string_view contents, const std::string& flag) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) cannot_write(path, flag, "it is a directory; give a file name");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) cannot_write(path, flag, std::strerror(errno));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  if (!out) {
    const int error = errno;
    remove_quietly(tmp);
    cannot_write(path, flag, error != 0 ? std::strerror(error) : "the write failed");
  }
  return tmp;
}

}  // namespace

OutputBatch::OutputBatch() : outer_(current_batch) { current_batch = this; }

OutputBatch::~OutputBatch() {
  for (const auto& p : pending_) remove_quietly(p.temporary);
  current_batch = outer_;
}

void OutputBatch::commit() {
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  for (std::size_t i = 0; i < pending.size(); ++i) {
    try {
      rename_into_place(pending[i].temporary, pending[i].path, pending[i].flag);
    } catch (...) {
      for (std::size_t k = i + 1; k < pending.size(); ++k) remove_quietly(pending[k].temporary);
      throw;
    }
  }
}

void OutputBatch::publish(const std::string& temporary, const std::string& path, const std::string& flag) {
  if (current_batch == nullptr) return rename_into_place(temporary, path, flag);
  // A second write of one path in a command replaces the first.
  auto& pending = current_batch->pending_;
  for (auto& p : pending) {
    if (p.path == path) {
      remove_quietly(p.temporary);
      p.temporary = temporary;
      return;
    }
  }
  pending.push_back({temporary, path, flag});
}

void write_file_atomically(const std::string& path, std::string_view contents, const std::string& flag) {
  OutputBatch::publish(write_temporary(path, contents, flag), path, flag);
}

void write_file_now(const std::string& path, std::string_view contents, const std::string& flag) {
  rename_into_place(write_temporary(path, contents, flag), path, flag);
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
