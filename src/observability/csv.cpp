// RFC 4180 CSV writer.
#include "observability/csv.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace fmsim::observability {
namespace {

void append_field(std::string& out, const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) {
    out += field;
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void append_line(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out.push_back(',');
    append_field(out, fields[i]);
  }
  out += "\r\n";
}

}  // namespace

std::string to_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  append_line(out, header);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    FMSIM_CHECK(rows[r].size() == header.size(),
                fmt::format("csv row {} has {} fields, the header has {}", r, rows[r].size(), header.size()));
    append_line(out, rows[r]);
  }
  return out;
}

std::string trace_to_csv(const std::vector<engine::TraceEvent>& events) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(events.size());
  for (const auto& e : events) {
    std::string args;
    for (std::size_t i = 0; i < e.args.size(); ++i) {
      if (i > 0) args += "; ";
      args += e.args[i].first + "=" + e.args[i].second;
    }
    rows.push_back({e.process, e.thread, e.name, e.category, fmt::format("{}", e.start.ns()),
                    fmt::format("{}", e.duration.ns()), std::move(args)});
  }
  return to_csv({"process", "thread", "name", "category", "start_ns", "duration_ns", "args"}, rows);
}

}  // namespace fmsim::observability
