// CSV reading for the collective validation table.
#include "config/collectives_csv.hpp"

#include "config/csv.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace fmsim::config {

namespace {

std::optional<double> csv_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<CollectiveMeasurement> parse_collectives_csv(const std::string& text, const std::string& file) {
  const CsvTable table(parse_csv(text, file), file, "empty file: expected a header row");
  table.require({"id", "instance_type", "nodes", "gpus", "collective", "algorithm", "bytes", "busbw_GBps", "time_us"},
                "missing column (the header must name it)");
  std::vector<CollectiveMeasurement> rows;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const int line_no = table.line(r);
    auto cell = [&](const std::string& name) { return table.cell(r, name); };
    auto positive_int = [&](const std::string& name) {
      const auto v = csv_number(cell(name));
      // The range test first: converting a double beyond int's range is undefined behaviour.
      if (!v || !(*v >= 1 && *v <= std::numeric_limits<int>::max()) || *v != static_cast<int>(*v)) {
        throw core::InputError(file, line_no, name, fmt::format("'{}' is not a positive whole number", cell(name)));
      }
      return static_cast<int>(*v);
    };
    auto optional_number = [&](const std::string& name) -> std::optional<double> {
      const std::string s = cell(name);
      if (s.empty()) return std::nullopt;
      const auto v = csv_number(s);
      if (!v || *v <= 0.0) throw core::InputError(file, line_no, name, fmt::format("'{}' is not a positive number", s));
      return v;
    };
    CollectiveMeasurement m;
    m.line = line_no;
    m.id = cell("id");
    if (m.id.empty()) throw core::InputError(file, line_no, "id", "empty row id");
    m.system = cell("system");
    m.instance_type = cell("instance_type");
    m.nodes = positive_int("nodes");
    m.gpus = positive_int("gpus");
    m.collective = cell("collective");
    m.algorithm = cell("algorithm");
    m.bytes_text = cell("bytes");
    m.bytes = csv_number(m.bytes_text);
    if (m.bytes_text.empty()) throw core::InputError(file, line_no, "bytes", "empty; give a byte count or 'large'");
    m.busbw_gbps = optional_number("busbw_GBps");
    m.time_us = optional_number("time_us");
    m.source = cell("source");
    m.notes = cell("notes");
    rows.push_back(std::move(m));
  }
  return rows;
}

std::vector<CollectiveMeasurement> read_collectives_csv(const std::string& path, const std::string& flag) {
  std::string name;
  const std::string text = read_measurements(path, "collectives.csv", flag, name);
  return parse_collectives_csv(text, name);
}

}  // namespace fmsim::config
