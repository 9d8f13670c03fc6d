// `promtool check metrics` (Debian package prometheus) on the metrics files of `train --metrics`
// (a Prometheus text snapshot), `run --metrics-out` and `cluster --metrics-out` (OpenMetrics over
// simulated time); serve_metrics_cli_test.cpp checks `serve --metrics` and `serve --metrics-out`.
// promtool exits 1 on a parse error and 3 on lint remarks only. The remarks allowed are those the
// real exporters' own output gets: dcgm-exporter's camelCase labels (Hostname, modelName, UUID),
// the EFA exporter's counters without "_total", vLLM's colons, prometheus-slurm-exporter's
// slurm_gpus_total gauge.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;

struct PromtoolCase {
  const char* name;
  std::vector<std::string> args;  // "{dir}" is replaced by the test's directory
  const char* file;               // relative to it
};

bool exporter_convention(const std::string& line) {
  return (line.starts_with("DCGM_FI_") &&
          line.ends_with("label names should be written in 'snake_case' not 'camelCase'")) ||
         (line.starts_with("node_amazonefa_") && line.ends_with("counter metrics should have \"_total\" suffix")) ||
         (line.starts_with("vllm:") && line.ends_with("metric names should not contain ':'")) ||
         (line.starts_with("slurm_gpus_total ") &&
          line.ends_with("non-counter metrics should not have \"_total\" suffix"));
}

void PrintTo(const PromtoolCase& c, std::ostream* os) { *os << c.name; }

class PromtoolCheck : public ::testing::TestWithParam<PromtoolCase> {};

TEST_P(PromtoolCheck, AcceptsTheFile) {
  const PromtoolCase& c = GetParam();
  std::string tmpl = (fs::path(::testing::TempDir()) / "fmsim-promtool-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  std::vector<std::string> args;
  for (std::string a : c.args) {
    if (const auto at = a.find("{dir}"); at != std::string::npos) a.replace(at, 5, dir.string());
    args.push_back(a);
  }
  const auto r = run_fmsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const fs::path file = dir / c.file;
  ASSERT_TRUE(fs::exists(file)) << file;
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not installed (Debian package prometheus)";
  }
  const fs::path report = dir / "promtool.txt";
  const int status =
      std::system(("promtool check metrics < " + file.string() + " > " + report.string() + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  EXPECT_TRUE(code == 0 || code == 3) << "promtool exit " << code;
  std::ifstream lint(report);
  std::string line;
  while (std::getline(lint, line)) EXPECT_TRUE(exporter_convention(line)) << c.name << ": " << line;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

const PromtoolCase kCases[] = {
    {"train_snapshot",
     {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--gbs", "16", "--metrics", "{dir}/step.prom"},
     "step.prom"},
    // Local NVMe as the checkpoint tier, so the node_disk_* and node_filesystem_* families are busy.
    {"run_series",
     {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64", "--duration", "12h",
      "--replications", "0", "--storage", "instance-nvme", "--interval", "1h", "--metrics-out", "{dir}"},
     "run.om"},
    {"run_series_per_gpu",
     {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--gbs", "16", "--duration", "2h",
      "--replications", "0", "--metrics-per-gpu", "--metrics-out", "{dir}"},
     "run.om"},
    {"cluster_series",
     {"cluster", "--cluster", "p5.48xlarge:16", "--synthetic", "60", "--days", "1", "--node-failure-rate", "50",
      "--metrics-out", "{dir}"},
     "cluster.om"},
};

INSTANTIATE_TEST_SUITE_P(EveryMetricsFile, PromtoolCheck, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<PromtoolCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
