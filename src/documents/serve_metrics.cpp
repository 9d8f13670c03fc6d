// `fmsim serve --metrics`: the run as Prometheus text under vLLM's metric names
// (documents/serve.hpp).
#include <string>
#include <utility>
#include <vector>

#include "documents/serve.hpp"
#include "observability/prometheus.hpp"
#include "observability/prometheus_histogram.hpp"
#include "serving/vllm_buckets.hpp"

namespace fmsim::documents {

std::string serve_prometheus_text(const jobspec::ServingSetup& s, const jobspec::ServeRun& run) {
  const auto& r = run.result;
  const auto& m = run.summary;
  using observability::counter;
  using observability::gauge;
  const std::vector<std::pair<std::string, std::string>> labels{{"model_name", s.deployment.model.name}};
  double prompt = 0, gen = 0;
  std::vector<double> ttft, e2e;
  for (const auto& q : r.requests) {
    if (!q.completed()) continue;
    if (q.sample == 0) prompt += static_cast<double>(q.input_tokens);
    gen += static_cast<double>(q.output_tokens);
    ttft.push_back(q.ttft().value());
    e2e.push_back(q.e2e().value());
  }
  std::vector<observability::Metric> g{
      gauge("vllm:num_requests_running", "Requests in the running batch (time-weighted mean)", m.batch_mean, labels),
      gauge("vllm:num_requests_waiting", "Requests waiting to be admitted (time-weighted mean)", m.queue_mean, labels),
      // KV-cache usage under vLLM's name since 0.10 (V1) and its older one, as --metrics-out writes them.
      gauge("vllm:kv_cache_usage_perc", "KV-cache usage, 1 = full (time-weighted mean)", m.kv_usage_mean, labels),
      gauge("vllm:gpu_cache_usage_perc", "KV-cache usage, 1 = full (time-weighted mean; the name before vLLM 0.10)",
            m.kv_usage_mean, labels),
      counter("vllm:num_preemptions_total", "Cumulative preemptions", r.preemptions, labels),
      counter("vllm:prompt_tokens_total", "Prefill tokens processed", prompt, labels),
      counter("vllm:generation_tokens_total", "Generation tokens processed", gen, labels),
      counter("vllm:request_success_total", "Requests finished", m.completed, labels)};
  const auto& ttft_b = serving::kVllmTtftBuckets;
  const auto& tpot_b = serving::kVllmTpotBuckets;
  const auto& e2e_b = serving::kVllmE2eBuckets;
  auto hist = [&](std::string name, std::string help, const std::vector<double>& v, const std::vector<double>& b) {
    double sum = 0;
    for (double x : v) sum += x;
    return observability::Histogram{std::move(name),
                                    std::move(help),
                                    labels,
                                    b,
                                    observability::cumulative_counts(v, b),
                                    sum,
                                    static_cast<double>(v.size())};
  };
  // Inter-token latency under vLLM's name since 0.10 and, identical, under its older name (as
  // --metrics-out writes them; the serving dashboard's TPOT panels query either).
  observability::Histogram itl{"vllm:inter_token_latency_seconds",
                               "Inter-token latency, one observation per decoded token",
                               labels,
                               tpot_b,
                               {},
                               r.itl.sum(),
                               r.itl.count()};
  for (double b : tpot_b) itl.cumulative.push_back(r.itl.count_below(b));
  observability::Histogram tpot = itl;
  tpot.name = "vllm:time_per_output_token_seconds";
  tpot.help = "Time per output token (the name of vllm:inter_token_latency_seconds before vLLM 0.10)";
  return observability::to_prometheus_text(g) +
         observability::to_prometheus_histograms(
             {hist("vllm:time_to_first_token_seconds", "Time to first token (queueing included)", ttft, ttft_b), itl,
              tpot, hist("vllm:e2e_request_latency_seconds", "End-to-end request latency", e2e, e2e_b)});
}

}  // namespace fmsim::documents
