// `fmsim serve --metrics-out`: the serving run as vLLM's /metrics over its time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

// The value of the last sample whose line starts with `prefix`.
double last_value(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  double v = -1.0;
  while (std::getline(in, line)) {
    if (line.starts_with(prefix)) v = std::stod(line.substr(line.find("} ") + 2));
  }
  return v;
}

// `promtool check metrics` accepts `file`: exit 0, or 3 with lint remarks only, and the one remark
// allowed is the one vLLM's own names get (the colon). The report goes to `report`.
void expect_promtool_accepts(const std::filesystem::path& file, const std::filesystem::path& report) {
  const int status =
      std::system(("promtool check metrics < " + file.string() + " > " + report.string() + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3) << "exit " << WEXITSTATUS(status);
  std::ifstream lint(report);
  std::string line;
  while (std::getline(lint, line)) {
    EXPECT_TRUE(line.starts_with("vllm:") && line.ends_with("metric names should not contain ':'")) << line;
  }
}

TEST(ServeMetricsCli, WritesVllmSeriesOverTheRun) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "serve-metrics";
  const auto r = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge", "--isl", "512", "--osl",
                            "128", "--concurrency", "16", "--num-requests", "64", "--metrics-out", dir.string(),
                            "--metrics-job", "vllm8b", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metrics"]["job"], "vllm8b");
  std::ifstream in(dir / "serve.om");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string labels = "{model_name=\"llama3.1-8b\",job=\"vllm8b\",instance=\"fmsim:8000\"";
  // By the end every request has finished, each counted once in the counter and the histograms.
  EXPECT_EQ(last_value(text, "vllm:request_success_total" + labels), 64.0);
  EXPECT_EQ(last_value(text, "vllm:time_to_first_token_seconds_count" + labels), 64.0);
  EXPECT_EQ(last_value(text, "vllm:e2e_request_latency_seconds_count" + labels), 64.0);
  // The prompts: 64 x 512 prefill tokens (no prefix cache hits with random prompts).
  EXPECT_EQ(last_value(text, "vllm:prompt_tokens_total" + labels), 64.0 * 512.0);
  for (const char* family : {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_cache_usage_perc"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + family + " gauge\n"));
  }
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not installed";
  expect_promtool_accepts(dir / "serve.om", dir / "promtool.txt");
}

// A private directory under the test's temp root (mkdtemp), removed at the end.
struct PrivateDir {
  std::filesystem::path path;
  PrivateDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "fmsim-serve-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~PrivateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TEST(ServeMetricsCli, SnapshotPassesPromtoolWithVllmBuckets) {
  // `fmsim serve --metrics FILE` writes one Prometheus text snapshot with vLLM's names and bucket
  // bounds (vllm/engine/metrics.py): promtool accepts it (only the colon remark vLLM's names get).
  PrivateDir dir;
  const auto file = dir.path / "serve.prom";
  const auto r = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge", "--isl", "256", "--osl",
                            "64", "--rate", "4", "--num-requests", "40", "--metrics", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // The first and last TTFT bucket bounds of vLLM, then +Inf holding every request.
  EXPECT_THAT(text, HasSubstr("vllm:time_to_first_token_seconds_bucket{"));
  EXPECT_THAT(text, ::testing::ContainsRegex("vllm:time_to_first_token_seconds_bucket\\{[^}]*le=\"0.001\"\\}"));
  EXPECT_THAT(text, ::testing::ContainsRegex("vllm:time_to_first_token_seconds_bucket\\{[^}]*le=\"2560\"\\}"));
  EXPECT_THAT(text, ::testing::ContainsRegex("vllm:time_to_first_token_seconds_bucket\\{[^}]*le=\"\\+Inf\"\\} 40"));
  // vLLM 0.10 renamed two families; the snapshot carries both names, as --metrics-out does, with
  // the same values (the dashboards query either): the KV-cache gauge and the inter-token histogram.
  const std::string labels = "{model_name=\"llama3.1-8b\"}";
  EXPECT_EQ(last_value(text, "vllm:kv_cache_usage_perc" + labels),
            last_value(text, "vllm:gpu_cache_usage_perc" + labels));
  EXPECT_GT(last_value(text, "vllm:inter_token_latency_seconds_count" + labels), 0.0);
  EXPECT_EQ(last_value(text, "vllm:inter_token_latency_seconds_count" + labels),
            last_value(text, "vllm:time_per_output_token_seconds_count" + labels));
  EXPECT_EQ(last_value(text, "vllm:inter_token_latency_seconds_sum" + labels),
            last_value(text, "vllm:time_per_output_token_seconds_sum" + labels));
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not installed";
  expect_promtool_accepts(file, dir.path / "promtool.txt");
}

}  // namespace
