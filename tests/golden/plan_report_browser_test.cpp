// `fmsim plan --report`: the HTML file is self-contained and, in a real headless Chromium, loads
// without errors with every chart present; a screenshot is a non-blank PNG. The browser part is
// skipped when /usr/bin/chromium is absent (`make test-deps` installs Debian's chromium package),
// following tests/report/browser_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "headless_chromium.hpp"
#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::headless_chromium;
using fmsim::testing::kChromium;
using fmsim::testing::run_fmsim;
const auto read_all = fmsim::testing::read_file_bytes;
using ::testing::HasSubstr;

std::uint32_t big_endian_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// Writes a plan report for a quick search (Llama 3.1 8B, 64 GPUs, two systems) into a fresh
// directory, removed afterwards unless a test failed or FMSIM_KEEP_BROWSER_ARTIFACTS is set.
class PlanReport : public ::testing::Test {
 protected:
  // The report is written once for the suite (the search is the slow part).
  static void SetUpTestSuite() {
    std::random_device random;
    dir_ = fs::path(::testing::TempDir()) /
           ("fmsim_plan_report_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
    fs::create_directories(dir_);
    page_ = dir_ / "plan.html";
    run_ = run_fmsim({"plan", "--model", "llama3.1-8b", "--gpus", "64", "--systems", "p5.48xlarge,u-p6e-gb200x72",
                      "--threads", "2", "--report", page_.string()});
    html_ = read_all(page_);
  }

  static void TearDownTestSuite() {
    if (std::getenv("FMSIM_KEEP_BROWSER_ARTIFACTS") != nullptr || failed_) {
      std::cout << "plan report artifacts kept in " << dir_ << "\n";
      return;
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  void SetUp() override {
    ASSERT_EQ(run_.exit_code, 0) << run_.err;
    ASSERT_THAT(run_.out, HasSubstr("Report written to"));
  }
  void TearDown() override { failed_ = failed_ || HasFailure(); }

  static int chromium(const std::string& name, const std::string& args) {
    return headless_chromium(dir_, page_, name, args);
  }

  static inline fs::path dir_, page_;
  static inline std::string html_;
  static inline fmsim::testing::CliResult run_;
  static inline bool failed_ = false;
};

TEST_F(PlanReport, SelfContainedWithEveryChart) {
  // One file: no external URLs (no src/href to http, no @import), and the four chart kinds the
  // issue asks for: breakdown per layout, memory against capacity, throughput vs GPUs, systems.
  EXPECT_EQ(html_.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html_.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html_.find("@import"), std::string::npos);
  for (const char* chart :
       {"data-chart=\"breakdown\"", "data-chart=\"memory-p5.48xlarge\"", "data-chart=\"memory-u-p6e-gb200x72\"",
        "data-chart=\"scaling-throughput\"", "data-chart=\"systems\""}) {
    EXPECT_THAT(html_, HasSubstr(chart));
  }
  EXPECT_THAT(html_, HasSubstr("Training plan: llama3.1-8b on 64 GPUs"));
  EXPECT_THAT(html_, HasSubstr("fmsim plan --model llama3.1-8b"));  // the footer names the command
}

TEST_F(PlanReport, LoadsInChromiumWithoutErrors) {
  // --dump-dom after load: the probe script marked <body data-fmsim-loaded="1">, nothing recorded
  // a script error or CSP violation on <html>, the console is silent, and the charts are in the DOM.
  if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " not found (make test-deps installs chromium)";
  ASSERT_EQ(chromium("dom", "--enable-logging=stderr --v=0 --dump-dom"), 0) << read_all(dir_ / "dom.err");
  const std::string dom = read_all(dir_ / "dom.out");
  const std::string log = read_all(dir_ / "dom.err");
  EXPECT_THAT(dom, HasSubstr("data-fmsim-loaded=\"1\""));
  const std::size_t html_tag = dom.find("<html");
  ASSERT_NE(html_tag, std::string::npos);
  EXPECT_EQ(dom.substr(html_tag, dom.find('>', html_tag) - html_tag).find("data-fmsim-error"), std::string::npos);
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  for (const char* chart : {"breakdown", "memory-p5.48xlarge", "scaling-throughput", "scaling-days", "systems"}) {
    EXPECT_THAT(dom, HasSubstr(std::string("data-chart=\"") + chart + "\""));
  }
}

TEST_F(PlanReport, ScreenshotIsANonBlankPng) {
  // A 1280x2400 screenshot is a PNG (signature, IHDR with that size) far larger than a blank page
  // (a flat 1280x2000 page compresses to ~12 KB with Chromium; see tests/report/browser_test.cpp).
  if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " not found (make test-deps installs chromium)";
  const fs::path png = dir_ / "plan.png";
  ASSERT_EQ(chromium("shot", "--window-size=1280,2400 --screenshot='" + png.string() + "'"), 0)
      << read_all(dir_ / "shot.err");
  const std::string bytes = read_all(png);
  ASSERT_GE(bytes.size(), 33u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian_u32(bytes, 16), 1280u);
  EXPECT_EQ(big_endian_u32(bytes, 20), 2400u);
  EXPECT_GT(bytes.size(), 60'000u) << "a near-blank screenshot: the charts or text did not render";
}

TEST(PlanServeReport, OfflineParetoChartLoadsInChromium) {
  // `fmsim plan-serve --report`: one self-contained file with the plans table and the Pareto chart
  // (data-chart="pareto"); in headless Chromium it loads with no script error or console message.
  std::random_device random;
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("fmsim_plan_serve_report_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
  fs::create_directories(dir);
  const fs::path page = dir / "plan-serve.html";
  const auto r = run_fmsim({"plan-serve",  "--model",     "llama3.1-8b", "--precision", "fp8",  "--families",
                            "p5.48xlarge", "--isl",       "512",         "--osl",       "128",  "--rate",
                            "50",          "--slo-ttft",  "1s",          "--slo-tpot",  "40ms", "--probe-requests",
                            "40",          "--no-disagg", "--report",    page.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = read_all(page);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_THAT(html, HasSubstr("data-chart=\"pareto\""));
  EXPECT_THAT(html, HasSubstr("Serving plan: llama3.1-8b"));
  EXPECT_THAT(html, HasSubstr("tokens/s per user"));
  if (fs::exists(kChromium)) {
    ASSERT_EQ(headless_chromium(dir, page, "dom", "--enable-logging=stderr --v=0 --dump-dom"), 0)
        << read_all(dir / "dom.err");
    const std::string dom = read_all(dir / "dom.out");
    const std::string log = read_all(dir / "dom.err");
    EXPECT_THAT(dom, HasSubstr("data-fmsim-loaded=\"1\""));
    EXPECT_THAT(dom, HasSubstr("data-chart=\"pareto\""));
    EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
    EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  }
  std::error_code ignored;
  if (!HasFailure()) fs::remove_all(dir, ignored);
}

}  // namespace
