// `fmsim run --metrics-out`: the metrics file, checked by the real promtool when installed.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

std::string make_temp_dir() {
  std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "fmsim-metrics-XXXXXX").string();
  const char* dir = mkdtemp(tmpl.data());
  if (dir == nullptr) throw std::runtime_error("mkdtemp failed");
  return dir;
}

struct TempDir {
  std::string path = make_temp_dir();
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

TEST(MetricsCli, RunWritesOpenMetricsThatPromtoolAccepts) {
  TempDir tmp;
  const auto r = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                            "--duration", "12h", "--replications", "0", "--metrics-out", tmp.path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Metrics: " + tmp.path + "/run.om"));
  std::ifstream in(tmp.path + "/run.om");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (const char* family : {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                             "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_DEV_POWER_USAGE",
                             "node_amazonefa_tx_bytes", "node_network_receive_bytes_total", "fmsim_step_time_seconds",
                             "fmsim_tokens_total", "fmsim_checkpoint_saves_total", "fmsim_failures_total",
                             "fmsim_restarts_total", "fmsim_ettr_ratio"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + family + " ")) << family;
  }
  EXPECT_TRUE(text.ends_with("# EOF\n"));
  if (!have_promtool()) GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  // promtool exits 1 on a parse error and 3 on lint problems only. The lint problems allowed are
  // those the real exporters' own output has: dcgm-exporter's camelCase labels (Hostname,
  // modelName, UUID) and the EFA exporter's counters without "_total".
  const std::string report = tmp.path + "/promtool.txt";
  const int status = std::system(("promtool check metrics < " + tmp.path + "/run.om > " + report + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  std::ifstream lint(report);
  std::string line;
  std::map<std::string, int> problems;
  while (std::getline(lint, line)) {
    const bool exporter_convention =
        (line.starts_with("DCGM_FI_") && line.ends_with("label names should be written in 'snake_case' not 'camelCase'")) ||
        (line.starts_with("node_amazonefa_") && line.ends_with("counter metrics should have \"_total\" suffix"));
    if (!exporter_convention) ++problems[line];
  }
  EXPECT_TRUE(code == 0 || code == 3) << "promtool exit " << code;
  EXPECT_TRUE(problems.empty()) << problems.begin()->first;
}

TEST(MetricsCli, BadMetricsFlagsNameTheFlag) {
  TempDir tmp;
  const auto r = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                            "--duration", "1h", "--replications", "0", "--metrics-out", tmp.path,
                            "--metrics-resolution", "0.5s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--metrics-resolution"));
  const auto s = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                            "--duration", "1h", "--replications", "0", "--metrics-out", tmp.path,
                            "--metrics-start", "yesterday"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_THAT(s.err, HasSubstr("--metrics-start"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path + "/run.om"));
}

}  // namespace

namespace {

TEST(MetricsCli, ReportDrawsTheRunsPanels) {
  TempDir tmp;
  const auto r = fmsim::testing::run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2",
                                            "--gbs", "64", "--duration", "12h", "--replications", "0", "--metrics-out",
                                            tmp.path + "/m"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = fmsim::testing::run_fmsim({"metrics", "report", tmp.path + "/m", "--html", tmp.path + "/run.html",
                                              "--svg", tmp.path + "/throughput.svg"});
  ASSERT_EQ(rep.exit_code, 0) << rep.all();
  std::ifstream html_in(tmp.path + "/run.html");
  std::stringstream html;
  html << html_in.rdbuf();
  for (const char* chart : {"throughput", "mfu-ettr", "step-time", "activity", "power", "memory"}) {
    EXPECT_THAT(html.str(), HasSubstr(std::string("data-chart=\"") + chart + "\"")) << chart;
  }
  std::ifstream svg_in(tmp.path + "/throughput.svg");
  std::stringstream svg;
  svg << svg_in.rdbuf();
  EXPECT_TRUE(svg.str().starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  const auto none = fmsim::testing::run_fmsim({"metrics", "report", tmp.path + "/m"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("--html"));
  const auto missing = fmsim::testing::run_fmsim({"metrics", "serve", tmp.path + "/nothing"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("is not a directory"));
}

}  // namespace
