// Writing result files whole or not at all.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fmsim::cli {

/// Writes contents to path through a temporary file and a rename, so a reader never sees a
/// half-written file. Throws core::InputError naming `flag` when the path cannot be written.
void write_file_atomically(const std::string& path, std::string_view contents, const std::string& flag);

/// A CLI11 check for an output-file flag: the path is not a directory and its folder exists and
/// is writable. Checked while the flags are parsed, so a bad path is an error before any work.
CLI::Validator output_file();

/// Reads a whole file; throws core::InputError naming `flag` when it cannot be read.
std::string read_file(const std::string& path, const std::string& flag);

/// Each of a resolved job's warnings on stderr as "warning: TEXT".
void print_warnings(const std::vector<std::string>& warnings);

}  // namespace fmsim::cli
