// Decomposing collectives into flows, and simulating them together.
#include "collectives/concurrency.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "collectives/cost_model.hpp"
#include "core/error.hpp"
#include "network/flow_sharing.hpp"

namespace fmsim::collectives {

namespace {

/// Link capacities as point-to-point traffic sees them: NVLink at the p2p efficiency, NIC rails
/// limited to the NICs one GPU's p2p traffic can drive (p2p_nic_bandwidth).
std::vector<double> p2p_capacities(const topology::Topology& t, const Calibration& c) {
  std::vector<double> cap = t.link_capacities();
  const double rail = p2p_nic_bandwidth(t, c) * t.net_efficiency;
  for (int g = 0; g < t.gpus; ++g) {
    cap[static_cast<std::size_t>(t.nvlink_tx(g))] *= c.p2p_nvlink_efficiency;
    cap[static_cast<std::size_t>(t.nvlink_rx(g))] *= c.p2p_nvlink_efficiency;
    cap[static_cast<std::size_t>(t.nic_tx(g))] = rail;
    cap[static_cast<std::size_t>(t.nic_rx(g))] = rail;
  }
  return cap;
}

/// Fraction of `bytes` each ring edge carries for the op (nccl-tests size convention).
double ring_edge_factor(Op op, int n) {
  switch (op) {
    case Op::AllReduce: return 2.0 * (n - 1) / n;
    case Op::AllGather:
    case Op::ReduceScatter: return static_cast<double>(n - 1) / n;
    default: return 1.0;
  }
}

/// Appends the flows of one collective; returns how many were added.
int append_flows(const topology::Topology& t, const topology::Group& group, Op op, core::Bytes bytes,
                 core::Seconds start, network::TimedFlowSet& out) {
  const std::vector<int> ranks = group.sorted_ranks();
  const int n = static_cast<int>(ranks.size());
  if (n < 2 || bytes.value() <= 0.0) return 0;
  std::vector<int> route;
  int added = 0;
  auto add = [&](int src, int dst, double volume) {
    route.clear();
    t.route(src, dst, route);
    out.add(route, core::Bytes(volume), start);
    ++added;
  };
  if (op == Op::SendRecv) {
    add(group.rank(0), group.rank(1), bytes.value());
    return added;
  }
  if (op == Op::AllToAll) {
    const double each = bytes.value() / n;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j) add(ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>(j)], each);
      }
    }
    return added;
  }
  // Ring: members of each domain, so a cross-domain edge can be spread over the domain's rails.
  std::map<int, std::vector<int>> members;
  for (int r : ranks) members[t.domain_of(r)].push_back(r);
  const double volume = bytes.value() * ring_edge_factor(op, n);
  for (int i = 0; i < n; ++i) {
    const int a = ranks[static_cast<std::size_t>(i)];
    const int b = ranks[static_cast<std::size_t>((i + 1) % n)];
    const int da = t.domain_of(a);
    const int db = t.domain_of(b);
    if (da == db) {
      add(a, b, volume);
      continue;
    }
    const std::vector<int>& ma = members[da];
    const std::vector<int>& mb = members[db];
    const std::size_t q = std::min(ma.size(), mb.size());
    for (std::size_t k = 0; k < q; ++k) add(ma[k], mb[k], volume / static_cast<double>(q));
  }
  return added;
}

double span_of(const std::vector<double>& finish, int first, int count, double start) {
  double end = start;
  for (int k = first; k < first + count; ++k) end = std::max(end, finish[static_cast<std::size_t>(k)]);
  return end - start;
}

}  // namespace

std::vector<ConcurrentResult> simulate_concurrent(const topology::Topology& topology, const Calibration& calibration,
                                                  const std::vector<CollectiveRequest>& requests) {
  const std::vector<double> cap = p2p_capacities(topology, calibration);
  network::TimedFlowSet all;
  std::vector<std::pair<int, int>> ranges;  // first flow, count
  for (const CollectiveRequest& r : requests) {
    const int first = all.flows.size();
    const int count = append_flows(topology, r.group, r.op, r.bytes, r.start, all);
    ranges.emplace_back(first, count);
  }
  const std::vector<double> shared = network::simulate_flows(cap, all);

  // Span of each request's flows alone; identical shapes, ops and sizes share one simulation.
  using Key = std::tuple<int, int, int, int, int, int, int, int, double>;
  std::map<Key, double> alone_memo;
  std::vector<ConcurrentResult> out;
  out.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const CollectiveRequest& r = requests[i];
    const topology::GroupShape shape = topology::classify(topology, r.group);
    ConcurrentResult res;
    res.start = r.start;
    res.standalone = estimate(topology, calibration, shape, r.op, r.bytes, r.options);
    const auto [first, count] = ranges[i];
    if (count == 0 || !res.standalone.feasible) {
      res.finish = r.start + res.standalone.time;
      out.push_back(res);
      continue;
    }
    const Key key{static_cast<int>(r.op), shape.size,           shape.nodes,          shape.domains,  shape.leaves,
                  shape.max_per_node,     shape.max_per_domain, shape.min_per_domain, r.bytes.value()};
    auto it = alone_memo.find(key);
    if (it == alone_memo.end()) {
      network::TimedFlowSet own;
      const int c = append_flows(topology, r.group, r.op, r.bytes, core::Seconds{}, own);
      const std::vector<double> f = network::simulate_flows(cap, own);
      it = alone_memo.emplace(key, span_of(f, 0, c, 0.0)).first;
    }
    const double alone = it->second;
    const double with_others = span_of(shared, first, count, r.start.value());
    res.slowdown = alone > 0.0 ? std::max(1.0, with_others / alone) : 1.0;
    const core::Seconds bandwidth_term = res.standalone.time - res.standalone.latency;
    res.finish = r.start + res.standalone.latency + bandwidth_term * res.slowdown;
    out.push_back(res);
  }
  return out;
}

AllToAllResult simulate_alltoall(const topology::Topology& topology, const Calibration& calibration,
                                 const topology::Group& group, core::Bytes per_rank, bool force_flow_level) {
  const topology::GroupShape shape = topology::classify(topology, group);
  const int n = shape.size;
  const bool symmetric = shape.uniform() && (shape.leaves == 1 || topology.oversubscription <= 1.0);
  if (symmetric && !force_flow_level) {
    const CollectiveCost c = estimate(topology, calibration, shape, Op::AllToAll, per_rank);
    return AllToAllResult{c.time, c.algbw, c.busbw, 0, true};
  }
  std::vector<double> matrix;
  const std::vector<int> ranks = group.sorted_ranks();
  const double each = per_rank.value() / n;
  network::TimedFlowSet flows;
  flows.flows.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1),
                      static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) * 4);
  flows.bytes.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
  flows.start.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
  std::vector<int> route;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      route.clear();
      topology.route(ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>(j)], route);
      flows.add(route, core::Bytes(each), core::Seconds{});
    }
  }
  const std::vector<double> finish = network::simulate_flows(p2p_capacities(topology, calibration), flows);
  const double span = span_of(finish, 0, flows.flows.size(), 0.0);
  // The latency of the analytical all-to-all (posting n-1 peers, network hops) is added on top.
  const CollectiveCost analytic = estimate(topology, calibration, shape, Op::AllToAll, per_rank);
  const double t = analytic.latency.value() + span;
  const double alg = t > 0.0 ? per_rank.value() / t : 0.0;
  return AllToAllResult{core::Seconds(t), core::BytesPerSecond(alg),
                        core::BytesPerSecond(alg * bus_factor(Op::AllToAll, n)), flows.flows.size(), false};
}

AllToAllResult simulate_alltoallv(const topology::Topology& topology, const Calibration& calibration,
                                  const topology::Group& group, const std::vector<double>& matrix) {
  const topology::GroupShape shape = topology::classify(topology, group);
  const int n = shape.size;
  FMSIM_CHECK(matrix.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
              "all-to-all-v matrix must be n x n");
  network::TimedFlowSet flows;
  std::vector<int> route;
  double max_row = 0.0;
  for (int i = 0; i < n; ++i) {
    double row = 0.0;
    for (int j = 0; j < n; ++j) {
      const double v = matrix[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)];
      row += v;
      if (i == j || v <= 0.0) continue;
      route.clear();
      topology.route(group.rank(i), group.rank(j), route);
      flows.add(route, core::Bytes(v), core::Seconds{});
    }
    max_row = std::max(max_row, row);
  }
  const std::vector<double> finish = network::simulate_flows(p2p_capacities(topology, calibration), flows);
  const double span = span_of(finish, 0, flows.flows.size(), 0.0);
  const CollectiveCost analytic = estimate(topology, calibration, shape, Op::AllToAll, core::Bytes(max_row));
  const double t = analytic.latency.value() + span;
  const double alg = t > 0.0 ? max_row / t : 0.0;
  return AllToAllResult{core::Seconds(t), core::BytesPerSecond(alg),
                        core::BytesPerSecond(alg * bus_factor(Op::AllToAll, n)), flows.flows.size(), false};
}

}  // namespace fmsim::collectives
