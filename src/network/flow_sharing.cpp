// Progressive filling and the event-driven flow simulation.
#include "network/flow_sharing.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace fmsim::network {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative slack under which a link counts as saturated: guards against rounding in
// rem -= delta * weight sums, far below any physically meaningful share.
constexpr double kSaturated = 1e-9;
}  // namespace

int FlowSet::add(std::span<const int> route, double weight) {
  links.insert(links.end(), route.begin(), route.end());
  offsets.push_back(static_cast<int>(links.size()));
  weights.push_back(weight);
  return size() - 1;
}

void FlowSet::reserve(std::size_t flows, std::size_t total_links) {
  offsets.reserve(flows + 1);
  weights.reserve(flows);
  links.reserve(total_links);
}

int TimedFlowSet::add(std::span<const int> route, core::Bytes size, core::Seconds start_time, double weight) {
  bytes.push_back(size.value());
  start.push_back(start_time.value());
  return flows.add(route, weight);
}

std::vector<double> max_min_rates(std::span<const double> capacity, const FlowSet& flows) {
  const int nf = flows.size();
  const int nl = static_cast<int>(capacity.size());
  std::vector<double> rate(static_cast<std::size_t>(nf), kInf);
  if (nf == 0) return rate;

  // Link -> flows adjacency (CSR) and the weight of unfrozen flows on each link.
  std::vector<int> link_start(static_cast<std::size_t>(nl) + 1, 0);
  std::vector<double> load(static_cast<std::size_t>(nl), 0.0);
  for (int f = 0; f < nf; ++f) {
    for (int k = flows.offsets[static_cast<std::size_t>(f)]; k < flows.offsets[static_cast<std::size_t>(f) + 1]; ++k) {
      const int l = flows.links[static_cast<std::size_t>(k)];
      FMSIM_CHECK(l >= 0 && l < nl, "flow crosses an unknown link");
      ++link_start[static_cast<std::size_t>(l) + 1];
      load[static_cast<std::size_t>(l)] += flows.weights[static_cast<std::size_t>(f)];
    }
  }
  std::partial_sum(link_start.begin(), link_start.end(), link_start.begin());
  std::vector<int> link_flows(static_cast<std::size_t>(link_start.back()));
  {
    std::vector<int> fill(link_start.begin(), link_start.end() - 1);
    for (int f = 0; f < nf; ++f) {
      for (int k = flows.offsets[static_cast<std::size_t>(f)]; k < flows.offsets[static_cast<std::size_t>(f) + 1];
           ++k) {
        const int l = flows.links[static_cast<std::size_t>(k)];
        link_flows[static_cast<std::size_t>(fill[static_cast<std::size_t>(l)]++)] = f;
      }
    }
  }

  std::vector<double> remaining(capacity.begin(), capacity.end());
  std::vector<int> active;
  active.reserve(static_cast<std::size_t>(nl));
  for (int l = 0; l < nl; ++l) {
    if (load[static_cast<std::size_t>(l)] > 0.0) active.push_back(l);
  }
  std::vector<char> frozen(static_cast<std::size_t>(nf), 0);
  double level = 0.0;  // rate per unit weight reached by every unfrozen flow

  while (!active.empty()) {
    double delta = kInf;
    for (int l : active) {
      delta = std::min(delta, remaining[static_cast<std::size_t>(l)] / load[static_cast<std::size_t>(l)]);
    }
    delta = std::max(delta, 0.0);
    level += delta;
    std::vector<int> saturated;
    for (int l : active) {
      const auto li = static_cast<std::size_t>(l);
      remaining[li] -= delta * load[li];
      if (remaining[li] <= kSaturated * capacity[li]) saturated.push_back(l);
    }
    for (int l : saturated) {
      for (int k = link_start[static_cast<std::size_t>(l)]; k < link_start[static_cast<std::size_t>(l) + 1]; ++k) {
        const int f = link_flows[static_cast<std::size_t>(k)];
        if (frozen[static_cast<std::size_t>(f)]) continue;
        frozen[static_cast<std::size_t>(f)] = 1;
        const double w = flows.weights[static_cast<std::size_t>(f)];
        rate[static_cast<std::size_t>(f)] = level * w;
        for (int j = flows.offsets[static_cast<std::size_t>(f)]; j < flows.offsets[static_cast<std::size_t>(f) + 1];
             ++j) {
          load[static_cast<std::size_t>(flows.links[static_cast<std::size_t>(j)])] -= w;
        }
      }
    }
    // Keep links that still carry unfrozen flows and are not saturated.
    std::erase_if(active, [&](int l) {
      const auto li = static_cast<std::size_t>(l);
      return load[li] <= 1e-12 || remaining[li] <= kSaturated * capacity[li];
    });
  }
  return rate;
}

std::vector<double> simulate_flows(std::span<const double> capacity, const TimedFlowSet& timed) {
  const FlowSet& all = timed.flows;
  const int nf = all.size();
  std::vector<double> finish(static_cast<std::size_t>(nf), 0.0);
  std::vector<int> order(static_cast<std::size_t>(nf));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return timed.start[static_cast<std::size_t>(a)] < timed.start[static_cast<std::size_t>(b)];
  });

  std::vector<double> left(timed.bytes);
  std::vector<int> active;
  std::size_t next = 0;
  double now = 0.0;
  FlowSet sub;
  while (next < order.size() || !active.empty()) {
    if (active.empty()) now = std::max(now, timed.start[static_cast<std::size_t>(order[next])]);
    while (next < order.size() && timed.start[static_cast<std::size_t>(order[next])] <= now) {
      const int f = order[next++];
      if (left[static_cast<std::size_t>(f)] <= 0.0) {
        finish[static_cast<std::size_t>(f)] = timed.start[static_cast<std::size_t>(f)];
      } else {
        active.push_back(f);
      }
    }
    if (active.empty()) continue;

    sub = FlowSet{};
    sub.reserve(active.size(), active.size() * 4);
    for (int f : active) {
      const auto b = all.offsets[static_cast<std::size_t>(f)];
      const auto e = all.offsets[static_cast<std::size_t>(f) + 1];
      sub.add(std::span<const int>(all.links.data() + b, static_cast<std::size_t>(e - b)),
              all.weights[static_cast<std::size_t>(f)]);
    }
    const std::vector<double> rate = max_min_rates(capacity, sub);

    double dt = kInf;
    for (std::size_t i = 0; i < active.size(); ++i) {
      const double r = rate[i];
      FMSIM_CHECK(r > 0.0, "a flow got no bandwidth: it crosses a link of zero capacity");
      dt = std::min(dt, left[static_cast<std::size_t>(active[i])] / r);
    }
    if (next < order.size()) dt = std::min(dt, timed.start[static_cast<std::size_t>(order[next])] - now);
    now += dt;
    std::vector<int> still;
    still.reserve(active.size());
    for (std::size_t i = 0; i < active.size(); ++i) {
      const auto f = static_cast<std::size_t>(active[i]);
      left[f] -= rate[i] * dt;
      // A flow within a relative hair of done finishes now, so rounding cannot leave a
      // sliver that would cost one more re-solve.
      if (left[f] <= 1e-9 * timed.bytes[f] || rate[i] == kInf) {
        finish[f] = now;
      } else {
        still.push_back(active[i]);
      }
    }
    active.swap(still);
  }
  return finish;
}

std::vector<core::Seconds> simulate_flows(std::span<const double> capacity, const std::vector<Flow>& flows) {
  TimedFlowSet timed;
  for (const Flow& f : flows) timed.add(f.route, f.size, f.start, f.weight);
  const std::vector<double> t = simulate_flows(capacity, timed);
  std::vector<core::Seconds> out;
  out.reserve(t.size());
  for (double v : t) out.emplace_back(v);
  return out;
}

}  // namespace fmsim::network
