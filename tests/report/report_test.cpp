// HTML report: well-formed markup, escaping, self-containment, charts present and drawn to scale.
#include "report/document.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "core/error.hpp"
#include "html_check.hpp"
#include "report/charts.hpp"
#include "sample_report.hpp"

namespace fmsim::report {
namespace {

using testing::check_html;
using testing::sample_report;
using testing::StartTag;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The value of attribute `name` in a start tag's attribute text, or "" when absent.
std::string attribute(const std::string& attributes, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = attributes.find(key);
  if (at == std::string::npos) return "";
  const std::size_t start = at + key.size();
  return attributes.substr(start, attributes.find('"', start) - start);
}

// The checker used below catches the faults it is meant to catch.
TEST(Report, HtmlCheckerRejectsBrokenMarkup) {
  EXPECT_TRUE(check_html("<p>a &amp; b<br><svg><rect/></svg></p>").empty());
  EXPECT_FALSE(check_html("<p><b>x</p></b>").empty());
  EXPECT_FALSE(check_html("<p>a < b</p>").empty());
  EXPECT_FALSE(check_html("<p>a & b</p>").empty());
  EXPECT_FALSE(check_html("<div><p>x</p>").empty());
  EXPECT_FALSE(check_html("<p title=\"a<b\">x</p>").empty());
}

// Every element is closed in order, attributes are quoted, text has no raw '<' or bare '&'.
TEST(Report, SampleReportIsWellFormed) {
  const std::string html = render_html(sample_report());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  EXPECT_EQ(check_html(html), std::vector<std::string>{});
}

// All four chart kinds are present as <svg class="fmsim-chart ..." data-chart="..."> with unique ids,
// a <title>, and a viewBox.
TEST(Report, AllChartsArePresent) {
  std::vector<StartTag> tags;
  ASSERT_TRUE(check_html(render_html(sample_report()), &tags).empty());
  std::map<std::string, std::string> kind_of;  // data-chart -> class
  std::set<std::string> ids;
  for (const auto& tag : tags) {
    if (tag.name != "svg") continue;
    const std::string cls = attribute(tag.attributes, "class");
    EXPECT_TRUE(cls.starts_with("fmsim-chart ")) << tag.attributes;
    EXPECT_FALSE(attribute(tag.attributes, "viewBox").empty());
    EXPECT_TRUE(ids.insert(attribute(tag.attributes, "id")).second);
    kind_of[attribute(tag.attributes, "data-chart")] = cls;
  }
  EXPECT_EQ(kind_of, (std::map<std::string, std::string>{{"breakdown", "fmsim-chart fmsim-chart-stacked-bar"},
                                                         {"memory", "fmsim-chart fmsim-chart-bar"},
                                                         {"scaling", "fmsim-chart fmsim-chart-line"},
                                                         {"systems", "fmsim-chart fmsim-chart-grouped-bar"}}));
}

// Self-contained: the only "http" is the SVG namespace URI (never fetched) or the CSP meta's
// http-equiv; no src attributes,
// links only to anchors in the page, and a CSP that forbids loading anything.
TEST(Report, HasNoExternalReferences) {
  const std::string html = render_html(sample_report());
  const std::string svg_ns = "http://www.w3.org/2000/svg\"";
  EXPECT_EQ(count(html, "http"), count(html, svg_ns) + count(html, "http-equiv=\"Content-Security-Policy\""));
  EXPECT_EQ(count(html, "//"), count(html, svg_ns));  // no protocol-relative URLs either
  std::vector<StartTag> tags;
  check_html(html, &tags);
  for (const auto& tag : tags) {
    EXPECT_EQ(attribute(tag.attributes, "src"), "") << tag.name;
    const std::string href = attribute(tag.attributes, "href");
    EXPECT_TRUE(href.empty() || href.starts_with("#section-")) << href;
  }
  EXPECT_NE(html.find("content=\"default-src 'none';"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
}

// & < > " ' in any user-supplied text are written as &amp; &lt; &gt; &quot; &#39;.
TEST(Report, EscapesAllText) {
  const std::string nasty = "<script>alert(\"x\")</script> & 'q'";
  const std::string escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;";
  EXPECT_EQ(escape_html(nasty), escaped);
  Document doc;
  doc.title = nasty;
  doc.subtitle = nasty;
  doc.footer = nasty;
  Section s{.title = nasty, .blocks = {}};
  s.add(Paragraph{nasty, ParagraphStyle::Note})
      .add(KeyFigures{{{nasty, nasty}}})
      .add(
          Table{.caption = nasty, .header = {nasty}, .rows = {{nasty}}, .align = {}, .highlight_row = 0, .note = nasty})
      .add(StackedBarChart{.id = nasty,
                           .title = nasty,
                           .value_label = nasty,
                           .unit = nasty,
                           .bars = {nasty},
                           .segments = {nasty},
                           .values = {{1.0}},
                           .highlight_bar = {}})
      .add(BarChart{.id = nasty,
                    .title = nasty,
                    .value_label = nasty,
                    .unit = nasty,
                    .labels = {nasty},
                    .values = {2.0},
                    .reference = ReferenceLine{1.0, nasty},
                    .highlight_bar = {}})
      .add(LineChart{.id = nasty,
                     .title = nasty,
                     .x_label = nasty,
                     .y_label = nasty,
                     .x_unit = nasty,
                     .y_unit = nasty,
                     .series = {{nasty, {1, 2}, {3, 4}}}})
      .add(GroupedBarChart{.id = nasty,
                           .title = nasty,
                           .groups = {nasty},
                           .series = {nasty},
                           .panels = {{.title = nasty, .value_label = nasty, .unit = nasty, .values = {{1.0}}}}});
  doc.sections = {s, Section{.title = "second", .blocks = {}}};
  const std::string html = render_html(doc);
  EXPECT_EQ(check_html(html), std::vector<std::string>{});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("'q'"), std::string::npos);
  EXPECT_GE(count(html, escaped), 20u);
}

// Auto alignment: a column right-aligns when every non-placeholder cell starts with a number
// ("12.7", "41.2%", "61.5 GiB", "3,210"; "n/a" ignored); "tp8 pp4 dp16" and free text stay left.
// The highlighted row gets class "best" and a badge.
TEST(Report, TableAlignsNumbersAndHighlightsBest) {
  const std::string html = render_html(sample_report());
  EXPECT_NE(html.find("<thead><tr><th scope=\"col\">layout</th><th scope=\"col\" class=\"num\">step time (s)</th>"
                      "<th scope=\"col\" class=\"num\">MFU</th><th scope=\"col\" class=\"num\">memory per GPU</th>"
                      "<th scope=\"col\" class=\"num\">tokens/s per GPU</th><th scope=\"col\">notes</th></tr></thead>"),
            std::string::npos);
  EXPECT_NE(
      html.find("<tr class=\"best\"><td>tp8 pp4 dp16<span class=\"badge\">best</span></td><td class=\"num\">12.7</td>"),
      std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"best\">"), 1u);
  Table forced{
      .caption = "", .header = {"a"}, .rows = {{"1"}}, .align = {Align::Left}, .highlight_row = {}, .note = ""};
  Document doc{.title = "t", .subtitle = "", .sections = {Section{.title = "s", .blocks = {forced}}}, .footer = ""};
  EXPECT_NE(render_html(doc).find("<th scope=\"col\">a</th>"), std::string::npos);
}

// Stacked bars are drawn to scale: within one bar, segment widths are proportional to values
// (compute 9.1 s is 9.1/1.2 times the tp segment), segments are contiguous, and every segment
// has a tooltip with its value and share: 9.1 / 12.7 = 71.7%.
TEST(Report, StackedBarSegmentsAreToScale) {
  const Document doc = sample_report();
  const auto& chart = std::get<StackedBarChart>(doc.sections[1].blocks[1]);
  const std::string svg = render_svg(chart, "c");
  EXPECT_EQ(check_html(svg), std::vector<std::string>{});
  const std::regex rect_re(
      R"re(<rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="20" fill="#[0-9A-F]{6}" class="segment"><title>([^<]*)</title>)re");
  std::vector<std::tuple<double, double, double, std::string>> first_bar;  // x, y, width, tooltip
  std::size_t segments = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect_re); it != std::sregex_iterator(); ++it) {
    ++segments;
    const double y = std::stod((*it)[2]);
    if (first_bar.empty() || std::get<1>(first_bar.front()) == y) {
      first_bar.emplace_back(std::stod((*it)[1]), y, std::stod((*it)[3]), (*it)[4]);
    }
  }
  EXPECT_EQ(segments, 7u * 4u);  // 4 bars with 7 positive segments each (ep = 0); the NaN bar has none
  ASSERT_EQ(first_bar.size(), 7u);
  EXPECT_NEAR(std::get<2>(first_bar[0]) / std::get<2>(first_bar[1]), 9.1 / 1.2, 0.05);
  for (std::size_t i = 1; i < first_bar.size(); ++i) {
    EXPECT_NEAR(std::get<0>(first_bar[i]), std::get<0>(first_bar[i - 1]) + std::get<2>(first_bar[i - 1]), 0.11);
  }
  EXPECT_EQ(std::get<3>(first_bar[0]), "tp8 pp4 dp16: compute 9.1 s (71.7% of 12.7 s)");
  EXPECT_NE(svg.find(">n/a</text>"), std::string::npos);  // the bar with no data
  EXPECT_EQ(count(svg, "class=\"swatch\""), 8u);          // legend: one swatch per segment
  EXPECT_EQ(count(svg, "class=\"highlight\""), 1u);
}

// Bars above the reference (93.1 GiB > 80 GiB) use the warning colour and say so; others do not.
TEST(Report, BarChartMarksBarsBeyondTheReference) {
  const Document doc = sample_report();
  const auto& chart = std::get<BarChart>(doc.sections[1].blocks[2]);
  const std::string svg = render_svg(chart, "c");
  EXPECT_EQ(check_html(svg), std::vector<std::string>{});
  EXPECT_EQ(count(svg, "class=\"bar over\"><title>"), 1u);
  EXPECT_EQ(count(svg, "class=\"bar\"><title>"), 4u);
  EXPECT_NE(svg.find("<title>tp4 pp2 dp64: 93.1 GiB (exceeds HBM capacity 80 GiB)</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"ref\""), std::string::npos);
  EXPECT_NE(svg.find(">HBM capacity 80 GiB</text>"), std::string::npos);
}

// Line chart on a log-2 x axis: 64..2048 GPUs gives ticks 64, 128, ..., 2,048; one marker with a
// tooltip per finite point (17 of 18: one NaN), the NaN point is skipped.
TEST(Report, LineChartHasLogTicksAndMarkers) {
  const Document doc = sample_report();
  const auto& chart = std::get<LineChart>(doc.sections[2].blocks[0]);
  const std::string svg = render_svg(chart, "c");
  EXPECT_EQ(check_html(svg), std::vector<std::string>{});
  for (const char* tick : {">64<", ">128<", ">256<", ">512<", ">1,024<", ">2,048<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(count(svg, "class=\"marker\"><title>"), 17u);
  EXPECT_NE(svg.find("<title>H100 (p5.48xlarge): GPUs 512, tokens/s per GPU 3,210 tokens/s</title>"),
            std::string::npos);
  EXPECT_EQ(count(svg, "class=\"line\""), 3u);
}

// Grouped bars: 2 panels x 3 groups x 3 systems = 18 bars, one missing (NaN) shown as "n/a".
TEST(Report, GroupedBarChartDrawsEveryPanel) {
  const Document doc = sample_report();
  const auto& chart = std::get<GroupedBarChart>(doc.sections[3].blocks[0]);
  const std::string svg = render_svg(chart, "c");
  EXPECT_EQ(check_html(svg), std::vector<std::string>{});
  EXPECT_EQ(count(svg, "class=\"panel\""), 2u);
  EXPECT_EQ(count(svg, "class=\"bar\"><title>"), 17u);
  EXPECT_EQ(count(svg, ">n/a<title>"), 1u);
  EXPECT_NE(svg.find("<title>llama3-70b, p6-b200: time to train 26.4 d</title>"), std::string::npos);
}

// Nice ticks: steps of 1, 2, 2.5 or 5 x 10^k, enclosing the range.
TEST(Report, NiceTicks) {
  EXPECT_EQ(nice_ticks(0, 97), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(nice_ticks(0, 14.2), (std::vector<double>{0, 5, 10, 15}));            // raw step 2.84 -> 5
  EXPECT_EQ(nice_ticks(0, 11), (std::vector<double>{0, 2.5, 5, 7.5, 10, 12.5}));  // raw step 2.2 -> 2.5
  EXPECT_EQ(nice_ticks(0, 0.87), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(nice_ticks(0, 3.2e9), (std::vector<double>{0, 1e9, 2e9, 3e9, 4e9}));
  // A single value is widened by half its size each way: [6, 18], raw step 2.4 -> 2.5.
  EXPECT_EQ(nice_ticks(12, 12), (std::vector<double>{5, 7.5, 10, 12.5, 15, 17.5, 20}));
  EXPECT_EQ(nice_ticks(-3, 7), (std::vector<double>{-4, -2, 0, 2, 4, 6, 8}));
  EXPECT_EQ(nice_ticks(0, 0), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
}

// Log ticks: powers of 2 when at most 12 fit (8..4096 is 10), otherwise powers of 10.
TEST(Report, LogTicks) {
  EXPECT_EQ(log_ticks(8, 4096), (std::vector<double>{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(log_ticks(10, 1000), (std::vector<double>{8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(log_ticks(1, 1e6), (std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5, 1e6}));
}

// 3 significant digits below 100; grouped whole numbers to 10 million; then M, G, T.
TEST(Report, FormatsValues) {
  EXPECT_EQ(format_value(0.0123456), "0.0123");
  EXPECT_EQ(format_value(12.5), "12.5");
  EXPECT_EQ(format_value(14.2), "14.2");
  EXPECT_EQ(format_value(64.0), "64");
  EXPECT_EQ(format_value(1234567), "1,234,567");
  EXPECT_EQ(format_value(12345678), "12.3M");
  EXPECT_EQ(format_value(999.9e6), "1G");
  EXPECT_EQ(format_value(-3.5e12), "-3.5T");
  EXPECT_EQ(format_value(std::nan("")), "n/a");
  EXPECT_EQ(format_value(0), "0");
}

// Same document, same bytes.
TEST(Report, IsDeterministic) { EXPECT_EQ(render_html(sample_report()), render_html(sample_report())); }

// Shape mismatches are programming errors.
TEST(Report, RejectsMismatchedShapes) {
  EXPECT_THROW(render_svg(StackedBarChart{.id = "x",
                                          .title = "",
                                          .value_label = "",
                                          .unit = "",
                                          .bars = {"a"},
                                          .segments = {"s1", "s2"},
                                          .values = {{1.0}},
                                          .highlight_bar = {}},
                          "c"),
               core::InternalError);
  EXPECT_THROW(render_svg(BarChart{.id = "x",
                                   .title = "",
                                   .value_label = "",
                                   .unit = "",
                                   .labels = {"a"},
                                   .values = {-1.0},
                                   .reference = {},
                                   .highlight_bar = {}},
                          "c"),
               core::InternalError);
  Table ragged{.caption = "", .header = {"a", "b"}, .rows = {{"1"}}, .align = {}, .highlight_row = {}, .note = ""};
  Document doc{.title = "t", .subtitle = "", .sections = {Section{.title = "s", .blocks = {ragged}}}, .footer = ""};
  EXPECT_THROW(render_html(doc), core::InternalError);
}

// Empty inputs still render valid markup.
TEST(Report, EmptyDocumentAndChartsRender) {
  Document doc{.title = "empty", .subtitle = "", .sections = {}, .footer = ""};
  EXPECT_EQ(check_html(render_html(doc)), std::vector<std::string>{});
  Section s{.title = "s", .blocks = {StackedBarChart{}, BarChart{}, LineChart{}, GroupedBarChart{}}};
  doc.sections = {s};
  EXPECT_EQ(check_html(render_html(doc)), std::vector<std::string>{});
}

}  // namespace
}  // namespace fmsim::report
