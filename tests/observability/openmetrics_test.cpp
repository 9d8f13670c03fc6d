// OpenMetrics writer: the exposition shape Prometheus' parsers read (OpenMetrics 1.0 text).
#include "observability/openmetrics.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace fmsim::observability {
namespace {

// Collects what a writer writes in memory (open_memstream), no file on disk.
class Buffer {
 public:
  Buffer() : file_(open_memstream(&data_, &size_)) {}
  ~Buffer() {
    if (file_ != nullptr) std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

TEST(OpenMetricsWriter, WritesFamiliesSeriesAndTimestampedSamples) {
  Buffer buf;
  OpenMetricsWriter w(buf.file(), "mem");
  w.family("fmsim_step_time_seconds", SeriesType::Gauge, "Time of one step.", "seconds");
  w.series({{"job", "a"}, {"instance", "fmsim"}});
  w.sample(1767225600, 7.25);
  w.sample(1767225660, 7.5);
  w.family("fmsim_tokens_total", SeriesType::Counter, "Tokens.");
  w.series({{"job", "a\"b"}});
  w.sample(1767225600, 0.0);
  w.sample(1767225660, 1e12);
  w.finish();
  EXPECT_EQ(buf.text(),
            "# HELP fmsim_step_time_seconds Time of one step.\n"
            "# TYPE fmsim_step_time_seconds gauge\n"
            "# UNIT fmsim_step_time_seconds seconds\n"
            "fmsim_step_time_seconds{job=\"a\",instance=\"fmsim\"} 7.25 1767225600\n"
            "fmsim_step_time_seconds{job=\"a\",instance=\"fmsim\"} 7.5 1767225660\n"
            "# HELP fmsim_tokens_total Tokens.\n"
            "# TYPE fmsim_tokens_total counter\n"
            "fmsim_tokens_total{job=\"a\\\"b\"} 0 1767225600\n"
            "fmsim_tokens_total{job=\"a\\\"b\"} 1e+12 1767225660\n"
            "# EOF\n");
  EXPECT_EQ(w.samples_written(), 4u);
  EXPECT_EQ(w.bytes_written(), buf.text().size());
}

// A writer without a file counts: the same calls give bytes_written() equal to the size the
// writer with a file writes (how `--metrics-out` sizes a file before writing it).
TEST(OpenMetricsWriter, WithoutAFileCountsTheBytesItWouldWrite) {
  const auto calls = [](OpenMetricsWriter& w) {
    w.family("DCGM_FI_DEV_POWER_USAGE", SeriesType::Gauge, "Power draw (in W).");
    w.shared_series({{{"gpu", "0"}, {"Hostname", "n1"}}, {{"gpu", "1"}, {"Hostname", "n1"}}},
                    {1767225600, 1767225660, 1767225720}, {700.5, 650.0, 0.0});
    w.family("fmsim_tokens_total", SeriesType::Counter, "Tokens.");
    w.series({{"job", "a"}});
    w.sample(1767225600, 1.0);
    w.sample(1767225660, 2.5e9);
    w.finish();
  };
  Buffer buf;
  OpenMetricsWriter written(buf.file(), "mem");
  calls(written);
  OpenMetricsWriter counted(nullptr, "mem");
  calls(counted);
  EXPECT_EQ(counted.bytes_written(), buf.text().size());
  EXPECT_EQ(counted.samples_written(), written.samples_written());
  EXPECT_EQ(counted.samples_written(), 8u);
}

TEST(OpenMetricsWriter, HistogramSampleIsCumulativeBucketsCountAndSum) {
  // One histogram sample = one _bucket line per bound plus le="+Inf" (= _count), then _count, _sum.
  Buffer buf;
  OpenMetricsWriter w(buf.file(), "mem");
  w.family("fmsim_step_duration_seconds", SeriesType::Histogram, "Steps.", "seconds");
  w.series({{"job", "a"}});
  w.histogram_sample(60, {1.0, 2.5}, {3.0, 5.0, 6.0}, 12.5);
  w.finish();
  EXPECT_EQ(buf.text(),
            "# HELP fmsim_step_duration_seconds Steps.\n"
            "# TYPE fmsim_step_duration_seconds histogram\n"
            "# UNIT fmsim_step_duration_seconds seconds\n"
            "fmsim_step_duration_seconds_bucket{job=\"a\",le=\"1\"} 3 60\n"
            "fmsim_step_duration_seconds_bucket{job=\"a\",le=\"2.5\"} 5 60\n"
            "fmsim_step_duration_seconds_bucket{job=\"a\",le=\"+Inf\"} 6 60\n"
            "fmsim_step_duration_seconds_count{job=\"a\"} 6 60\n"
            "fmsim_step_duration_seconds_sum{job=\"a\"} 12.5 60\n"
            "# EOF\n");
}

TEST(OpenMetricsWriter, ValuesReadBackExactly) {
  // Shortest round-trip decimal; NaN and infinities as OpenMetrics spells them; -0 as 0.
  std::string s;
  append_metric_value(s, 0.1);
  s += ' ';
  append_metric_value(s, -0.0);
  s += ' ';
  append_metric_value(s, 1.0 / 3.0);
  s += ' ';
  append_metric_value(s, std::numeric_limits<double>::infinity());
  s += ' ';
  append_metric_value(s, -std::numeric_limits<double>::infinity());
  s += ' ';
  append_metric_value(s, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(s, "0.1 0 0.3333333333333333 +Inf -Inf NaN");
}

TEST(OpenMetricsWriter, RejectsShapesPrometheusWouldRefuse) {
  Buffer buf;
  OpenMetricsWriter w(buf.file(), "mem");
  // A UNIT must be the name's suffix; a counter ends in _total and carries no UNIT.
  EXPECT_THROW(w.family("fmsim_step_time", SeriesType::Gauge, "x", "seconds"), core::InternalError);
  EXPECT_THROW(w.family("fmsim_tokens", SeriesType::Counter, "x"), core::InternalError);
  w.family("fmsim_x_total", SeriesType::Counter, "x");
  EXPECT_THROW(w.family("fmsim_x_total", SeriesType::Counter, "x"), core::InternalError);  // twice
  w.series({{"job", "a"}});
  w.sample(10, 5.0);
  EXPECT_THROW(w.sample(10, 6.0), core::InternalError);  // timestamps strictly increase
  EXPECT_THROW(w.sample(20, 4.0), core::InternalError);  // a counter never decreases
  EXPECT_THROW(w.series({{"le", "1"}}), core::InternalError);
  EXPECT_THROW(w.series({{"job", "a"}, {"job", "b"}}), core::InternalError);
}

}  // namespace
}  // namespace fmsim::observability
