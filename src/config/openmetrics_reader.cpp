// OpenMetrics text reader (see openmetrics_reader.hpp).
#include "config/openmetrics_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

constexpr std::string_view kSuffixes[] = {"_total", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"};

bool parse_double(std::string_view text, double& out) {
  if (text == "NaN") {
    out = std::numeric_limits<double>::quiet_NaN();
  } else if (text == "+Inf" || text == "Inf") {
    out = std::numeric_limits<double>::infinity();
  } else if (text == "-Inf") {
    out = -std::numeric_limits<double>::infinity();
  } else {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    const auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    return r.ec == std::errc() && r.ptr == text.data() + text.size();
  }
  return true;
}

// Splits "# KEYWORD name rest" into name and rest.
std::pair<std::string, std::string> name_and_rest(std::string_view line, std::size_t skip) {
  std::string_view s = line.substr(skip);
  const auto space = s.find(' ');
  if (space == std::string_view::npos) return {std::string(s), ""};
  return {std::string(s.substr(0, space)), std::string(s.substr(space + 1))};
}

class Reader {
 public:
  Reader(const std::string& path, telemetry::Recording& rec, std::function<void(telemetry::RecordedFamily&&)> take = {})
      : path_(path), rec_(rec), take_(std::move(take)) {}

  void line(std::string_view text, int number) {
    line_ = number;
    if (eof_) fail("nothing may follow # EOF");
    if (text.empty()) return;
    if (text == "# EOF") {
      eof_ = true;
      return;
    }
    if (text.starts_with("# HELP ")) {
      auto [name, rest] = name_and_rest(text, 7);
      family(name).help = rest;
    } else if (text.starts_with("# TYPE ")) {
      auto [name, rest] = name_and_rest(text, 7);
      family(name).type = rest;
    } else if (text.starts_with("# UNIT ")) {
      family(name_and_rest(text, 7).first);
    } else if (text.front() == '#') {
      return;  // a comment
    } else {
      sample(text);
    }
  }

  void finish() {
    for (auto& f : rec_.families) complete(f);
    hand_over();
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw core::InputError(path_, line_, "", message); }

  static void complete(telemetry::RecordedFamily& f) {
    if (f.type.empty()) f.type = "untyped";
    // Text format 0.0.4 names a counter family as its samples are named.
    if (f.type == "counter" && !f.name.ends_with("_total") && !f.series.empty() &&
        f.series.front().name_and_labels.starts_with(f.name + "_total")) {
      f.name += "_total";
    }
  }

  // Streaming: the families read so far go to take_ (their lines are over once another starts).
  void hand_over() {
    if (!take_) return;
    for (auto& f : rec_.families) take_(std::move(f));
    rec_.families.clear();
    current_ = nullptr;
    index_.clear();
    last_ = kNone;
  }

  telemetry::RecordedFamily& family(const std::string& name) {
    if (current_ == nullptr || current_->name != name) {
      if (!seen_.insert(name).second) {
        fail(fmt::format("metric family \"{}\" appears twice (its lines must be together)", name));
      }
      if (take_) {
        for (auto& f : rec_.families) complete(f);
        hand_over();
      }
      index_.clear();
      last_ = kNone;
      current_ = nullptr;
      for (auto& f : rec_.families) {  // a family an earlier file started: its series continue
        if (f.name != name) continue;
        current_ = &f;
        for (std::size_t i = 0; i < f.series.size(); ++i) index_.emplace(f.series[i].name_and_labels, i);
      }
      if (current_ == nullptr) {
        rec_.families.push_back({.name = name, .type = "", .help = "", .series = {}});
        current_ = &rec_.families.back();
      }
    }
    return *current_;
  }

  void sample(std::string_view text) {
    // name
    std::size_t i = 0;
    while (i < text.size() && text[i] != '{' && text[i] != ' ') ++i;
    const std::string_view name = text.substr(0, i);
    if (name.empty()) fail("a sample line needs a metric name");
    // labels (quoted values may hold '}' and escaped quotes)
    if (i < text.size() && text[i] == '{') {
      bool quoted = false;
      for (++i; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted && c == '\\') {
          ++i;
        } else if (c == '"') {
          quoted = !quoted;
        } else if (!quoted && c == '}') {
          break;
        }
      }
      if (i >= text.size()) fail("unterminated label set");
      ++i;
    }
    const std::string_view key = text.substr(0, i);
    std::string_view rest = text.substr(i);
    if (rest.empty() || rest.front() != ' ') fail(fmt::format("expected a value after \"{}\"", key));
    rest.remove_prefix(1);
    const auto space = rest.find(' ');
    double value = 0.0;
    if (!parse_double(rest.substr(0, space), value)) {
      fail(fmt::format("\"{}\" is not a number", rest.substr(0, space)));
    }
    if (space == std::string_view::npos) {
      fail(fmt::format("sample \"{}\" has no timestamp; recorded series need one (Unix seconds)", key));
    }
    std::string_view ts_text = rest.substr(space + 1);
    if (const auto more = ts_text.find(" # "); more != std::string_view::npos) ts_text = ts_text.substr(0, more);
    double ts = 0.0;
    if (!parse_double(ts_text, ts) || !std::isfinite(ts)) fail(fmt::format("\"{}\" is not a timestamp", ts_text));
    // Prometheus keeps milliseconds in 64 bits: about 285 million years either side of 1970.
    if (std::abs(ts) > 9e15) fail(fmt::format("timestamp {} is out of range (at most 9e15 s from 1970)", ts_text));
    const auto t = static_cast<std::int64_t>(std::floor(ts));

    // family: the current one if the sample name is its name or its name plus a suffix
    if (current_ == nullptr || !belongs(name, current_->name)) {
      if (name.ends_with("_created")) return;
      family(std::string(name));
    }
    if (name.ends_with("_created") && name != current_->name) return;
    // A series' samples are usually together: the last series is looked at first.
    if (last_ >= current_->series.size() || current_->series[last_].name_and_labels != key) {
      auto [it, added] = index_.try_emplace(std::string(key), current_->series.size());
      if (added) current_->series.push_back({.name_and_labels = std::string(key), .timestamps_s = {}, .values = {}});
      last_ = it->second;
    }
    auto& s = current_->series[last_];
    if (!s.timestamps_s.empty() && t <= s.timestamps_s.back()) {
      fail(fmt::format("timestamps of \"{}\" must increase ({} after {})", key, t, s.timestamps_s.back()));
    }
    s.timestamps_s.push_back(t);
    s.values.push_back(value);
    if (rec_.samples == 0) {
      rec_.first_timestamp_s = rec_.last_timestamp_s = t;
    } else {
      rec_.first_timestamp_s = std::min(rec_.first_timestamp_s, t);
      rec_.last_timestamp_s = std::max(rec_.last_timestamp_s, t);
    }
    ++rec_.samples;
  }

  static bool belongs(std::string_view sample, std::string_view family) {
    if (sample == family) return true;
    if (!sample.starts_with(family)) return false;
    const std::string_view suffix = sample.substr(family.size());
    return std::find(std::begin(kSuffixes), std::end(kSuffixes), suffix) != std::end(kSuffixes) || suffix == "_created";
  }

  const std::string& path_;
  telemetry::Recording& rec_;
  std::function<void(telemetry::RecordedFamily&&)> take_;
  telemetry::RecordedFamily* current_ = nullptr;
  std::unordered_map<std::string, std::size_t> index_;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t last_ = kNone;    // index in current_->series of the last sample's series
  std::set<std::string> seen_;  // families started in this file
  int line_ = 0;
  bool eof_ = false;
};

}  // namespace

void read_openmetrics(const std::string& path, telemetry::Recording& recording) {
  std::ifstream in(path);
  if (!in) throw core::InputError(path, 0, "", "cannot open the metrics file");
  // Families from earlier files stay; pointers into the vector are refreshed per family.
  Reader reader(path, recording);
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    reader.line(text, ++number);
  }
  reader.finish();
}

void stream_openmetrics(const std::string& path, const std::function<void(telemetry::RecordedFamily&&)>& take,
                        const std::function<void(std::uint64_t)>& progress) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(path, 0, "", "cannot open the metrics file");
  telemetry::Recording recording;
  Reader reader(path, recording, take);
  std::string text;
  int number = 0;
  std::uint64_t bytes = 0, reported = 0;
  constexpr std::uint64_t kEvery = 4ULL << 20;
  while (std::getline(in, text)) {
    bytes += text.size() + 1;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    reader.line(text, ++number);
    if (progress && bytes - reported >= kEvery) progress(reported = bytes);
  }
  reader.finish();
  if (progress) progress(bytes);
}

std::pair<std::string, observability::Labels> split_series_key(std::string_view key, const std::string& path) {
  const auto fail = [&](const std::string& why) {
    throw core::InputError(path, 0, "", fmt::format("series \"{}\": {}", key, why));
  };
  const auto brace = key.find('{');
  std::pair<std::string, observability::Labels> out{std::string(key.substr(0, brace)), {}};
  if (brace == std::string_view::npos) return out;
  std::size_t i = brace + 1;
  while (i < key.size() && key[i] != '}') {
    const auto eq = key.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= key.size() || key[eq + 1] != '"') fail("a label needs =\"value\"");
    std::string name(core::trim_blanks(key.substr(i, eq - i)));
    std::string value;
    std::size_t j = eq + 2;
    for (; j < key.size() && key[j] != '"'; ++j) {
      if (key[j] == '\\' && j + 1 < key.size()) {
        ++j;
        value.push_back(key[j] == 'n' ? '\n' : key[j]);
      } else {
        value.push_back(key[j]);
      }
    }
    if (j >= key.size()) fail("unterminated label value");
    out.second.emplace_back(std::move(name), std::move(value));
    i = j + 1;
    while (i < key.size() && (key[i] == ',' || key[i] == ' ')) ++i;
  }
  if (i >= key.size()) fail("unterminated label set");
  return out;
}

std::vector<std::string> metrics_files_in(const std::string& dir, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw core::InputError::flag(flag,
                                 fmt::format("\"{}\" is not a directory (write one with --metrics-out DIR)", dir));
  }
  std::vector<std::string> files;
  bool tsdb_block = false;  // a block directory of --metrics-format tsdb: <ULID>/meta.json
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "meta.json", ec)) tsdb_block = true;
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".om" || ext == ".prom") &&
        !entry.path().filename().string().starts_with(".")) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    if (tsdb_block) {
      throw core::InputError::flag(
          flag, fmt::format("\"{}\" holds a Prometheus TSDB block (--metrics-format tsdb), not metrics files (*.om, "
                            "*.prom): open it with `prometheus --storage.tsdb.path={}`, or write OpenMetrics text "
                            "with --metrics-format openmetrics for this command",
                            dir, dir));
    }
    throw core::InputError::flag(flag, fmt::format("\"{}\" holds no metrics files (*.om, *.prom)", dir));
  }
  return files;
}

}  // namespace fmsim::config
