// Writing result files whole or not at all.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fmsim::cli {

/// The files one command writes, published together: while a batch is open on this thread (run()
/// opens one around each command), each output goes to a temporary name beside its target and is
/// renamed into place only by commit(), once the whole command has succeeded. A command that fails
/// part-way leaves nothing behind and clobbers nothing: the destructor removes what was not
/// committed. Batches nest (an in-process command inside another, as the Python API and sweep run
/// them): the innermost is the current one.
class OutputBatch {
 public:
  OutputBatch();
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;

  /// Renames every temporary to its target, in the order they were written; InputError naming the
  /// output's flag when one cannot be renamed (the others not yet renamed are removed).
  void commit();

  /// Publishes `temporary` as `path` (same folder) at commit(), or at once when no batch is open.
  static void publish(const std::string& temporary, const std::string& path, const std::string& flag);

 private:
  struct Pending {
    std::string temporary, path, flag;
  };
  std::vector<Pending> pending_;
  OutputBatch* outer_;
};

/// Writes contents to path through a temporary file and a rename, so a reader never sees a
/// half-written file; inside a command, the rename waits for the command to succeed (OutputBatch).
/// Throws core::InputError naming `flag` when the path cannot be written.
void write_file_atomically(const std::string& path, std::string_view contents, const std::string& flag);

/// The same, renamed into place at once: for files another process reads while the command still
/// runs (sweep's manifest, scripts and chunk results).
void write_file_now(const std::string& path, std::string_view contents, const std::string& flag);

/// A CLI11 check for an output-file flag: the path is not a directory and its folder exists and
/// is writable. Checked while the flags are parsed, so a bad path is an error before any work.
CLI::Validator output_file();

/// Reads a whole file; throws core::InputError naming `flag` when it cannot be read.
std::string read_file(const std::string& path, const std::string& flag);

/// Each of a resolved job's warnings on stderr as "warning: TEXT".
void print_warnings(const std::vector<std::string>& warnings);

}  // namespace fmsim::cli
