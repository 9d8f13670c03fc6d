// RFC 4180 CSV parsing (quoted cells, doubled quotes, newlines inside quotes, CRLF).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
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

/// A CSV table whose first record is a header naming its columns; the cells of the data rows are
/// read by column name. What every reader of a measurements CSV shares.
class CsvTable {
 public:
  /// `records` as parse_csv returns them (read from `file`). A header cell named by a key of
  /// `aliases` answers to the alias's value instead. core::InputError at file:1 with
  /// `empty_message` when there is no header.
  CsvTable(std::vector<CsvRecord> records, std::string file, std::string_view empty_message,
           const std::map<std::string, std::string>& aliases = {});

  /// core::InputError at the header's line, naming the first of `columns` the header lacks.
  void require(const std::vector<std::string>& columns, std::string_view message) const;

  [[nodiscard]] bool has(const std::string& column) const { return columns_.count(column) > 0; }
  /// Data rows (the header excluded).
  [[nodiscard]] std::size_t rows() const { return records_.size() - 1; }
  /// The 1-based line data row `row` (0-based) starts on.
  [[nodiscard]] int line(std::size_t row) const { return records_[row + 1].line; }
  /// The cell of data row `row` in `column`; empty when the header has no such column or the row
  /// is shorter.
  [[nodiscard]] std::string cell(std::size_t row, const std::string& column) const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::vector<CsvRecord> records_;
  std::string file_;
  std::map<std::string, std::size_t> columns_;
};

/// The text of a measurements file: `path` when given (an unreadable file is a core::InputError
/// naming `flag`), else the copy of validation/<builtin> compiled into the binary. `name` is set
/// to what error messages should call the file.
std::string read_measurements(const std::string& path, const std::string& builtin, const std::string& flag,
                              std::string& name);

/// The most an input file may hold.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{1} << 30;

/// The whole text of `path`; core::InputError naming `flag` ("cannot read 'x': reason"; `path`
/// itself as the error's file when `flag` is empty) when it cannot be read, is a directory, or
/// holds more than kMaxInputFileBytes.
std::string read_text_file(const std::string& path, const std::string& flag);

}  // namespace fmsim::config
