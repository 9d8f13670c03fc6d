// YAML nodes that know their file, line and field path, and their checked conversions.
#include "config/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "config/csv.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

// Parses a whole string as a finite double; nullopt otherwise ("nan", "1e999", "3 GB").
std::optional<double> to_number(std::string_view text) {
  text = core::trim_blanks(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::string_view bound_text(Bound bound) {
  switch (bound) {
    case Bound::Any: return "";
    case Bound::NonNegative: return "zero or more";
    case Bound::Positive: return "greater than zero";
  }
  return "";
}

bool within(double v, Bound bound) {
  switch (bound) {
    case Bound::Any: return true;
    case Bound::NonNegative: return v >= 0.0;
    case Bound::Positive: return v > 0.0;
  }
  return true;
}

std::string kind_of(const YAML::Node& n) {
  if (!n.IsDefined()) return "nothing";
  if (n.IsNull()) return "an empty value";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  return "'" + n.Scalar() + "'";
}

// Nodes of one document counted with aliases expanded: a "billion laughs" document (aliases of
// aliases) names 10^9 nodes in a few hundred bytes.
constexpr std::size_t kMaxYamlNodes = 1'000'000;

// Where the quoted scalar opening at `open` ends: yaml-cpp takes a quote left open at the end of
// the file as running to the end, so `model: "llama3.1-8b` was read as a value.
bool quote_closes(std::string_view text, std::size_t open) {
  const char quote = text[open];
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is a quote inside a single-quoted scalar
        continue;
      }
      return true;
    }
  }
  return false;
}

// Refuses what yaml-cpp lets through: a quoted scalar never closed, and aliases that expand a
// small file into gigabytes (scalar bytes with aliases expanded are bounded by twice the text).
// Iterative, and bounded by kMaxYamlNodes visits.
void check_document(const YAML::Node& root, std::string_view text, const std::string& file) {
  const std::size_t max_bytes = 2 * text.size() + (std::size_t{1} << 20);
  std::size_t nodes = 0;
  std::size_t bytes = 0;
  std::set<int> quotes_checked;
  std::vector<YAML::Node> stack{root};
  while (!stack.empty()) {
    const YAML::Node n = stack.back();
    stack.pop_back();
    if (!n.IsDefined()) continue;
    const int line = n.Mark().line >= 0 ? n.Mark().line + 1 : 0;
    if (++nodes > kMaxYamlNodes)
      throw core::InputError(
          file, line, "",
          fmt::format("more than {} values with aliases expanded; allowed: at most {}", kMaxYamlNodes, kMaxYamlNodes));
    if (n.IsScalar()) {
      bytes += n.Scalar().size();
      if (bytes > max_bytes)
        throw core::InputError(file, line, "",
                               fmt::format("aliases expand the document past {} bytes (twice its size); allowed: "
                                           "at most that",
                                           max_bytes));
      const int pos = n.Mark().pos;
      if (n.Tag() == "!" && pos >= 0 && static_cast<std::size_t>(pos) < text.size() &&
          (text[static_cast<std::size_t>(pos)] == '"' || text[static_cast<std::size_t>(pos)] == '\'') &&
          quotes_checked.insert(pos).second && !quote_closes(text, static_cast<std::size_t>(pos)))
        throw core::InputError(file, line, "",
                               fmt::format("malformed YAML: the quote ({}) opened here is never closed",
                                           text[static_cast<std::size_t>(pos)]));
    } else if (n.IsSequence()) {
      for (const auto& child : n) stack.push_back(child);
    } else if (n.IsMap()) {
      for (const auto& entry : n) {
        stack.push_back(entry.first);
        stack.push_back(entry.second);
      }
    }
  }
}

YamlDocument parse(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw core::InputError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "malformed YAML: " + e.msg);
  }
  check_document(root, text, file);
  return YamlDocument{file, root};
}

}  // namespace

YamlNode YamlDocument::node() const { return YamlNode(file, root, "", 1); }

YamlDocument load_yaml_file(const std::string& path, const std::string& flag) {
  return parse(read_text_file(path, flag), path);
}

YamlDocument load_yaml_text(std::string_view text, const std::string& file) { return parse(text, file); }

int line_of(const YAML::Node& node) {
  if (!node.IsDefined()) return 0;
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

YamlNode::YamlNode(std::string file, YAML::Node node, std::string path, int fallback_line)
    : file_(std::move(file)), node_(std::move(node)), path_(std::move(path)) {
  defined_ = node_->IsDefined();
  const int line = defined_ ? line_of(*node_) : 0;
  line_ = line > 0 ? line : fallback_line;
}

YamlNode& YamlNode::operator=(const YamlNode& other) {
  if (this == &other) return *this;
  file_ = other.file_;
  node_.reset();
  node_.emplace(*other.node_);  // copy-construct: shares the node, never writes through it
  path_ = other.path_;
  line_ = other.line_;
  defined_ = other.defined_;
  return *this;
}

void YamlNode::fail(const std::string& message) const { throw core::InputError(file_, line_, path_, message); }

bool YamlNode::has(std::string_view key) const { return is_map() && (*node_)[std::string(key)].IsDefined(); }

YamlNode YamlNode::operator[](std::string_view key) const {
  const std::string child_path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  if (!is_map()) return YamlNode(file_, YAML::Node(YAML::NodeType::Undefined), child_path, line_);
  const YAML::Node& self = *node_;  // const lookup: a missing key must not insert into the document
  return YamlNode(file_, self[std::string(key)], child_path, line_);
}

std::optional<YamlNode> YamlNode::find(std::string_view key) const {
  YamlNode child = (*this)[key];
  if (!child.is_defined() || child.is_null()) return std::nullopt;
  return child;
}

std::vector<YamlNode> YamlNode::items() const {
  if (!defined_) fail("missing required field; expected a list");
  if (!node_->IsSequence()) fail("expected a list, got " + kind_of(*node_));
  std::vector<YamlNode> out;
  out.reserve(node_->size());
  for (std::size_t i = 0; i < node_->size(); ++i) {
    out.emplace_back(file_, (*node_)[i], fmt::format("{}[{}]", path_, i), line_);
  }
  return out;
}

void YamlNode::expect_map(std::string_view what) const {
  if (!defined_) fail(fmt::format("missing required field; expected {}", what));
  if (!node_->IsMap()) fail(fmt::format("expected {} (a mapping of key: value), got {}", what, kind_of(*node_)));
}

std::vector<std::pair<std::string, YamlNode>> YamlNode::entries() const {
  expect_map("a mapping");
  std::vector<std::pair<std::string, YamlNode>> out;
  std::set<std::string> seen;
  for (auto it = node_->begin(); it != node_->end(); ++it) {
    const int key_line = line_of(it->first);
    if (!it->first.IsScalar()) {
      throw core::InputError(file_, key_line > 0 ? key_line : line_, path_, "keys must be plain names");
    }
    const std::string key = it->first.Scalar();
    const std::string child_path = path_.empty() ? key : path_ + "." + key;
    if (!seen.insert(key).second) {
      throw core::InputError(file_, key_line > 0 ? key_line : line_, child_path, "key appears more than once");
    }
    out.emplace_back(key, YamlNode(file_, it->second, child_path, key_line > 0 ? key_line : line_));
  }
  return out;
}

void YamlNode::check_keys(std::initializer_list<std::string_view> allowed) const {
  check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void YamlNode::check_keys(const std::vector<std::string>& allowed) const {
  for (const auto& [key, value] : entries()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const auto close = core::closest_matches(key, allowed);
    std::string message = fmt::format("unknown key '{}'", key);
    message += close.empty() ? fmt::format("; allowed keys: {}", core::join(allowed, ", "))
                             : fmt::format("; did you mean {}?", core::join(close, " or "));
    // Report the key's own line: a nested value (a list under the key) starts on the next one.
    int key_line = value.line();
    for (auto it = node_->begin(); it != node_->end(); ++it) {
      if (it->first.Scalar() == key && line_of(it->first) > 0) key_line = line_of(it->first);
    }
    throw core::InputError(file_, key_line, value.path(), message);
  }
}

std::string YamlNode::as_string() const {
  if (!defined_) fail("missing required field");
  if (!node_->IsScalar()) fail("expected a single value, got " + kind_of(*node_));
  const std::string text(core::trim_blanks(node_->Scalar()));
  if (text.empty()) fail("value is empty");
  // Names and labels end up in JSON output, which must be UTF-8.
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = core::utf8_sequence_length(text, i);
    if (len == 0) fail(fmt::format("not UTF-8 text (byte {} of the value)", i + 1));
    i += len;
  }
  return text;
}

void YamlNode::check_bound(double value, Bound bound, std::string_view shown) const {
  if (!within(value, bound)) fail(fmt::format("{} must be {}", shown, bound_text(bound)));
}

double YamlNode::as_number(Bound bound) const {
  const std::string text = as_string();
  const auto v = to_number(text);
  if (!v) fail(fmt::format("'{}' is not a number", text));
  check_bound(*v, bound, text);
  return *v;
}

int YamlNode::as_int(Bound bound) const {
  const std::string text = as_string();
  const auto v = to_number(text);
  if (!v || std::floor(*v) != *v) fail(fmt::format("'{}' is not a whole number", text));
  if (std::fabs(*v) > 2e9) {
    fail(fmt::format("'{}' is out of range; allowed: a whole number from -2000000000 to 2000000000", text));
  }
  check_bound(*v, bound, text);
  return static_cast<int>(*v);
}

bool YamlNode::as_bool() const {
  const std::string text = core::to_lower(as_string());
  if (const auto v = core::kYesNoWords.parse(text)) return *v;
  fail(fmt::format("'{}' is not true or false", text));
}

std::vector<std::string> YamlNode::as_string_list() const {
  if (is_scalar()) return {as_string()};
  std::vector<std::string> out;
  for (const auto& item : items()) out.push_back(item.as_string());
  return out;
}

template <class T>
T YamlNode::parse_quantity(core::Parsed<T> (*parse)(std::string_view), Bound bound, const PhysicalRange& range) const {
  const std::string text = as_string();
  if (to_number(text)) {
    // core::parse_bytes accepts a bare number as bytes; in a file that is almost always a
    // forgotten unit ("80" meaning 80 GB), so every quantity in YAML must name its unit.
    fail(fmt::format("'{}' has no unit; write the number with its unit, e.g. '{}'", text, range.example));
  }
  const auto parsed = parse(text);
  if (!parsed) fail(parsed.error);
  const double v = parsed.value->value();
  check_bound(v, bound, text);
  if (v != 0.0 && (std::fabs(v) < range.lo || std::fabs(v) > range.hi)) {
    fail(fmt::format("'{}' is outside the range of any real {}: allowed {}", text, range.noun, range.shown));
  }
  return *parsed.value;
}

core::Bytes YamlNode::as_bytes(Bound bound) const { return parse_quantity(&core::parse_bytes, bound, kBytesRange); }
core::BytesPerSecond YamlNode::as_bandwidth(Bound bound) const {
  return parse_quantity(&core::parse_bandwidth, bound, kBandwidthRange);
}
core::FlopsPerSecond YamlNode::as_flops_rate(Bound bound) const {
  return parse_quantity(&core::parse_flops_rate, bound, kFlopsRange);
}
core::Seconds YamlNode::as_duration(Bound bound) const {
  return parse_quantity(&core::parse_duration, bound, kDurationRange);
}
core::Watts YamlNode::as_power(Bound bound) const { return parse_quantity(&core::parse_power, bound, kPowerRange); }

double YamlNode::as_number_with_unit(std::initializer_list<std::pair<std::string_view, double>> units,
                                     Bound bound) const {
  const std::string text = as_string();
  std::vector<std::string> names;
  for (const auto& [name, factor] : units) {
    names.emplace_back(name);
    if (text.size() <= name.size()) continue;
    const std::string_view tail = std::string_view(text).substr(text.size() - name.size());
    if (tail != name) continue;
    const auto number = to_number(std::string_view(text).substr(0, text.size() - name.size()));
    if (!number) continue;
    check_bound(*number, bound, text);
    return *number * factor;
  }
  fail(fmt::format("'{}' is not a number with a unit; allowed units: {}", text, core::join(names, ", ")));
}

SourcedValue read_sourced(const YamlNode& node, bool require_source, bool allow_prior) {
  if (!node.is_map()) {
    if (require_source) {
      node.fail("expected {value: ..., source: ...}: every shipped value needs a unit and a source");
    }
    return SourcedValue{node, std::nullopt, std::nullopt, "", true, false, ""};
  }
  if (allow_prior) {
    node.check_keys({"value", "source", "verified", "derived", "note", "prior", "prior_spread"});
  } else {
    node.check_keys({"value", "source", "verified", "derived", "note"});
  }
  SourcedValue out{node["value"], node.find("prior"), node.find("prior_spread"), "", true, false, ""};
  if (!out.value.is_defined()) node.fail("missing 'value'");
  if (const auto source = node.find("source")) out.source = source->as_string();
  if (require_source && out.source.empty()) node.fail("missing 'source' (a key of docs/reference/hardware.md)");
  if (const auto verified = node.find("verified")) out.verified = verified->as_bool();
  if (const auto derived = node.find("derived")) out.derived = derived->as_bool();
  if (const auto note = node.find("note")) out.note = note->as_string();
  return out;
}

}  // namespace fmsim::config
