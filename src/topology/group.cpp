// Classifying a rank group against a topology.
#include "topology/group.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace fmsim::topology {

std::vector<int> Group::sorted_ranks() const {
  std::vector<int> out;
  const int n = count();
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(rank(i));
  if (!ranks.empty() || stride < 0) std::sort(out.begin(), out.end());
  return out;
}

namespace {

/// Counts runs of equal keys in an ascending rank sequence: distinct keys, longest and shortest run.
struct RunCounter {
  int last = -1;
  int distinct = 0;
  int run = 0;
  int max_run = 0;
  int min_run = 1 << 30;
  void add(int key) {
    if (key != last) {
      if (run > 0) min_run = std::min(min_run, run);
      last = key;
      ++distinct;
      run = 0;
    }
    ++run;
    max_run = std::max(max_run, run);
  }
  void finish() {
    if (run > 0) min_run = std::min(min_run, run);
  }
};

}  // namespace

GroupShape classify(const Topology& t, const Group& group) {
  GroupShape s;
  const int n = group.count();
  FMSIM_CHECK(n >= 1, "a group needs at least one rank");
  s.size = n;
  RunCounter node_runs;
  RunCounter domain_runs;
  RunCounter leaf_runs;
  auto visit = [&](int r) {
    FMSIM_CHECK(r >= 0 && r < t.gpus, "group rank outside the cluster");
    const int node = t.node_of(r);
    node_runs.add(node);
    domain_runs.add(t.domain_of(r));
    leaf_runs.add(t.leaf_of_node(node));
  };
  if (group.ranks.empty() && group.stride > 0) {
    for (int i = 0; i < n; ++i) visit(group.first + i * group.stride);
  } else {
    for (int r : group.sorted_ranks()) visit(r);
  }
  node_runs.finish();
  domain_runs.finish();
  leaf_runs.finish();
  s.nodes = node_runs.distinct;
  s.domains = domain_runs.distinct;
  s.leaves = leaf_runs.distinct;
  s.max_per_node = node_runs.max_run;
  s.max_per_domain = domain_runs.max_run;
  s.min_per_domain = domain_runs.min_run;
  s.nics_per_node = t.nics_per_node <= 0 ? 0 : std::min(t.nics_per_node, s.max_per_node * t.nics_per_gpu());
  return s;
}

}  // namespace fmsim::topology
