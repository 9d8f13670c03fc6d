// Reading recorded OpenMetrics series back, and playing them as a live exposition.
#include "config/openmetrics_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace fmsim::config {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(OpenMetricsReader, ReadsFamiliesSeriesAndPlaysTheLastValueAtATime) {
  const auto path = write("a.om",
                          "# HELP g A gauge.\n# TYPE g gauge\n"
                          "g{h=\"n1\"} 1 100\ng{h=\"n1\"} 2 160\ng{h=\"n2\"} 5 160\n"
                          "# TYPE c counter\nc_total 0 100\nc_total 30 160\n"
                          "# TYPE h histogram\nh_bucket{le=\"1\"} 1 100\nh_bucket{le=\"+Inf\"} 2 100\n"
                          "h_count 2 100\nh_sum 3.5 100\n# EOF\n");
  telemetry::Recording rec;
  read_openmetrics(path, rec);
  ASSERT_EQ(rec.families.size(), 3u);
  EXPECT_EQ(rec.families[1].name, "c_total");  // an OpenMetrics counter family is exposed as its samples
  EXPECT_EQ(rec.families[2].series.size(), 4u);
  EXPECT_EQ(rec.samples, 9u);
  EXPECT_EQ(rec.first_timestamp_s, 100);
  EXPECT_EQ(rec.last_timestamp_s, 160);
  // At t = 130 each series shows its last sample at or before 130; n2 has none yet.
  EXPECT_EQ(telemetry::exposition_at(rec, 130),
            "# HELP g A gauge.\n# TYPE g gauge\ng{h=\"n1\"} 1\n"
            "# HELP c_total \n# TYPE c_total counter\nc_total 0\n"
            "# HELP h \n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_count 2\nh_sum 3.5\n");
  EXPECT_THAT(telemetry::exposition_at(rec, 99), ::testing::IsEmpty());
  EXPECT_THAT(telemetry::exposition_at(rec, 1000), ::testing::HasSubstr("g{h=\"n2\"} 5\n"));
}

TEST(OpenMetricsReader, AFamilyContinuesAcrossFiles) {
  // run.om and another file of the same folder may both hold dcgm series: one family, more series.
  telemetry::Recording rec;
  read_openmetrics(write("x.om", "# TYPE g gauge\ng{h=\"n1\"} 1 100\n# EOF\n"), rec);
  read_openmetrics(write("y.om", "# TYPE g gauge\ng{h=\"n2\"} 2 100\n# EOF\n"), rec);
  ASSERT_EQ(rec.families.size(), 1u);
  EXPECT_EQ(rec.families[0].series.size(), 2u);
}

TEST(OpenMetricsReader, StreamsOneFamilyAtATimeAsReadWouldHoldIt) {
  // stream_openmetrics hands over each family once its lines are over, in file order, each as
  // read_openmetrics holds it (a counter named as its samples, every series complete), and
  // reports the bytes read, the last report the file's size.
  const std::string text =
      "# TYPE g gauge\ng{h=\"n1\"} 1 100\ng{h=\"n2\"} 5 160\ng{h=\"n1\"} 2 160\n"
      "# TYPE c counter\nc_total 0 100\nc_total 30 160\n"
      "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2 100\nh_count 2 100\nh_sum 3.5 100\n# EOF\n";
  const auto path = write("s.om", text);
  telemetry::Recording whole;
  read_openmetrics(path, whole);
  std::vector<telemetry::RecordedFamily> streamed;
  std::vector<std::uint64_t> progress;
  stream_openmetrics(
      path, [&](telemetry::RecordedFamily&& f) { streamed.push_back(std::move(f)); },
      [&](std::uint64_t bytes) { progress.push_back(bytes); });
  ASSERT_EQ(streamed.size(), whole.families.size());
  for (std::size_t i = 0; i < streamed.size(); ++i) {
    EXPECT_EQ(streamed[i].name, whole.families[i].name);
    EXPECT_EQ(streamed[i].type, whole.families[i].type);
    ASSERT_EQ(streamed[i].series.size(), whole.families[i].series.size());
    for (std::size_t k = 0; k < streamed[i].series.size(); ++k) {
      EXPECT_EQ(streamed[i].series[k].name_and_labels, whole.families[i].series[k].name_and_labels);
      EXPECT_EQ(streamed[i].series[k].timestamps_s, whole.families[i].series[k].timestamps_s);
      EXPECT_EQ(streamed[i].series[k].values, whole.families[i].series[k].values);
    }
  }
  EXPECT_EQ(streamed[1].name, "c_total");
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), text.size());
}

TEST(OpenMetricsReader, SplitsASeriesKeyIntoNameAndLabels) {
  // name{label="value",...}: values unescaped (\\ -> \, \" -> ", \n -> newline), labels in order.
  const auto [name, labels] = split_series_key("x{b=\"q\\\"z\\n\",a=\"1\"}", "f.om");
  EXPECT_EQ(name, "x");
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0], (std::pair<std::string, std::string>{"b", "q\"z\n"}));
  EXPECT_EQ(labels[1], (std::pair<std::string, std::string>{"a", "1"}));
  EXPECT_TRUE(split_series_key("up", "f.om").second.empty());
  EXPECT_THROW(split_series_key("x{a=\"1}", "f.om"), core::InputError);
  EXPECT_THROW(split_series_key("x{a=1}", "f.om"), core::InputError);
}

TEST(OpenMetricsReader, BadInputNamesFileAndLine) {
  const auto expect_error = [&](const std::string& text, const std::string& message) {
    const auto path = write("bad.om", text);
    telemetry::Recording rec;
    try {
      read_openmetrics(path, rec);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const core::InputError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(message));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("bad.om:"));
    }
  };
  expect_error("# TYPE g gauge\ng 1\n", "bad.om:2: sample \"g\" has no timestamp");
  expect_error("# TYPE g gauge\ng one 100\n", "\"one\" is not a number");
  expect_error("# TYPE g gauge\ng 1 100\ng 2 100\n", "timestamps of \"g\" must increase");
  expect_error("g{h=\"x 1 100\n", "unterminated label set");
  expect_error("g 1 100\n# EOF\ng 2 200\n", "bad.om:3: nothing may follow # EOF");
  expect_error("# TYPE g gauge\ng 1 100\n# TYPE k gauge\nk 1 100\n# TYPE g gauge\n", "appears twice");
}

}  // namespace
}  // namespace fmsim::config
