// The offline metrics report's charts keep the extremes of long series: an outage is drawn at its
// depth, not averaged into its neighbours.
#include "telemetry/run_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace fmsim::telemetry {
namespace {

constexpr std::int64_t kStart = 1767225600;

// fmsim_tokens_per_second over 30 days at 1-minute resolution (43,201 samples), 400,000 tokens/s
// but for a one-sample outage to 0 at minute 20,000 and a three-sample dip to 230,000 at 30,000.
Recording thirty_days_with_an_outage() {
  RecordedSeries s{
      .name_and_labels = "fmsim_tokens_per_second{job=\"j\",instance=\"fmsim\"}", .timestamps_s = {}, .values = {}};
  for (std::int64_t m = 0; m <= 30 * 24 * 60; ++m) {
    s.timestamps_s.push_back(kStart + 60 * m);
    double v = 400000.0;
    if (m == 20000) v = 0.0;
    if (m >= 30000 && m < 30003) v = 230000.0;
    s.values.push_back(v);
  }
  Recording rec;
  rec.first_timestamp_s = s.timestamps_s.front();
  rec.last_timestamp_s = s.timestamps_s.back();
  rec.samples = s.values.size();
  rec.families.push_back({.name = "fmsim_tokens_per_second", .type = "gauge", .help = "", .series = {s}});
  return rec;
}

TEST(RunReport, LongSeriesKeepEachBucketsMinimumAndMaximum) {
  const Recording rec = thirty_days_with_an_outage();
  const auto& samples = rec.families.front().series.front();
  const auto panel = throughput_panel(rec);
  ASSERT_EQ(panel.series.size(), 1u);
  const auto& line = panel.series.front();
  ASSERT_EQ(line.x.size(), line.y.size());
  // At most 4 points (first, lowest, highest, last) in each of 240 buckets: a chart, not 43,201 points.
  EXPECT_LE(line.y.size(), 4u * 240u);
  // The chart's extremes are the series': the outage reaches 0, the plateau 400,000.
  EXPECT_EQ(*std::min_element(line.y.begin(), line.y.end()), 0.0);
  EXPECT_EQ(*std::max_element(line.y.begin(), line.y.end()), 400000.0);
  // The outage is drawn at its hour (minute 20,000) and the dip at its depth.
  const double outage_h = 20000.0 / 60.0;
  bool outage_drawn = false, dip_drawn = false;
  for (std::size_t i = 0; i < line.x.size(); ++i) {
    if (line.y[i] == 0.0 && line.x[i] == outage_h) outage_drawn = true;
    if (line.y[i] == 230000.0 && line.x[i] == 30000.0 / 60.0) dip_drawn = true;
  }
  EXPECT_TRUE(outage_drawn);
  EXPECT_TRUE(dip_drawn);
  // M4 in every bucket: over each of 240 equal time spans, the lowest and highest drawn points are
  // the lowest and highest samples in that span.
  const double span_h = 30.0 * 24.0 / 240.0;
  for (int b = 0; b < 240; ++b) {
    const double lo_h = b * span_h, hi_h = (b + 1) * span_h;
    double sample_min = 1e300, sample_max = -1e300, drawn_min = 1e300, drawn_max = -1e300;
    for (std::size_t i = 0; i < samples.values.size(); ++i) {
      const double h = static_cast<double>(samples.timestamps_s[i] - kStart) / 3600.0;
      if (h < lo_h || (h >= hi_h && b < 239)) continue;
      sample_min = std::min(sample_min, samples.values[i]);
      sample_max = std::max(sample_max, samples.values[i]);
    }
    for (std::size_t i = 0; i < line.x.size(); ++i) {
      if (line.x[i] < lo_h || (line.x[i] >= hi_h && b < 239)) continue;
      drawn_min = std::min(drawn_min, line.y[i]);
      drawn_max = std::max(drawn_max, line.y[i]);
    }
    EXPECT_EQ(drawn_min, sample_min) << "bucket " << b;
    EXPECT_EQ(drawn_max, sample_max) << "bucket " << b;
  }
  // Hundreds of points are drawn as the line alone: no marker per point (they would hide it); the
  // line's tooltip gives its range, the outage's 0 included.
  EXPECT_FALSE(panel.markers);
  const std::string svg = report::render_svg(panel, "t");
  const auto series = svg.find("class=\"series\"");
  ASSERT_NE(series, std::string::npos);
  EXPECT_EQ(svg.find("class=\"marker\"", series), std::string::npos);
  EXPECT_NE(svg.find("<title>tokens/s: tokens/s from 0 tokens/s to 400,000 tokens/s</title>"), std::string::npos)
      << svg;
}

TEST(RunReport, ShortSeriesAreDrawnAsStepsThroughEverySample) {
  // 100 samples (at most 240 are drawn as they are): each sample is a point, held until the next.
  Recording rec = thirty_days_with_an_outage();
  auto& s = rec.families.front().series.front();
  s.timestamps_s.resize(100);
  s.values.resize(100);
  s.values[50] = 0.0;
  const auto line = throughput_panel(rec).series.front();
  EXPECT_EQ(line.y.size(), 2u * 100u - 1u);  // a point per sample plus the step before each later one
  EXPECT_EQ(*std::min_element(line.y.begin(), line.y.end()), 0.0);
  EXPECT_TRUE(throughput_panel(rec).markers);
}

TEST(RunReport, KeepForReportHoldsOnlyWhatTheReportDrawsAndCountsTheRest) {
  // keep_for_report keeps every series of a summed family (fmsim_failures_total), the first series
  // of a charted one (DCGM power: "GPUs of the first node"), nothing of a family the report does
  // not draw; the subtitle's series and sample counts and the time span still cover all of them.
  const auto series = [](std::string key, std::vector<std::int64_t> t, std::vector<double> v) {
    return RecordedSeries{.name_and_labels = std::move(key), .timestamps_s = std::move(t), .values = std::move(v)};
  };
  Recording rec;
  keep_for_report(rec,
                  {.name = "DCGM_FI_DEV_POWER_USAGE",
                   .type = "gauge",
                   .help = "",
                   .series = {series("p{gpu=\"0\"}", {100, 160}, {700, 690}), series("p{gpu=\"1\"}", {100}, {650})}},
                  "a.om");
  keep_for_report(rec,
                  {.name = "fmsim_failures_total",
                   .type = "counter",
                   .help = "",
                   .series = {series("f{cause=\"gpu\"}", {90}, {1}), series("f{cause=\"nic\"}", {200}, {2})}},
                  "a.om");
  keep_for_report(rec,
                  {.name = "node_cpu_seconds_total", .type = "counter", .help = "", .series = {series("c", {50}, {3})}},
                  "a.om");
  // The first power series continues in a second file; a second file's failures add a series.
  keep_for_report(rec,
                  {.name = "DCGM_FI_DEV_POWER_USAGE",
                   .type = "gauge",
                   .help = "",
                   .series = {series("p{gpu=\"0\"}", {220}, {680})}},
                  "b.om");
  ASSERT_EQ(rec.families.size(), 2u);
  EXPECT_EQ(rec.families[0].series.size(), 1u);
  EXPECT_EQ(rec.families[0].series[0].values, (std::vector<double>{700, 690, 680}));
  EXPECT_EQ(rec.families[1].series.size(), 2u);
  // 5 series written (the continued one is the same series), 7 samples, from t = 50 to 220.
  EXPECT_EQ(rec.series_left_out + rec.families[0].series.size() + rec.families[1].series.size(), 5u);
  EXPECT_EQ(rec.samples, 7u);
  EXPECT_EQ(rec.first_timestamp_s, 50);
  EXPECT_EQ(rec.last_timestamp_s, 220);
  // A continued series must go on increasing, as within one file; the error names the file.
  try {
    keep_for_report(rec,
                    {.name = "DCGM_FI_DEV_POWER_USAGE",
                     .type = "gauge",
                     .help = "",
                     .series = {series("p{gpu=\"0\"}", {220}, {1})}},
                    "c.om");
    FAIL() << "a timestamp that does not increase was accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.om"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fmsim::telemetry
