// Every HTML report fmsim writes (plan, plan-serve, cluster, metrics report) fits the page in a
// real headless Chromium: at a desktop window (1280 px), a narrow one (800 px) and printed on A4
// (718 px with the @media print rules), no table is wider than the page (the probe script's
// data-fmsim-overflow is empty) and nothing sticks out at the right (data-fmsim-page-width is
// "W/W": the page's scroll width equals its visible width). Skipped when /usr/bin/chromium is absent (`make
// test-deps`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "headless_chromium.hpp"
#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;

struct Report {
  std::string name;                            ///< file stem, e.g. "plan-serve"
  std::vector<std::vector<std::string>> runs;  ///< commands run in order; "{page}", "{dir}" replaced
};

// The reports of each command, with the widest tables each has: plan-serve with disaggregated
// rows ("1P+1D") over two systems, cluster with a second policy and a reservation, plan over two
// systems (its per-system, scaling and layout tables), and the metrics report of a short run.
std::vector<Report> reports() {
  return {
      {"plan",
       {{"plan", "--model", "llama3.1-8b", "--gpus", "64", "--systems", "p5.48xlarge,u-p6e-gb200x72", "--threads", "2",
         "--report", "{page}"}}},
      {"plan-serve",
       {{"plan-serve",
         "--model",
         "llama3.1-8b",
         "--precision",
         "fp8",
         "--systems",
         "p5.48xlarge,p5en.48xlarge",
         "--isl",
         "512",
         "--osl",
         "128",
         "--rate",
         "50",
         "--slo-ttft",
         "1s",
         "--slo-tpot",
         "40ms",
         "--probe-requests",
         "40",
         "--top",
         "8",
         "--report",
         "{page}"}}},
      {"cluster",
       {{"cluster", "--cluster", "u-p6e-gb200x72:8", "--synthetic", "300", "--compare", "tree", "--reservation",
         "ReservationName=cb1 StartTime=now+2days Duration=1-00:00:00 NodeCnt=18 CapacityBlock=YES", "--report",
         "{page}"}}},
      {"metrics-report",
       {{"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--gbs", "64", "--duration", "6h",
         "--metrics-out", "{dir}/metrics"},
        {"metrics", "report", "{dir}/metrics", "--html", "{page}"}}},
  };
}

std::string substitute(std::string word, const fs::path& dir, const fs::path& page) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{page}", page.string()},
                                   std::pair<std::string, std::string>{"{dir}", dir.string()}}) {
    if (const auto at = word.find(key); at != std::string::npos) word.replace(at, key.size(), value);
  }
  return word;
}

TEST(ReportsFitThePage, NoTableWiderThanThePageInAnyReport) {
  if (!fmsim::testing::has_chromium()) GTEST_SKIP() << fmsim::testing::kChromium << " not found (make test-deps)";
  std::random_device random;
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("fmsim_report_fit_" + std::to_string(::getpid()) + "_" + std::to_string(random()));
  fs::create_directories(dir);
  for (const auto& report : reports()) {
    SCOPED_TRACE(report.name);
    const fs::path page = dir / (report.name + ".html");
    for (const auto& run : report.runs) {
      std::vector<std::string> words;
      for (const auto& w : run) words.push_back(substitute(w, dir, page));
      const auto r = run_fmsim(words);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_TRUE(fs::exists(page));
    // A desktop window, a narrow one, and the printed page: A4 (210 mm) less Chromium's default
    // margins (10 mm a side) is 190 mm, 718 CSS px at 96 px an inch, laid out with the @media
    // print rules (a table that scrolls on screen is cut off on paper).
    struct View {
      int width;
      bool print;
    };
    for (const auto [width, print] : {View{1280, false}, View{800, false}, View{718, true}}) {
      SCOPED_TRACE((print ? "printed, width " : "window width ") + std::to_string(width));
      const auto fit = fmsim::testing::page_fit(
          dir, page, report.name + "-" + std::to_string(width) + (print ? "-print" : ""), width, print);
      ASSERT_EQ(fit.exit_code, 0) << fit.log;
      ASSERT_TRUE(fit.page_width.has_value()) << "the probe script did not run";
      const std::string visible = std::to_string(width);
      EXPECT_EQ(*fit.page_width, visible + "/" + visible) << "the page scrolls sideways";
      ASSERT_TRUE(fit.overflow.has_value());
      EXPECT_EQ(*fit.overflow, "") << "tables wider than the page (table:scroll/visible px)";
    }
  }
  std::error_code ignored;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir, ignored);
}

}  // namespace
