#include "orchestration/cluster_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace fmsim::orchestration {

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

}  // namespace

ClusterSummary summarise(const ClusterLayout& layout, const SimulationResult& r, int spares) {
  ClusterSummary s;
  const int gpn = layout.gpus_per_node;
  s.jobs = static_cast<int>(r.jobs.size());
  s.span_s = r.end_s;
  std::vector<double> waits;
  s.wait_by_size = {{"1", 1, 1},       {"2-4", 2, 4},       {"5-16", 5, 16},
                    {"17-64", 17, 64}, {"65-256", 65, 256}, {"257+", 257, 1 << 30}};
  std::vector<std::vector<double>> size_waits(s.wait_by_size.size());
  double busy_node_s = 0, useful_node_s = 0, lost_node_s = 0;
  for (const auto& j : r.jobs) {
    switch (j.state) {
      case JobState::Completed: ++s.completed; break;
      case JobState::Timeout: ++s.timeout; break;
      case JobState::NodeFail: ++s.node_fail; break;
      case JobState::Preempted: ++s.preempted; break;
      default: ++s.unfinished; break;
    }
    s.requeues += j.requeues;
    s.backfilled += j.backfilled;
    useful_node_s += j.useful_node_s;
    lost_node_s += j.lost_node_s;
    s.slow_placement_gpu_hours += j.slow_placement_node_s * gpn / 3600.0;
    if (j.first_start_s < 0) continue;
    ++s.started;
    const double w = j.wait_s;
    waits.push_back(w);
    const int n = static_cast<int>(j.nodes.size());
    for (std::size_t b = 0; b < s.wait_by_size.size(); ++b)
      if (n >= s.wait_by_size[b].min_nodes && n <= s.wait_by_size[b].max_nodes) size_waits[b].push_back(w);
  }
  for (double b : r.series.busy_nodes) busy_node_s += b * r.series.bucket_s;
  s.mean_wait_s = mean(waits);
  s.median_wait_s = percentile(waits, 0.5);
  s.p95_wait_s = percentile(waits, 0.95);
  s.max_wait_s = waits.empty() ? 0.0 : *std::max_element(waits.begin(), waits.end());
  for (std::size_t b = 0; b < s.wait_by_size.size(); ++b) {
    s.wait_by_size[b].jobs = static_cast<int>(size_waits[b].size());
    s.wait_by_size[b].mean_wait_s = mean(size_waits[b]);
    s.wait_by_size[b].p95_wait_s = percentile(size_waits[b], 0.95);
  }
  // Capacity Block nodes count only within their windows.
  const double node_s = static_cast<double>(layout.nodes()) * s.span_s - r.absent_node_s;
  if (node_s > 0) {
    s.utilisation = busy_node_s / node_s;
    s.goodput = useful_node_s / node_s;
  }
  const double span_buckets = r.series.bucket_s > 0 ? s.span_s / r.series.bucket_s : 0.0;
  auto series_mean = [&](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return span_buckets > 0 ? sum / span_buckets : 0.0;
  };
  s.mean_queue_length = series_mean(r.series.queue_length);
  s.mean_fragmented_nodes = series_mean(r.series.fragmented_nodes);
  s.mean_down_nodes = series_mean(r.series.down_nodes);
  s.useful_gpu_hours = useful_node_s * gpn / 3600.0;
  s.lost_gpu_hours = lost_node_s * gpn / 3600.0;
  const double paid_node_s = static_cast<double>(layout.nodes() + spares) * s.span_s - r.absent_node_s;
  s.paid_gpu_hours = paid_node_s * gpn / 3600.0;
  s.cost_usd = paid_node_s * layout.price_per_node_hour / 3600.0;
  s.cost_per_useful_gpu_hour = s.useful_gpu_hours > 0 ? s.cost_usd / s.useful_gpu_hours : 0.0;
  s.node_failures = r.node_failures;
  s.spares_used = r.spares_used;
  s.preemptions = r.preemptions;
  return s;
}

}  // namespace fmsim::orchestration
