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
                            "--job-name", "vllm8b", "--json"});
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
  // promtool checks serve.om in promtool_test.cpp (PromtoolCheck.AcceptsTheFile/serve_series).
}

}  // namespace
