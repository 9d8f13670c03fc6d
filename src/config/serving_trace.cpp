// Request trace parsing (CSV or JSON Lines).
#include "config/serving_trace.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "config/csv.hpp"
#include "config/json_depth.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

const std::map<std::string, std::string>& serving_trace_aliases() {
  static const std::map<std::string, std::string> m{
      {"arrival_s", "arrival_s"},         {"arrival", "arrival_s"},         {"timestamp", "arrival_s"},
      {"input_tokens", "input_tokens"},   {"input_length", "input_tokens"}, {"output_tokens", "output_tokens"},
      {"output_length", "output_tokens"}, {"prefix_id", "prefix_id"},       {"prefix_tokens", "prefix_tokens"}};
  return m;
}

double parse_number(const std::string& text, const std::string& file, int line, const std::string& field) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw core::InputError(file, line, field, fmt::format("'{}' is not a number", text));
  }
}

serving::TraceRequest make(const std::map<std::string, std::string>& cells, const std::string& file, int line) {
  serving::TraceRequest r;
  for (const char* need : {"arrival_s", "input_tokens", "output_tokens"}) {
    if (!cells.count(need) || cells.at(need).empty()) {
      throw core::InputError(file, line, need, "missing; a request needs arrival_s, input_tokens and output_tokens");
    }
  }
  r.arrival_s = parse_number(cells.at("arrival_s"), file, line, "arrival_s");
  // Simulated time is integer nanoseconds; a trace spans hours, and every simulated second of it
  // may become a sample of the time series.
  constexpr double kTenYears = 10 * 365.25 * 86400;
  if (r.arrival_s < 0 || r.arrival_s > kTenYears)
    throw core::InputError(file, line, "arrival_s",
                           fmt::format("{:g} s is out of range; allowed: 0 to 10 years (3.16e8 s)", r.arrival_s));
  for (auto [key, field] : {std::pair{"input_tokens", &serving::TraceRequest::input_tokens},
                            std::pair{"output_tokens", &serving::TraceRequest::output_tokens},
                            std::pair{"prefix_tokens", &serving::TraceRequest::prefix_tokens}}) {
    if (!cells.count(key) || cells.at(key).empty()) continue;
    const double v = parse_number(cells.at(key), file, line, key);
    if (v != std::floor(v) || v < (std::string(key) == "prefix_tokens" ? 0 : 1) || v > 1e8) {
      throw core::InputError(file, line, key,
                             fmt::format("'{}' must be a whole number of tokens, at least 1", cells.at(key)));
    }
    r.*field = static_cast<std::int64_t>(v);
  }
  if (cells.count("prefix_id")) r.prefix_id = cells.at("prefix_id");
  return r;
}

}  // namespace

std::vector<serving::TraceRequest> parse_request_trace(const std::string& text, const std::string& file) {
  std::vector<serving::TraceRequest> out;
  const bool jsonl = file.ends_with(".jsonl") || file.ends_with(".json");
  if (jsonl) {
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      check_json_depth(line, file, n);
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception& e) {
        throw core::InputError(file, n, "", fmt::format("malformed JSON: {}", e.what()));
      }
      if (!j.is_object()) throw core::InputError(file, n, "", "each line must be a JSON object");
      std::map<std::string, std::string> cells;
      for (const auto& [k, v] : j.items()) {
        auto it = serving_trace_aliases().find(k);
        if (it == serving_trace_aliases().end()) continue;
        cells[it->second] = v.is_string() ? v.get<std::string>() : v.dump();
      }
      out.push_back(make(cells, file, n));
    }
  } else {
    const auto records = parse_csv(text, file);
    if (records.empty()) throw core::InputError(file, 1, "", "empty trace: expected a header row");
    std::vector<std::string> columns;
    for (const auto& h : records[0].cells) {
      auto it = serving_trace_aliases().find(h);
      columns.push_back(it == serving_trace_aliases().end() ? std::string() : it->second);
    }
    for (std::size_t i = 1; i < records.size(); ++i) {
      std::map<std::string, std::string> cells;
      for (std::size_t c = 0; c < records[i].cells.size() && c < columns.size(); ++c) {
        if (!columns[c].empty()) cells[columns[c]] = records[i].cells[c];
      }
      out.push_back(make(cells, file, records[i].line));
    }
  }
  if (out.empty()) throw core::InputError(file, 1, "", "no requests in the trace");
  return out;
}

}  // namespace fmsim::config
