#include "orchestration/node_select.hpp"

#include <algorithm>

namespace fmsim::orchestration {

std::vector<int> NodeSet::members() const {
  std::vector<int> out;
  for (std::size_t w = 0; w < words_.size(); ++w) {
    std::uint64_t bits = words_[w];
    while (bits) {
      out.push_back(static_cast<int>(w * 64) + std::countr_zero(bits));
      bits &= bits - 1;
    }
  }
  return out;
}

std::vector<std::pair<int, int>> NodeSet::runs() const {
  std::vector<std::pair<int, int>> out;
  for_each_run([&](int first, int last) { out.emplace_back(first, last); });
  return out;
}

namespace {

std::vector<int> select_consecutive(const NodeSet& available, int need) {
  // The common case first, without building the list of runs: the smallest run that holds the
  // whole job (the first of equal ones) gives its lowest `need` nodes; a run of exactly `need`
  // cannot be beaten, so the walk stops at the first.
  int best_start = -1, best_count = 0;
  available.for_each_run([&](int first, int last) {
    const int count = last - first + 1;
    if (count >= need && (best_start < 0 || count < best_count)) {
      best_start = first;
      best_count = count;
    }
    return best_count != need;
  });
  if (best_start >= 0) {
    std::vector<int> chosen(static_cast<std::size_t>(need));
    for (int i = 0; i < need; ++i) chosen[static_cast<std::size_t>(i)] = best_start + i;
    return chosen;
  }
  struct Run {
    int start, end, count;
  };
  std::vector<Run> runs;
  for (const auto& [first, last] : available.runs()) runs.push_back({first, last, last - first + 1});
  std::vector<int> chosen;
  int rem = need;
  while (rem > 0) {
    int best = -1;
    bool best_sufficient = false;
    for (int r = 0; r < static_cast<int>(runs.size()); ++r) {
      const auto& run = runs[static_cast<std::size_t>(r)];
      if (run.count == 0) continue;
      const bool sufficient = run.count >= rem;
      if (best < 0 || (sufficient && !best_sufficient) ||
          (sufficient && run.count < runs[static_cast<std::size_t>(best)].count) ||
          (!sufficient && run.count > runs[static_cast<std::size_t>(best)].count)) {
        best = r;
        best_sufficient = sufficient;
      }
    }
    if (best < 0) return {};
    auto& run = runs[static_cast<std::size_t>(best)];
    for (int i = run.start; i <= run.end && rem > 0; ++i) {
      chosen.push_back(i);
      --rem;
    }
    run.count = 0;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

/// Free nodes under every switch. In a disjoint tree: leaf counts from the free nodes, each added
/// to every ancestor; otherwise by testing every switch's node list.
void switch_counts(const ClusterLayout& layout, const NodeSet& available, std::vector<int>& count) {
  const int s = static_cast<int>(layout.switches.size());
  count.assign(static_cast<std::size_t>(s), 0);
  if (!layout.disjoint_tree_) {
    for (int i = 0; i < s; ++i)
      for (int node : layout.switches[static_cast<std::size_t>(i)].nodes)
        count[static_cast<std::size_t>(i)] += available.test(node);
    return;
  }
  available.for_each([&](int node) {
    const int leaf = layout.node_leaf[static_cast<std::size_t>(node)];
    if (leaf >= 0) ++count[static_cast<std::size_t>(leaf)];
  });
  // Propagate leaf counts up every ancestor.
  for (int i = 0; i < s; ++i) {
    const auto& sw = layout.switches[static_cast<std::size_t>(i)];
    if (!sw.children.empty() || count[static_cast<std::size_t>(i)] == 0) continue;
    for (int a = sw.parent; a >= 0; a = layout.switches[static_cast<std::size_t>(a)].parent)
      count[static_cast<std::size_t>(a)] += count[static_cast<std::size_t>(i)];
  }
}

std::vector<int> select_tree(const ClusterLayout& layout, const NodeSet& available, int need) {
  const int s = static_cast<int>(layout.switches.size());
  std::vector<int> count;
  switch_counts(layout, available, count);
  int top = -1;
  for (int i = 0; i < s; ++i) {
    const auto& sw = layout.switches[static_cast<std::size_t>(i)];
    if (count[static_cast<std::size_t>(i)] < need) continue;
    if (top < 0 || sw.level >= layout.switches[static_cast<std::size_t>(top)].level) top = i;
  }
  if (top < 0) return {};
  // Restrict every switch to nodes under the top switch.
  const auto& top_nodes = layout.switches[static_cast<std::size_t>(top)].nodes;
  NodeSet under = available;
  if (static_cast<int>(top_nodes.size()) != layout.nodes()) {
    under = NodeSet(available.size());
    for (int node : top_nodes)
      if (available.test(node)) under.set(node);
  }
  if (layout.disjoint_tree_) {
    // A switch keeps its count when it is the top switch or below it, and has none otherwise.
    // Its ancestors hold exactly the top switch's free nodes.
    const int top_count = count[static_cast<std::size_t>(top)];
    for (int i = 0; i < s; ++i) {
      bool below = false;
      for (int a = i; a >= 0 && !below; a = layout.switches[static_cast<std::size_t>(a)].parent) below = a == top;
      if (!below) count[static_cast<std::size_t>(i)] = 0;
    }
    for (int a = layout.switches[static_cast<std::size_t>(top)].parent; a >= 0;
         a = layout.switches[static_cast<std::size_t>(a)].parent)
      count[static_cast<std::size_t>(a)] = top_count;
  } else {
    switch_counts(layout, under, count);
  }
  auto compare = [&](int i, int j, int rem) {
    // > 0: i is the better leaf; Slurm's _topo_compare_switches.
    while (true) {
      const bool i_fit = count[static_cast<std::size_t>(i)] >= rem;
      const bool j_fit = count[static_cast<std::size_t>(j)] >= rem;
      if (i_fit && j_fit) {
        if (count[static_cast<std::size_t>(i)] < count[static_cast<std::size_t>(j)]) return 1;
        if (count[static_cast<std::size_t>(i)] > count[static_cast<std::size_t>(j)]) return -1;
        break;
      }
      if (i_fit) return 1;
      if (j_fit) return -1;
      // A top switch is its own parent, as in Slurm's switch table.
      const int pi = layout.switches[static_cast<std::size_t>(i)].parent < 0
                         ? i
                         : layout.switches[static_cast<std::size_t>(i)].parent;
      const int pj = layout.switches[static_cast<std::size_t>(j)].parent < 0
                         ? j
                         : layout.switches[static_cast<std::size_t>(j)].parent;
      if ((pi != i || pj != j) && pi != pj) {
        i = pi;
        j = pj;
        continue;
      }
      break;
    }
    if (count[static_cast<std::size_t>(i)] > count[static_cast<std::size_t>(j)]) return 1;
    if (count[static_cast<std::size_t>(i)] < count[static_cast<std::size_t>(j)]) return -1;
    if (layout.switches[static_cast<std::size_t>(i)].level < layout.switches[static_cast<std::size_t>(j)].level)
      return 1;
    if (layout.switches[static_cast<std::size_t>(i)].level > layout.switches[static_cast<std::size_t>(j)].level)
      return -1;
    return 0;
  };
  std::vector<long> dist(static_cast<std::size_t>(s), 0);
  std::vector<int> chosen;
  int rem = need;
  while (rem > 0) {
    int best = -1;
    for (int i = 0; i < s; ++i) {
      const auto& sw = layout.switches[static_cast<std::size_t>(i)];
      if (sw.level != 0 || count[static_cast<std::size_t>(i)] == 0) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      const int tcs = compare(i, best, rem);
      if ((dist[static_cast<std::size_t>(i)] < dist[static_cast<std::size_t>(best)] && tcs >= 0) ||
          (dist[static_cast<std::size_t>(i)] == dist[static_cast<std::size_t>(best)] && tcs > 0))
        best = i;
    }
    if (best < 0) return {};
    for (int i = 0; i < s; ++i)
      dist[static_cast<std::size_t>(i)] +=
          layout.switch_distance[static_cast<std::size_t>(best)][static_cast<std::size_t>(i)];
    for (int node : layout.switches[static_cast<std::size_t>(best)].nodes) {
      if (rem == 0) break;
      if (!under.test(node)) continue;
      chosen.push_back(node);
      under.reset(node);
      --rem;
    }
    count[static_cast<std::size_t>(best)] = 0;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<int> select_blocks(const ClusterLayout& layout, const NodeSet& available, const NodeRequest& request) {
  int blocks = 0;
  for (int b : layout.node_block) blocks = std::max(blocks, b + 1);
  if (blocks == 0) return select_consecutive(available, request.nodes);
  std::vector<std::vector<int>> free_in(static_cast<std::size_t>(blocks));
  std::vector<int> block_total(static_cast<std::size_t>(blocks), 0);
  for (int i = 0; i < layout.nodes(); ++i) {
    const int b = layout.node_block[static_cast<std::size_t>(i)];
    if (b < 0) continue;
    ++block_total[static_cast<std::size_t>(b)];
    if (available.test(i)) free_in[static_cast<std::size_t>(b)].push_back(i);
  }
  const int segment = request.segment > 0
                          ? request.segment
                          : std::min(request.nodes, layout.block_size > 0 ? layout.block_size : request.nodes);
  if (segment <= 0 || request.nodes % segment != 0) return {};
  int segments = request.nodes / segment;
  std::vector<int> chosen;
  std::vector<int> capacity(static_cast<std::size_t>(blocks));
  for (int b = 0; b < blocks; ++b) {
    const auto& f = free_in[static_cast<std::size_t>(b)];
    // --exclusive=topo uses only wholly free blocks.
    if (request.exclusive_topo && static_cast<int>(f.size()) != block_total[static_cast<std::size_t>(b)]) {
      capacity[static_cast<std::size_t>(b)] = 0;
      continue;
    }
    capacity[static_cast<std::size_t>(b)] = static_cast<int>(f.size()) / segment;
  }
  while (segments > 0) {
    // Best fit: a block whose segment capacity holds what is left with the least spare (then the
    // fewest free nodes); when none holds all, the largest. Remaining ties: lowest block.
    int best = -1;
    for (int b = 0; b < blocks; ++b) {
      const int cap = capacity[static_cast<std::size_t>(b)];
      if (cap == 0) continue;
      if (best < 0) {
        best = b;
        continue;
      }
      const int best_cap = capacity[static_cast<std::size_t>(best)];
      const bool fit = cap >= segments, best_fit = best_cap >= segments;
      const auto free_b = free_in[static_cast<std::size_t>(b)].size(),
                 free_best = free_in[static_cast<std::size_t>(best)].size();
      if ((fit && !best_fit) || (fit && best_fit && (cap < best_cap || (cap == best_cap && free_b < free_best))) ||
          (!fit && !best_fit && cap > best_cap))
        best = b;
    }
    if (best < 0) return {};
    const int take = std::min(segments, capacity[static_cast<std::size_t>(best)]);
    const auto& f = free_in[static_cast<std::size_t>(best)];
    chosen.insert(chosen.end(), f.begin(), f.begin() + take * segment);
    segments -= take;
    capacity[static_cast<std::size_t>(best)] = 0;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

std::vector<int> select_nodes(const ClusterLayout& layout, Placement placement, const NodeSet& available,
                              const NodeRequest& request) {
  if (request.nodes <= 0 || available.count() < request.nodes) return {};
  switch (placement) {
    case Placement::Tree:
      if (!layout.switches.empty()) return select_tree(layout, available, request.nodes);
      return select_consecutive(available, request.nodes);
    case Placement::Block: return select_blocks(layout, available, request);
    case Placement::Consecutive: break;
  }
  return select_consecutive(available, request.nodes);
}

bool can_place(const ClusterLayout& layout, Placement placement, const NodeSet& available, const NodeRequest& request) {
  const int free = available.count();
  if (free < request.nodes) return false;
  if (placement == Placement::Consecutive ||
      (placement == Placement::Tree && (layout.switches.empty() || layout.single_tree())))
    return true;
  return !select_nodes(layout, placement, available, request).empty();
}

}  // namespace fmsim::orchestration
