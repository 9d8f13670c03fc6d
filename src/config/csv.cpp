// RFC 4180 CSV parsing shared by the validation readers.
#include "config/csv.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/embedded_data.hpp"
#include "core/error.hpp"

namespace fmsim::config {

std::string read_measurements(const std::string& path, const std::string& builtin, const std::string& flag,
                              std::string& name) {
  if (path.empty()) {
    name = "validation/" + builtin;
    const auto text = core::embedded_file(name);
    if (!text) throw core::InputError::flag(flag, "no built-in " + name + "; give a file");
    return std::string(*text);
  }
  name = path;
  return read_text_file(path, flag);
}

std::string read_text_file(const std::string& path, const std::string& flag) {
  const auto refuse = [&](const std::string& why) {
    const std::string message = "cannot read '" + path + "': " + why;
    if (flag.empty()) throw core::InputError(path, 0, "", message);
    throw core::InputError::flag(flag, message);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) refuse("it is a directory; give a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(std::strerror(errno));
  // Read in pieces up to the bound, so an endless source (/dev/zero, a pipe that never closes
  // its end) is an error rather than all of memory.
  std::string text;
  std::array<char, 1 << 16> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputFileBytes) refuse("larger than 1 GiB, the most an input file may hold");
  }
  if (in.bad()) refuse(std::strerror(errno));
  return text;
}

CsvTable::CsvTable(std::vector<CsvRecord> records, std::string file, std::string_view empty_message,
                   const std::map<std::string, std::string>& aliases)
    : records_(std::move(records)), file_(std::move(file)) {
  if (records_.empty()) throw core::InputError(file_, 1, "", std::string(empty_message));
  const auto& header = records_.front().cells;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto alias = aliases.find(header[i]);
    columns_[alias == aliases.end() ? header[i] : alias->second] = i;
  }
}

void CsvTable::require(const std::vector<std::string>& columns, std::string_view message) const {
  for (const auto& c : columns) {
    if (!has(c)) throw core::InputError(file_, records_.front().line, c, std::string(message));
  }
}

std::string CsvTable::cell(std::size_t row, const std::string& column) const {
  const auto it = columns_.find(column);
  const auto& cells = records_[row + 1].cells;
  return it == columns_.end() || it->second >= cells.size() ? std::string() : cells[it->second];
}

std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file) {
  std::vector<CsvRecord> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  int line = 1;
  int row_line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(cell));
      cell.clear();
      if (!(row.size() == 1 && row[0].empty())) rows.push_back(CsvRecord{row_line, std::move(row)});
      row.clear();
      ++line;
      row_line = line;
    } else {
      cell += c;
    }
  }
  if (quoted) throw core::InputError(file, row_line, "", "unterminated quoted cell");
  if (!cell.empty() || !row.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(CsvRecord{row_line, std::move(row)});
  }
  return rows;
}

}  // namespace fmsim::config
