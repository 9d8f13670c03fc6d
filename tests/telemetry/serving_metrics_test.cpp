// vLLM's series of a serving run: the inter-token latency histogram and the generation counter.
#include "telemetry/serving_metrics.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "observability/openmetrics.hpp"

namespace fmsim::telemetry {
namespace {

constexpr std::int64_t kServingStart = 1767225600;

std::string serving_text(const serving::ServeResult& r) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  {
    observability::OpenMetricsWriter w(f, "mem");
    (void)write_serving_metrics(r, "m",
                                {.job = "j", .start_unix_s = kServingStart, .resolution_s = 1, .heartbeat_s = 0}, w);
    w.finish();
  }
  std::fclose(f);
  std::string text(data, size);
  std::free(data);
  return text;
}

serving::RequestResult request(double first_token, double finish, std::int64_t output_tokens) {
  serving::RequestResult q;
  q.arrival = core::Seconds{0.0};
  q.first_token = core::Seconds{first_token};
  q.finish = core::Seconds{finish};
  q.output_tokens = output_tokens;
  return q;
}

TEST(ServingMetrics, InterTokenLatencyObservesEachGapAtItsRequestsMeanAsTokensComeOut) {
  // Request A: first token at 1 s, last at 3 s, 5 tokens: 4 gaps of (3 - 1) / 4 = 0.5 s.
  // Request B: first token at 2 s, last at 2.5 s, 3 tokens: 2 gaps of 0.25 s.
  // At a tick t, a request has shown floor(gaps x (t - first) / (finish - first)) of its gaps:
  // t = 2: A 2, B 0; t = 3: A 4, B 2. Count 6, sum 4 x 0.5 + 2 x 0.25 = 2.5 (the decode times,
  // 2 s + 0.5 s); buckets (vLLM's TPOT bounds): le 0.2: 0, le 0.3: 2 (B), le 0.5: 6.
  serving::ServeResult r;
  r.requests = {request(1.0, 3.0, 5), request(2.0, 2.5, 3)};
  r.duration = core::Seconds{3.0};
  const std::string text = serving_text(r);
  const std::string labels = "{model_name=\"m\",job=\"j\",instance=\"fmsim:8000\"";
  for (const std::string name : {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}) {
    const auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
    EXPECT_TRUE(has(name + "_count" + labels + "} 2 " + std::to_string(kServingStart + 2))) << name << "\n" << text;
    EXPECT_TRUE(has(name + "_count" + labels + "} 6 " + std::to_string(kServingStart + 3))) << name;
    EXPECT_TRUE(has(name + "_sum" + labels + "} 1 " + std::to_string(kServingStart + 2))) << name;
    EXPECT_TRUE(has(name + "_sum" + labels + "} 2.5 " + std::to_string(kServingStart + 3))) << name;
    EXPECT_TRUE(has(name + "_bucket" + labels + ",le=\"0.2\"} 0 " + std::to_string(kServingStart + 3))) << name;
    EXPECT_TRUE(has(name + "_bucket" + labels + ",le=\"0.3\"} 2 " + std::to_string(kServingStart + 3))) << name;
    EXPECT_TRUE(has(name + "_bucket" + labels + ",le=\"0.5\"} 6 " + std::to_string(kServingStart + 3))) << name;
  }
  // Generation tokens as vLLM counts them: the first token of each request too (no decode
  // iterations here): A's at 1 s, B's at 2 s, so 2 by the end.
  EXPECT_NE(text.find("vllm:generation_tokens_total" + labels + "} 2 " + std::to_string(kServingStart + 3) + "\n"),
            std::string::npos);
}

}  // namespace
}  // namespace fmsim::telemetry
