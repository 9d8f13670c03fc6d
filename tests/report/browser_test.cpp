// The HTML report in a real headless Chromium: it loads without errors, the charts are in the
// DOM, and a screenshot is a non-blank PNG of the requested size. Skipped when /usr/bin/chromium
// is absent (`make test-deps` installs Debian's chromium package).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "../golden/headless_chromium.hpp"
#include "report/document.hpp"
#include "sample_report.hpp"

namespace fmsim::report {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// A fresh directory per test run; removed afterwards unless FMSIM_KEEP_BROWSER_ARTIFACTS is set.
class BrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kChromium)) {
      GTEST_SKIP() << kChromium
                   << " not found: install Debian's chromium package (make test-deps) to run the browser test";
    }
    std::random_device random;
    dir_ = fs::path(::testing::TempDir()) /
           ("fmsim_browser_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    if (dir_.empty()) return;
    if (std::getenv("FMSIM_KEEP_BROWSER_ARTIFACTS") != nullptr || HasFailure()) {
      std::cout << "browser test artifacts kept in " << dir_ << "\n";
      return;
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Runs headless Chromium on `page` with `args`, stdout and stderr to files; a fresh profile
  // each time, no network features, and a 60 s limit so a hung browser cannot stall CI.
  int chromium(const std::string& name, const fs::path& page, const std::string& args) {
    return fmsim::testing::headless_chromium(dir_, page, name, args);
  }

  fs::path dir_;
};

// --dump-dom prints the DOM after load: the probe script marked <body data-fmsim-loaded="1">, no
// error was recorded on <html> (script error or CSP violation), the console logged nothing, and
// each chart is an <svg> with its data-chart attribute and drawn elements.
TEST_F(BrowserTest, ReportLoadsWithoutErrorsAndHasCharts) {
  const fs::path page = dir_ / "report.html";
  write_all(page, render_html(testing::sample_report()));
  ASSERT_EQ(chromium("dom", page, "--enable-logging=stderr --v=0 --dump-dom"), 0) << read_all(dir_ / "dom.err");
  const std::string dom = read_all(dir_ / "dom.out");
  const std::string log = read_all(dir_ / "dom.err");
  EXPECT_NE(dom.find("data-fmsim-loaded=\"1\""), std::string::npos) << dom.substr(0, 2000);
  const std::size_t html_tag = dom.find("<html");
  ASSERT_NE(html_tag, std::string::npos);
  const std::string html_attributes = dom.substr(html_tag, dom.find('>', html_tag) - html_tag);
  EXPECT_EQ(html_attributes.find("data-fmsim-error"), std::string::npos) << html_attributes;
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  for (const char* id : {"breakdown", "memory", "scaling", "systems"}) {
    EXPECT_NE(dom.find(std::string("data-chart=\"") + id + "\""), std::string::npos) << id;
  }
  EXPECT_GE(std::count(dom.begin(), dom.end(), '<'), 500);
  EXPECT_NE(dom.find("class=\"segment\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"marker\""), std::string::npos);
}

// The page is drawn (not blank): a 1280x2000 screenshot is a PNG (8-byte signature, IHDR first
// with width 1280 and height 2000) well above the size of a blank page. Measured with Chromium
// 156: a blank 1280x2000 page compresses to 11.6 KB (flat colour), the sample report to ~180 KB;
// 60 KB sits well between the two.
TEST_F(BrowserTest, ScreenshotIsANonBlankPng) {
  const fs::path page = dir_ / "report.html";
  write_all(page, render_html(testing::sample_report()));
  const fs::path png = dir_ / "report.png";
  ASSERT_EQ(chromium("shot", page, "--window-size=1280,2000 --screenshot='" + png.string() + "'"), 0)
      << read_all(dir_ / "shot.err");
  const std::string bytes = read_all(png);
  ASSERT_GE(bytes.size(), 33u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian_u32(bytes, 16), 1280u);
  EXPECT_EQ(big_endian_u32(bytes, 20), 2000u);
  EXPECT_GT(bytes.size(), 60'000u) << "a near-blank screenshot: the charts or text did not render";
}

// A table as wide as fmsim's widest (plan-serve's 11 columns) but with longer headers and text:
// 11 columns headed by five words each, a text column of long words and ten columns of
// 7-character numbers. Numbers do not wrap, so this is about the most a page holds; at a 1280 px
// and an 800 px window the renderer makes it fit (headers and text wrap, the wide set is
// tighter): no table scrolls (data-fmsim-overflow is empty) and the page's scroll width equals
// its visible width.
TEST_F(BrowserTest, WideTableFitsThePage) {
  Document doc{.title = "Wide table", .subtitle = "", .sections = {}, .footer = ""};
  Table t;
  for (int c = 0; c < 11; ++c) t.header.push_back("a long column heading number " + std::to_string(c) + " (unit)");
  for (int r = 0; r < 6; ++r) {
    std::vector<std::string> row{"p5en.48xlarge tp8 pp4 dp16 zero1 mbs2 full-recompute fp8"};
    for (int c = 1; c < 11; ++c) row.push_back("$" + std::to_string(10 * r + c) + ".125");
    t.rows.push_back(row);
  }
  doc.sections.push_back(Section{"Table", {}});
  doc.sections.back().add(t);
  const fs::path page = dir_ / "wide.html";
  write_all(page, render_html(doc));
  for (const int width : {1280, 800}) {
    const auto fit = fmsim::testing::page_fit(dir_, page, "wide-" + std::to_string(width), width);
    ASSERT_EQ(fit.exit_code, 0) << fit.log;
    ASSERT_TRUE(fit.page_width.has_value() && fit.overflow.has_value()) << "the probe script did not run";
    EXPECT_EQ(*fit.page_width, std::to_string(width) + "/" + std::to_string(width)) << width;
    EXPECT_EQ(*fit.overflow, "") << width;
  }
}

}  // namespace
}  // namespace fmsim::report
