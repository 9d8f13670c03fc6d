// `fmsim serve --metrics-out`: the serving run as vLLM's /metrics over its time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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

TEST(ServeMetricsCli, WritesVllmSeriesOverTheRun) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "serve-metrics";
  const auto r = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge", "--isl", "512", "--osl", "128",
                            "--concurrency", "16", "--num-requests", "64", "--metrics-out", dir.string(),
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
  // Exit 3 = lint remarks only; the one allowed is the remark vLLM's own names get (the colon).
  const auto report = dir / "promtool.txt";
  const int status = std::system(("promtool check metrics < " + (dir / "serve.om").string() + " > " +
                                  report.string() + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_TRUE(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3) << "exit " << WEXITSTATUS(status);
  std::ifstream lint(report);
  std::string line;
  while (std::getline(lint, line)) {
    EXPECT_TRUE(line.starts_with("vllm:") && line.ends_with("metric names should not contain ':'")) << line;
  }
}

}  // namespace
