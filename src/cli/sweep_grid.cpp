// Sweep grid files: parsing, point expansion, records and the gathered CSV.
#include "cli/sweep_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "config/yaml_reader.hpp"
#include "core/error.hpp"

namespace fmsim::cli {
namespace {

std::string flag_name(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// Scalar text of a fixed value or an axis entry; YAML true/false become flag switches.
std::string scalar(const config::YamlNode& node) {
  if (!node.is_scalar()) node.fail("expected a value (a string, a number, true or false)");
  return node.raw().Scalar();
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

void append_flag(std::vector<std::string>& words, const std::string& name, const std::string& value) {
  if (value == "false") return;
  words.push_back("--" + name);
  if (value != "true") words.push_back(value);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string json_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

const nlohmann::json* at_path(const nlohmann::json& root, const std::string& dotted) {
  const nlohmann::json* node = &root;
  std::size_t from = 0;
  while (from <= dotted.size()) {
    const std::size_t dot = std::min(dotted.find('.', from), dotted.size());
    const std::string key = dotted.substr(from, dot - from);
    if (node->is_array()) {  // rows.0.time_us: an index into a list
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (ec != std::errc() || end != key.data() + key.size() || index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else {
      return nullptr;
    }
    from = dot + 1;
  }
  return node;
}

}  // namespace

SweepGrid load_sweep_grid(const std::string& path, std::int64_t chunk_override) {
  const auto doc = config::load_yaml_file(path, "GRID");
  const auto root = doc.node();
  root.expect_map("a sweep (kind: Sweep, command, grid)");
  root.check_keys({"kind", "command", "fixed", "grid", "columns", "chunk"});
  if (const auto k = root.find("kind"); k && k->as_string() != "Sweep") k->fail("expected kind: Sweep");
  SweepGrid g;
  g.file = path;
  g.command = root["command"].as_string();
  if (g.command == "sweep" || g.command.rfind("sweep ", 0) == 0) root["command"].fail("a sweep cannot run sweeps");
  std::set<std::string> seen;
  if (const auto fixed = root.find("fixed")) {
    for (const auto& [key, value] : fixed->entries()) {
      if (key == "json") value.fail("--json is added to every point; remove it");
      g.fixed.emplace_back(flag_name(key), scalar(value));
      seen.insert(flag_name(key));
    }
  }
  const auto grid = root["grid"];
  for (const auto& [key, values] : grid.entries()) {
    if (seen.count(flag_name(key)) != 0) values.fail("'" + key + "' is both fixed and swept; keep one");
    std::vector<std::string> list;
    if (values.is_sequence()) {
      for (const auto& v : values.items()) list.push_back(scalar(v));
    } else {
      list.push_back(scalar(values));
    }
    if (list.empty()) values.fail("an empty list makes an empty sweep; give at least one value");
    if (g.points > kMaxSweepPoints / static_cast<std::int64_t>(list.size())) {
      values.fail(fmt::format("the grid has more than {} points (2^40); split the sweep", kMaxSweepPoints));
    }
    g.points *= static_cast<std::int64_t>(list.size());
    g.axes.emplace_back(flag_name(key), std::move(list));
    seen.insert(flag_name(key));
  }
  if (g.axes.empty()) grid.fail("give at least one flag to vary, e.g. seq: [4096, 8192]");
  if (const auto cols = root.find("columns")) g.columns = cols->as_string_list();
  // Default chunk: about 64 tasks for a small sweep, never more than 1000 tasks (Slurm's
  // default MaxArraySize is 1001) and at most 1000 points per task below a million points.
  g.chunk = std::max((g.points + 999) / 1000, std::min<std::int64_t>(1000, (g.points + 63) / 64));
  if (const auto c = root.find("chunk")) {
    g.chunk = c->as_int(config::Bound::Positive);
  }
  if (chunk_override > 0) g.chunk = chunk_override;
  g.chunks = (g.points + g.chunk - 1) / g.chunk;

  std::ostringstream canon;
  canon << "fmsim-sweep-v1\n" << g.command << "\n";
  for (const auto& [k, v] : g.fixed) canon << "F " << k << "=" << v << "\n";
  for (const auto& [k, vs] : g.axes) {
    canon << "A " << k;
    for (const auto& v : vs) canon << "\t" << v;
    canon << "\n";
  }
  for (const auto& c : g.columns) canon << "C " << c << "\n";
  canon << "chunk " << g.chunk << "\n";
  g.digest = fnv1a_hex(canon.str());
  return g;
}

std::vector<std::pair<std::string, std::string>> SweepGrid::point_params(std::int64_t i) const {
  std::vector<std::pair<std::string, std::string>> params(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    const auto n = static_cast<std::int64_t>(axes[a].second.size());
    params[a] = {axes[a].first, axes[a].second[static_cast<std::size_t>(i % n)]};
    i /= n;
  }
  return params;
}

std::vector<std::string> SweepGrid::point_args(std::int64_t i) const {
  std::vector<std::string> words;
  for (const auto& [k, v] : fixed) append_flag(words, k, v);
  for (const auto& [k, v] : point_params(i)) append_flag(words, k, v);
  words.emplace_back("--json");
  return words;
}

nlohmann::json point_record(const SweepGrid& grid, std::int64_t i, int status, const std::string& out,
                            const std::string& err) {
  nlohmann::json rec;
  rec["point"] = i;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : grid.point_params(i)) params[k] = v;
  rec["params"] = std::move(params);
  rec["status"] = status;
  const auto parsed = nlohmann::json::parse(out, nullptr, false);
  if (status <= 1 && !parsed.is_discarded()) {
    if (grid.columns.empty()) {
      rec["result"] = parsed;
    } else {
      nlohmann::json values = nlohmann::json::object();
      for (const auto& c : grid.columns) {
        const auto* v = at_path(parsed, c);
        values[c] = v != nullptr ? *v : nlohmann::json();
      }
      rec["values"] = std::move(values);
    }
  } else {
    std::string message = err;
    if (message.rfind("fmsim: error: ", 0) == 0) message.erase(0, 14);
    message = message.substr(0, message.find('\n'));
    rec["error"] = message.empty() ? fmt::format("exit status {}", status) : message;
  }
  return rec;
}

std::string records_to_csv(const SweepGrid& grid, const std::vector<std::string>& jsonl_chunks) {
  std::vector<std::string> columns = grid.columns;
  bool columns_known = !columns.empty();
  std::ostringstream rows;
  for (const auto& text : jsonl_chunks) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const auto rec = nlohmann::json::parse(line);
      const nlohmann::json* values = rec.contains("values") ? &rec["values"] : nullptr;
      const nlohmann::json* result = rec.contains("result") ? &rec["result"] : nullptr;
      if (!columns_known && result != nullptr && result->is_object()) {
        for (const auto& [k, v] : result->items()) {
          if (v.is_primitive()) columns.push_back(k);
        }
        columns_known = true;
      }
      rows << rec["point"].get<std::int64_t>();
      for (const auto& axis : grid.axes) rows << "," << csv_cell(rec["params"].value(axis.first, ""));
      rows << "," << rec["status"].get<int>();
      for (const auto& c : columns) {
        const nlohmann::json* v = nullptr;
        if (values != nullptr && values->contains(c)) v = &(*values)[c];
        if (result != nullptr) v = at_path(*result, c);
        rows << "," << (v != nullptr ? csv_cell(json_cell(*v)) : "");
      }
      rows << "," << csv_cell(rec.value("error", "")) << "\n";
    }
  }
  std::ostringstream csv;
  csv << "point";
  for (const auto& [k, vs] : grid.axes) csv << "," << csv_cell(k);
  csv << ",status";
  for (const auto& c : columns) csv << "," << csv_cell(c);
  csv << ",error\n" << rows.str();
  return csv.str();
}

}  // namespace fmsim::cli
