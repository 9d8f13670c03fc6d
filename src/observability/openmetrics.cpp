// OpenMetrics text writer: families, series and timestamped samples through a bounded buffer.
#include "observability/openmetrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "observability/prometheus.hpp"

namespace fmsim::observability {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;

std::string_view type_word(SeriesType t) {
  switch (t) {
    case SeriesType::Gauge: return "gauge";
    case SeriesType::Counter: return "counter";
    case SeriesType::Histogram: return "histogram";
  }
  return "unknown";
}

}  // namespace

void append_metric_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (v == 0.0) {  // also turns -0 into 0
    out += '0';
    return;
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, result.ptr);
}

OpenMetricsWriter::OpenMetricsWriter(std::FILE* out, std::string path_for_errors)
    : out_(out), path_(std::move(path_for_errors)) {
  buffer_.reserve(kFlushBytes + 4096);
}

OpenMetricsWriter::~OpenMetricsWriter() = default;

void OpenMetricsWriter::flush() {
  if (buffer_.empty()) return;
  if (out_ != nullptr && std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
    throw WriteError(fmt::format("{}: write failed (disk full?)", path_));
  }
  bytes_ += buffer_.size();
  buffer_.clear();
}

void OpenMetricsWriter::append(std::string_view text) {
  buffer_ += text;
  if (buffer_.size() >= kFlushBytes) flush();
}

void OpenMetricsWriter::append_value(double v) { append_metric_value(buffer_, v); }

void OpenMetricsWriter::append_int(std::int64_t v) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  buffer_.append(buf, result.ptr);
}

void OpenMetricsWriter::family(std::string_view name, SeriesType type, std::string_view help, std::string_view unit,
                               bool exporter_name) {
  FMSIM_CHECK(!finished_, "OpenMetrics: family after # EOF");
  FMSIM_CHECK(is_valid_metric_name(name), fmt::format("invalid metric name \"{}\"", name));
  const auto it = std::lower_bound(families_.begin(), families_.end(), name);
  FMSIM_CHECK(it == families_.end() || *it != name, fmt::format("metric family \"{}\" written twice", name));
  families_.insert(it, std::string(name));
  if (type == SeriesType::Counter) {
    FMSIM_CHECK(exporter_name || name.ends_with("_total"), fmt::format("counter \"{}\" must end in _total", name));
    FMSIM_CHECK(unit.empty(), fmt::format("counter \"{}\" carries no UNIT line", name));
  }
  if (!unit.empty()) {
    FMSIM_CHECK(name.ends_with(fmt::format("_{}", unit)),
                fmt::format("unit \"{}\" is not the suffix of \"{}\"", unit, name));
  }
  family_ = std::string(name);
  type_ = type;
  in_series_ = false;
  std::string head = fmt::format("# HELP {} ", name);
  for (char c : help) {
    if (c == '\\') {
      head += "\\\\";
    } else if (c == '\n') {
      head += "\\n";
    } else {
      head.push_back(c);
    }
  }
  head += fmt::format("\n# TYPE {} {}\n", name, type_word(type));
  if (!unit.empty()) head += fmt::format("# UNIT {} {}\n", name, unit);
  append(head);
}

void OpenMetricsWriter::series(const Labels& labels) {
  FMSIM_CHECK(!family_.empty() && !finished_, "OpenMetrics: series outside a family");
  std::set<std::string_view> seen;
  prefix_ = family_;
  if (type_ == SeriesType::Histogram) prefix_ += "_bucket";
  prefix_ += '{';
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto& [key, value] = labels[i];
    FMSIM_CHECK(is_valid_label_name(key) && key != "le", fmt::format("invalid label name \"{}\" on {}", key, family_));
    FMSIM_CHECK(seen.insert(key).second, fmt::format("duplicate label \"{}\" on {}", key, family_));
    if (i > 0) prefix_ += ',';
    prefix_ += key;
    prefix_ += "=\"";
    for (char c : value) {
      if (c == '\\') {
        prefix_ += "\\\\";
      } else if (c == '\n') {
        prefix_ += "\\n";
      } else if (c == '"') {
        prefix_ += "\\\"";
      } else {
        prefix_.push_back(c);
      }
    }
    prefix_ += '"';
  }
  if (type_ != SeriesType::Histogram) prefix_ += "} ";
  in_series_ = true;
  has_sample_ = false;
}

void OpenMetricsWriter::sample(std::int64_t timestamp_s, double value) {
  FMSIM_CHECK(in_series_ && type_ != SeriesType::Histogram, "OpenMetrics: sample outside a gauge/counter series");
  FMSIM_CHECK(!has_sample_ || timestamp_s > last_timestamp_,
              fmt::format("{}: timestamps must increase ({} after {})", family_, timestamp_s, last_timestamp_));
  if (type_ == SeriesType::Counter) {
    FMSIM_CHECK(!(value < 0.0) && (!has_sample_ || !(value < last_value_)),
                fmt::format("{}: counter decreased ({} after {})", family_, value, last_value_));
  }
  buffer_ += prefix_;
  append_value(value);
  buffer_ += ' ';
  append_int(timestamp_s);
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) flush();
  last_timestamp_ = timestamp_s;
  last_value_ = value;
  has_sample_ = true;
  ++samples_;
}

void OpenMetricsWriter::shared_series(const std::vector<Labels>& label_sets,
                                      const std::vector<std::int64_t>& timestamps_s,
                                      const std::vector<double>& values) {
  FMSIM_CHECK(!family_.empty() && !finished_ && type_ != SeriesType::Histogram,
              "OpenMetrics: shared series outside a gauge/counter family");
  FMSIM_CHECK(timestamps_s.size() == values.size(), "OpenMetrics: one value per timestamp");
  // "<value> <timestamp>\n" of every sample, checked once.
  std::string tails;
  std::vector<std::size_t> ends;
  ends.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    FMSIM_CHECK(i == 0 || timestamps_s[i] > timestamps_s[i - 1],
                fmt::format("{}: timestamps must increase ({} after {})", family_, timestamps_s[i],
                            i > 0 ? timestamps_s[i - 1] : 0));
    if (type_ == SeriesType::Counter) {
      FMSIM_CHECK(!(values[i] < 0.0) && (i == 0 || !(values[i] < values[i - 1])),
                  fmt::format("{}: counter decreased ({} after {})", family_, values[i], i > 0 ? values[i - 1] : 0.0));
    }
    append_metric_value(tails, values[i]);
    tails += ' ';
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, timestamps_s[i]);
    tails.append(buf, result.ptr);
    tails += '\n';
    ends.push_back(tails.size());
  }
  for (const auto& labels : label_sets) {
    series(labels);         // prefix_ = "name{labels} "
    if (out_ == nullptr) {  // counting only: the bytes the copies below would make
      bytes_ += prefix_.size() * ends.size() + tails.size();
    } else {
      std::size_t begin = 0;
      for (const std::size_t end : ends) {
        buffer_ += prefix_;
        buffer_.append(tails, begin, end - begin);
        begin = end;
      }
      if (buffer_.size() >= kFlushBytes) flush();
    }
    samples_ += values.size();
    if (!values.empty()) {
      last_timestamp_ = timestamps_s.back();
      last_value_ = values.back();
      has_sample_ = true;
    }
  }
}

void OpenMetricsWriter::histogram_sample(std::int64_t timestamp_s, const std::vector<double>& bounds,
                                         const std::vector<double>& cumulative, double sum) {
  FMSIM_CHECK(in_series_ && type_ == SeriesType::Histogram, "OpenMetrics: histogram sample outside a histogram");
  FMSIM_CHECK(cumulative.size() == bounds.size() + 1, "histogram: one count per bound plus the total");
  FMSIM_CHECK(!has_sample_ || timestamp_s > last_timestamp_, fmt::format("{}: timestamps must increase", family_));
  for (std::size_t i = 1; i < cumulative.size(); ++i) {
    FMSIM_CHECK(cumulative[i] >= cumulative[i - 1], fmt::format("{}: buckets must be cumulative", family_));
  }
  for (std::size_t i = 1; i < bounds.size(); ++i) {
    FMSIM_CHECK(bounds[i - 1] < bounds[i], fmt::format("{}: bounds must increase", family_));
  }
  // prefix_ is "name_bucket{labels" (open); the label set may be empty.
  const bool bare = prefix_.back() == '{';
  for (std::size_t i = 0; i < cumulative.size(); ++i) {
    buffer_ += prefix_;
    buffer_ += bare ? "le=\"" : ",le=\"";
    if (i < bounds.size()) {
      append_value(bounds[i]);
    } else {
      buffer_ += "+Inf";
    }
    buffer_ += "\"} ";
    append_value(cumulative[i]);
    buffer_ += ' ';
    append_int(timestamp_s);
    buffer_ += '\n';
  }
  const std::string labels = prefix_.substr(family_.size() + 7);  // "{...labels" after "name_bucket"
  for (const char* suffix : {"_count", "_sum"}) {
    buffer_ += family_;
    buffer_ += suffix;
    if (!bare) {
      buffer_ += labels;
      buffer_ += '}';
    }
    buffer_ += ' ';
    append_value(suffix[1] == 'c' ? cumulative.back() : sum);
    buffer_ += ' ';
    append_int(timestamp_s);
    buffer_ += '\n';
  }
  if (buffer_.size() >= kFlushBytes) flush();
  last_timestamp_ = timestamp_s;
  has_sample_ = true;
  ++samples_;
}

void OpenMetricsWriter::histogram_series(const Labels& labels, const std::vector<double>& bounds,
                                         const std::vector<std::int64_t>& timestamps_s,
                                         const std::vector<std::vector<double>>& cumulative,
                                         const std::vector<double>& sums) {
  FMSIM_CHECK(timestamps_s.size() == cumulative.size() && timestamps_s.size() == sums.size(),
              "histogram: one sample per timestamp");
  series(labels);
  for (std::size_t i = 0; i < timestamps_s.size(); ++i)
    histogram_sample(timestamps_s[i], bounds, cumulative[i], sums[i]);
}

void OpenMetricsWriter::finish() {
  FMSIM_CHECK(!finished_, "OpenMetrics: # EOF written twice");
  buffer_ += "# EOF\n";
  finished_ = true;
  flush();
  if (out_ != nullptr && std::fflush(out_) != 0) throw WriteError(fmt::format("{}: write failed (disk full?)", path_));
}

}  // namespace fmsim::observability
