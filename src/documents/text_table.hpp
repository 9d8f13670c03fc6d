// Aligned plain-text tables for command output.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace fmsim::documents {

/// Bytes in a GiB, the unit memory is printed in.
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// Columns padded to their widest cell; numeric columns right-aligned. A row may carry a note
/// printed on its own line below it.
class TextTable {
 public:
  struct Column {
    std::string header;
    bool right = false;
  };
  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add(std::vector<std::string> row, std::string note = "") {
    FMSIM_CHECK(row.size() == columns_.size(), "table row has the wrong number of cells");
    rows_.push_back({std::move(row), std::move(note)});
  }
  void print(std::ostream& out, const std::string& indent = "") const {
    std::vector<std::size_t> width(columns_.size());
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      width[c] = columns_[c].header.size();
      for (const auto& r : rows_) width[c] = std::max(width[c], r.cells[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = indent;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (c) s += "  ";
        s += columns_[c].right ? fmt::format("{:>{}}", cells[c], width[c]) : fmt::format("{:<{}}", cells[c], width[c]);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out << s << "\n";
    };
    std::vector<std::string> headers;
    for (const auto& c : columns_) headers.push_back(c.header);
    line(headers);
    for (const auto& r : rows_) {
      line(r.cells);
      if (!r.note.empty()) out << indent << "    " << r.note << "\n";
    }
  }

  /// The same table as GitHub-flavoured Markdown (notes become their own one-cell rows).
  void print_markdown(std::ostream& out) const {
    auto line = [&](const std::vector<std::string>& cells) {
      out << "|";
      for (const auto& c : cells) {
        std::string e;  // a pipe inside a cell would end it
        for (const char ch : c) e += ch == '|' ? std::string("\\|") : std::string(1, ch);
        out << " " << e << " |";
      }
      out << "\n";
    };
    std::vector<std::string> headers, rule;
    for (const auto& c : columns_) {
      headers.push_back(c.header);
      rule.push_back(c.right ? "---:" : "---");
    }
    line(headers);
    line(rule);
    for (const auto& r : rows_) line(r.cells);
  }

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string note;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace fmsim::documents
