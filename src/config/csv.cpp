// RFC 4180 CSV parsing shared by the validation readers.
#include "config/csv.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError::flag(flag, "cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  name = path;
  return ss.str();
}

std::string read_text_file(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError::flag(flag, "cannot read '" + path + "': " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
