// Serving run -> vLLM time series (see serving_metrics.hpp).
#include "telemetry/serving_metrics.hpp"

#include <algorithm>
#include <cmath>

#include "serving/vllm_buckets.hpp"
#include "telemetry/series.hpp"

namespace fmsim::telemetry {
namespace {

using observability::Labels;
using observability::SeriesType;

// vLLM's own bucket bounds, shared with `fmsim serve --metrics`.
const std::vector<double>& kTtftBounds = serving::kVllmTtftBuckets;
const std::vector<double>& kE2eBounds = serving::kVllmE2eBuckets;
const std::vector<double>& kTpotBounds = serving::kVllmTpotBuckets;

// Latencies of the requests with their event time: (time the value became known, value).
std::vector<std::pair<double, double>> events(const serving::ServeResult& r, bool first_token) {
  std::vector<std::pair<double, double>> out;
  for (const auto& q : r.requests) {
    if (first_token && q.first_token.value() >= 0) out.emplace_back(q.first_token.value(), q.ttft().value());
    if (!first_token && q.completed()) out.emplace_back(q.finish.value(), q.e2e().value());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

WriteSummary write_serving_metrics(const serving::ServeResult& r, const std::string& model_name,
                                   const SeriesOptions& options, observability::MetricsOutput& out) {
  const double horizon = std::max(r.duration.value(), r.iterations.empty() ? 1.0 : r.iterations.back().time.value());
  // The last tick at or after the last completion, so the final totals are sampled.
  const double res = static_cast<double>(options.resolution_s);
  const Grid grid = make_grid(std::max(std::ceil(horizon / res) * res, res), options);
  const std::size_t n = grid.ticks;
  // Iteration state at each tick: the last iteration ended at or before it (vLLM logs after each step).
  std::vector<const serving::IterationSample*> at(n, nullptr);
  std::vector<double> prefill(n, 0.0), decode(n, 0.0);
  {
    std::size_t i = 0;
    double p = 0.0, d = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      while (i < r.iterations.size() && r.iterations[i].time.value() <= grid.time(k)) {
        p += r.iterations[i].prefill_tokens;
        d += r.iterations[i].decode_seqs;
        ++i;
      }
      at[k] = i > 0 ? &r.iterations[i - 1] : nullptr;
      prefill[k] = p;
      decode[k] = d;
    }
  }
  const auto per_tick = [&](auto f) {
    std::vector<double> v(n);
    for (std::size_t k = 0; k < n; ++k) v[k] = f(k);
    return v;
  };
  const Labels labels{{"model_name", model_name}, {"job", options.job}, {"instance", "fmsim:8000"}};
  SeriesSink sink(out, grid, options);
  sink.family("vllm:num_requests_running", SeriesType::Gauge, "Number of requests currently running on GPU.");
  sink.series(labels, per_tick([&](std::size_t k) { return at[k] ? static_cast<double>(at[k]->running) : 0.0; }));
  sink.family("vllm:num_requests_waiting", SeriesType::Gauge, "Number of requests waiting to be processed.");
  sink.series(labels, per_tick([&](std::size_t k) { return at[k] ? static_cast<double>(at[k]->waiting) : 0.0; }));
  // KV-cache usage under vLLM's name since 0.10 (V1) and its older one.
  const auto kv_usage = per_tick([&](std::size_t k) { return at[k] ? at[k]->kv_usage : 0.0; });
  sink.family("vllm:kv_cache_usage_perc", SeriesType::Gauge, "KV-cache usage. 1 means 100 percent usage.");
  sink.series(labels, kv_usage);
  sink.family("vllm:gpu_cache_usage_perc", SeriesType::Gauge, "GPU KV-cache usage. 1 means 100 percent usage.");
  sink.series(labels, kv_usage);
  sink.family("vllm:num_preemptions_total", SeriesType::Counter, "Cumulative number of preemption from the engine.");
  sink.series(labels, per_tick([&](std::size_t k) { return at[k] ? static_cast<double>(at[k]->preemptions) : 0.0; }));
  sink.family("vllm:prompt_tokens_total", SeriesType::Counter, "Number of prefill tokens processed.");
  sink.series(labels, prefill);
  // Generation tokens as vLLM counts them: every output token, the first (out of the prefill)
  // included; decode steps give one token a sequence.
  const auto ttft = events(r, true);
  sink.family("vllm:generation_tokens_total", SeriesType::Counter, "Number of generation tokens processed.");
  sink.series(labels, per_tick([&](std::size_t k) {
                const auto firsts = std::upper_bound(ttft.begin(), ttft.end(), std::make_pair(grid.time(k), 1e300));
                return decode[k] + static_cast<double>(firsts - ttft.begin());
              }));
  const auto e2e = events(r, false);
  sink.family("vllm:request_success_total", SeriesType::Counter, "Count of successfully processed requests.");
  sink.series(labels, per_tick([&](std::size_t k) {
                const auto end = std::upper_bound(e2e.begin(), e2e.end(), std::make_pair(grid.time(k), 1e300));
                return static_cast<double>(end - e2e.begin());
              }));
  // A histogram from what the ticks add: observations of one bucket at one tick and their sum
  // (kept sparse: memory grows with the observations, not with ticks x buckets).
  struct Increment {
    std::size_t tick, bucket;
    double count, sum;
  };
  using Increments = std::vector<Increment>;
  const auto bucket_of = [](const std::vector<double>& bounds, double v) {
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
  };
  // The first tick at or after `t` (a value known at t is read by the next scrape).
  const auto tick_at = [&](double t) {
    return std::min(n - 1, static_cast<std::size_t>(std::max(0.0, std::ceil(t / res))));
  };
  const auto histogram = [&](const char* name, const char* help, const std::vector<double>& bounds, Increments& inc) {
    std::stable_sort(inc.begin(), inc.end(), [](const Increment& a, const Increment& b) { return a.tick < b.tick; });
    sink.family(name, SeriesType::Histogram, help, "seconds");
    std::vector<double> counts(bounds.size() + 1, 0.0);
    double total = 0.0;
    std::size_t next = 0;
    sink.histogram(labels, bounds, [&](std::size_t k, std::vector<double>& cumulative, double& sum) {
      for (; next < inc.size() && inc[next].tick <= k; ++next) {
        counts[inc[next].bucket] += inc[next].count;
        total += inc[next].sum;
      }
      double running = 0.0;
      for (std::size_t b = 0; b < counts.size(); ++b) cumulative[b] = running += counts[b];
      sum = total;
    });
  };
  const auto of_events = [&](const std::vector<std::pair<double, double>>& ev, const std::vector<double>& bounds) {
    Increments inc;
    inc.reserve(ev.size());
    for (const auto& [t, v] : ev) inc.push_back({tick_at(t), bucket_of(bounds, v), 1.0, v});
    return inc;
  };
  auto ttft_inc = of_events(ttft, kTtftBounds);
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", kTtftBounds, ttft_inc);
  auto e2e_inc = of_events(e2e, kE2eBounds);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", kE2eBounds,
            e2e_inc);
  // Inter-token latency, one observation per output token after the first: a request's
  // (output tokens - 1) gaps, each at its mean TPOT (finish - first token) / (output tokens - 1),
  // observed as its tokens come out (linearly from its first token to its finish). The sum of a
  // request's observations is its decode time exactly; the spread of the gaps within one request
  // (which fmsim does not keep per token) is not in the buckets. vLLM exports this histogram as
  // vllm:inter_token_latency_seconds and, under its older name, vllm:time_per_output_token_seconds
  // (both, identical, in the releases that renamed it).
  {
    Increments itl;
    for (const auto& q : r.requests) {
      if (!q.completed() || q.output_tokens < 2 || q.first_token.value() < 0) continue;
      const double gaps = static_cast<double>(q.output_tokens - 1);
      const double tpot = q.tpot().value();
      const std::size_t b = bucket_of(kTpotBounds, tpot);
      const double first = q.first_token.value(), finish = q.finish.value();
      double seen = 0.0;
      for (std::size_t k = tick_at(first); k < n && seen < gaps; ++k) {
        const double t = grid.time(k);
        const double c =
            t >= finish || finish <= first ? gaps : std::floor(gaps * std::max(0.0, t - first) / (finish - first));
        if (c > seen) {
          itl.push_back({k, b, c - seen, (c - seen) * tpot});
          seen = c;
        }
      }
    }
    histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", kTpotBounds, itl);
    histogram("vllm:time_per_output_token_seconds",
              "Histogram of time per output token in seconds (deprecated name of vllm:inter_token_latency_seconds).",
              kTpotBounds, itl);
  }
  return sink.summary();
}

}  // namespace fmsim::telemetry
