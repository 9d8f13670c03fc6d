// Megatron-LM's 1F1B and interleaved issue orders (see pipeline_schedule.hpp).
#include "parallelism/pipeline_schedule.hpp"

#include <algorithm>

namespace fmsim::parallelism {

std::vector<PipelineItem> pipeline_issue_order(int pp, int vp, int micro_batches, int stage) {
  std::vector<PipelineItem> order;
  if (pp < 1 || vp < 1 || micro_batches < 1 || stage < 0 || stage >= pp) return order;
  const int m = micro_batches;
  const int n = m * vp;
  const auto micro_batch = [&](int k) { return (k / (pp * vp)) * pp + k % pp; };
  const auto forward = [&](int k) { return PipelineItem{true, (k / pp) % vp, micro_batch(k)}; };
  const auto backward = [&](int k) { return PipelineItem{false, vp - 1 - (k / pp) % vp, micro_batch(k)}; };
  order.reserve(static_cast<std::size_t>(2 * n));
  if (vp > 1 && m % pp != 0) {
    // No interleaving: every forward, chunk by chunk, then every backward, last chunk first.
    for (int c = 0; c < vp; ++c) {
      for (int mb = 0; mb < m; ++mb) order.push_back({true, c, mb});
    }
    for (int c = vp - 1; c >= 0; --c) {
      for (int mb = 0; mb < m; ++mb) order.push_back({false, c, mb});
    }
    return order;
  }
  const int warmup = vp > 1 ? std::min(n, (pp - stage - 1) * 2 + (vp - 1) * pp) : std::min(n, pp - stage - 1);
  int f = 0;
  int b = 0;
  for (; f < warmup; ++f) order.push_back(forward(f));
  while (f < n) {
    order.push_back(forward(f++));
    order.push_back(backward(b++));
  }
  while (b < n) order.push_back(backward(b++));
  return order;
}

}  // namespace fmsim::parallelism
