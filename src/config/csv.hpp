// RFC 4180 CSV parsing (quoted cells, doubled quotes, newlines inside quotes, CRLF).
#pragma once

#include <string>
#include <vector>

namespace fmsim::config {

/// One record and the 1-based line it starts on.
struct CsvRecord {
  int line = 0;
  std::vector<std::string> cells;
};

/// Splits CSV text into records; blank lines are skipped. An unterminated quote is a
/// core::InputError naming `file` and the line the record started on.
std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file);

/// The text of a measurements file: `path` when given (an unreadable file is a core::InputError
/// naming `flag`), else the copy of validation/<builtin> compiled into the binary. `name` is set
/// to what error messages should call the file.
std::string read_measurements(const std::string& path, const std::string& builtin, const std::string& flag,
                              std::string& name);

/// The whole text of `path`; core::InputError naming `flag` ("cannot read 'x': reason") otherwise.
std::string read_text_file(const std::string& path, const std::string& flag);

}  // namespace fmsim::config
