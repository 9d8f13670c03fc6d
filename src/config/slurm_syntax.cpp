#include "config/slurm_syntax.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::config {

double parse_slurm_duration(const std::string& text_in) {
  std::string text = text_in;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  if (text == "UNLIMITED" || text == "INFINITE") return 0.0;
  if (text.empty()) return -1;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ':' && c != '-') return -1;
  // Each field at most 9 digits: std::stol threw out_of_range past 2^63 (an internal error on
  // PriorityMaxAge=18446744073709551616), and 10^9 days is past any schedule.
  constexpr std::size_t kMaxDigits = 9;
  long days = 0;
  std::string rest = text;
  const auto dash = text.find('-');
  const bool has_days = dash != std::string::npos;
  if (has_days) {
    if (dash == 0 || dash > kMaxDigits) return -1;
    days = std::stol(text.substr(0, dash));
    rest = text.substr(dash + 1);
  }
  std::vector<long> parts;
  std::stringstream ss(rest);
  std::string item;
  while (std::getline(ss, item, ':')) {
    if (item.empty() || item.size() > kMaxDigits || item.find('-') != std::string::npos) return -1;
    parts.push_back(std::stol(item));
  }
  if (parts.empty() || parts.size() > 3) return -1;
  double s = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    s = parts[0] * 3600.0 + (parts.size() > 1 ? parts[1] * 60.0 : 0) + (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    s = parts[0] * 60.0;  // minutes
  } else if (parts.size() == 2) {
    s = parts[0] * 60.0 + parts[1];  // MM:SS
  } else {
    s = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2];
  }
  return days * 86400.0 + s;
}

namespace {
constexpr std::size_t kMaxHosts = 1'000'000;  ///< host names one hostlist may expand to
}  // namespace

std::vector<std::string> expand_hostlist(const std::string& text, const std::string& path, int line,
                                         const std::string& field) {
  std::vector<std::string> out;
  // Split at commas outside brackets.
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) items.push_back(cur);
  for (const auto& item : items) {
    const auto open = item.find('[');
    if (open == std::string::npos) {
      out.push_back(item);
      continue;
    }
    const auto close = item.find(']', open);
    if (close == std::string::npos)
      throw core::InputError(path, line, field, fmt::format("'{}' has no closing ]", item));
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    std::stringstream ss(item.substr(open + 1, close - open - 1));
    std::string range;
    while (std::getline(ss, range, ',')) {
      const auto dash = range.find('-');
      const std::string lo = range.substr(0, dash);
      const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      const bool digits = !lo.empty() && !hi.empty() &&
                          std::all_of(lo.begin(), lo.end(), [](unsigned char c) { return std::isdigit(c); }) &&
                          std::all_of(hi.begin(), hi.end(), [](unsigned char c) { return std::isdigit(c); });
      // At most 9 digits (std::stol threw out_of_range on more: an internal error), and at most
      // kMaxHosts names in all (many ranges of a million each exhausted memory).
      if (!digits || lo.size() > 9 || hi.size() > 9)
        throw core::InputError(path, line, field,
                               fmt::format("'{}' is not a numeric range of at most 9 digits", range));
      const long a = std::stol(lo), b = std::stol(hi);
      if (b < a) throw core::InputError(path, line, field, fmt::format("'{}' is not an ascending range", range));
      if (static_cast<std::size_t>(b - a) + out.size() >= kMaxHosts)
        throw core::InputError(
            path, line, field,
            fmt::format("the host list names more than {} hosts; allowed: at most {}", kMaxHosts, kMaxHosts));
      for (long v = a; v <= b; ++v) {
        std::string num = std::to_string(v);
        if (num.size() < lo.size()) num = std::string(lo.size() - num.size(), '0') + num;
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

std::string lower_case(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::vector<SlurmConfLine> split_slurm_conf(const std::string& text, const std::string& path) {
  std::vector<SlurmConfLine> out;
  std::stringstream in(text);
  std::string physical, logical;
  int line_no = 0, start_line = 0;
  while (std::getline(in, physical)) {
    ++line_no;
    if (!physical.empty() && physical.back() == '\r') physical.pop_back();
    const auto hash = physical.find('#');
    if (hash != std::string::npos) physical = physical.substr(0, hash);
    if (logical.empty()) start_line = line_no;
    if (!physical.empty() && physical.back() == '\\') {
      logical += physical.substr(0, physical.size() - 1) + " ";
      continue;
    }
    logical += physical;
    SlurmConfLine cl;
    cl.line = start_line;
    std::size_t i = 0;
    while (i < logical.size()) {
      while (i < logical.size() && std::isspace(static_cast<unsigned char>(logical[i]))) ++i;
      if (i >= logical.size()) break;
      std::size_t eq = logical.find('=', i);
      std::size_t space = i;
      while (space < logical.size() && !std::isspace(static_cast<unsigned char>(logical[space]))) ++space;
      if (eq == std::string::npos || eq > space)
        throw core::InputError(path, start_line, logical.substr(i, space - i), "expected Key=Value");
      const std::string key = logical.substr(i, eq - i);
      std::string value;
      i = eq + 1;
      if (i < logical.size() && logical[i] == '"') {
        const auto close = logical.find('"', i + 1);
        if (close == std::string::npos) throw core::InputError(path, start_line, key, "unterminated quoted value");
        value = logical.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        while (i < logical.size() && !std::isspace(static_cast<unsigned char>(logical[i]))) value += logical[i++];
      }
      cl.pairs.push_back({key, value});
    }
    if (!cl.pairs.empty()) out.push_back(std::move(cl));
    logical.clear();
  }
  return out;
}

double slurm_duration_value(const std::string& path, int line, const std::string& key, const std::string& value) {
  const double d = parse_slurm_duration(value);
  // The twin's clock is integer nanoseconds (2^63 ns, 292 years): a finite time is held to 100 years.
  constexpr double kMaxSeconds = 100 * 365.25 * 86400;
  if (d > kMaxSeconds) {
    throw core::InputError(
        path, line, key,
        fmt::format("'{}' is {:.3g} years; at most 100 years (or UNLIMITED)", value, d / (365.25 * 86400)));
  }
  if (d < 0)
    throw core::InputError(
        path, line, key,
        fmt::format("'{}' is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] or UNLIMITED; "
                    "each number at most 9 digits)",
                    value));
  return d;
}

double slurm_number_value(const std::string& path, int line, const std::string& key, const std::string& value,
                          double lo) {
  try {
    std::size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size() && std::isfinite(v) && v >= lo) return v;
  } catch (const std::exception&) {}
  throw core::InputError(path, line, key, fmt::format("'{}' is not a number of at least {}", value, lo));
}

bool slurm_yes_no(const std::string& path, int line, const std::string& key, const std::string& value) {
  if (const auto v = core::kYesNoWords.parse(value)) return *v;
  throw core::InputError(path, line, key,
                         fmt::format("'{}' is not allowed; use YES or NO ({})", value, core::kYesNoWords.allowed()));
}

}  // namespace fmsim::config
