#include "orchestration/tree_select.hpp"

#include <algorithm>

namespace fmsim::orchestration {

TreeSelector::TreeSelector(const ClusterLayout& layout) : layout_(layout) {
  const int s = static_cast<int>(layout.switches.size());
  fast_ = s > 0 && layout.disjoint_tree_;
  if (!fast_) return;
  const auto us = static_cast<std::size_t>(s);
  level_.resize(us);
  parent_.resize(us);
  ancestors_.resize(us);
  subtree_.assign(us * us, 0);
  leaf_pos_.assign(us, -1);
  for (int i = 0; i < s; ++i) {
    const auto& sw = layout.switches[static_cast<std::size_t>(i)];
    level_[static_cast<std::size_t>(i)] = sw.level;
    parent_[static_cast<std::size_t>(i)] = sw.parent;
    subtree_[static_cast<std::size_t>(i) * us + static_cast<std::size_t>(i)] = 1;
    for (int a = sw.parent; a >= 0; a = layout.switches[static_cast<std::size_t>(a)].parent) {
      ancestors_[static_cast<std::size_t>(i)].push_back(a);
      subtree_[static_cast<std::size_t>(a) * us + static_cast<std::size_t>(i)] = 1;
    }
    if (sw.children.empty()) {
      leaf_pos_[static_cast<std::size_t>(i)] = static_cast<int>(leaves_.size());
      leaves_.push_back(i);
    }
  }
  const int n = layout.nodes();
  segment_end_.resize(static_cast<std::size_t>(n));
  for (int node = n - 1; node >= 0; --node) {
    const bool same_as_next = node + 1 < n && layout.node_leaf[static_cast<std::size_t>(node + 1)] ==
                                                  layout.node_leaf[static_cast<std::size_t>(node)];
    segment_end_[static_cast<std::size_t>(node)] =
        same_as_next ? segment_end_[static_cast<std::size_t>(node + 1)] : node;
  }
  // The order select_nodes prefers a top switch in: highest level first, the last of equal levels.
  for (int i = s - 1; i >= 0; --i) by_level_.push_back(i);
  std::stable_sort(by_level_.begin(), by_level_.end(), [&](int a, int b) {
    return level_[static_cast<std::size_t>(a)] > level_[static_cast<std::size_t>(b)];
  });
  const std::size_t l = leaves_.size();
  leaf_dist_.resize(l * l);
  for (std::size_t a = 0; a < l; ++a)
    for (std::size_t b = 0; b < l; ++b)
      leaf_dist_[a * l + b] =
          layout.switch_distance[static_cast<std::size_t>(leaves_[a])][static_cast<std::size_t>(leaves_[b])];
}

std::vector<int> TreeSelector::select(const NodeSet& available, int need, int free) {
  if (!fast_) return select_nodes(layout_, Placement::Tree, available, NodeRequest{need});
  if (need <= 0 || (free >= 0 ? free : available.count()) < need) return {};
  const int s = static_cast<int>(level_.size());
  const auto us = static_cast<std::size_t>(s);
  auto& count = count_;
  count.assign(us, 0);
  live_.clear();  // positions of the leaves with free nodes
  // Free nodes per leaf, each leaf's added to its ancestors (select_nodes' switch_counts).
  const auto& node_leaf = layout_.node_leaf;
  // By runs of free nodes, each cut at the ends of the segments of consecutive nodes of one leaf:
  // a step per leaf a run touches, not per free node.
  available.for_each_run([&](int first, int last) {
    for (int x = first; x <= last;) {
      const int end = std::min(segment_end_[static_cast<std::size_t>(x)], last);
      const int leaf = node_leaf[static_cast<std::size_t>(x)];
      if (leaf >= 0) {
        if (count[static_cast<std::size_t>(leaf)] == 0) live_.push_back(leaf_pos_[static_cast<std::size_t>(leaf)]);
        count[static_cast<std::size_t>(leaf)] += end - x + 1;
      }
      x = end + 1;
    }
  });
  for (const int p : live_) {
    const int leaf = leaves_[static_cast<std::size_t>(p)];
    const int c = count[static_cast<std::size_t>(leaf)];
    for (const int a : ancestors_[static_cast<std::size_t>(leaf)]) count[static_cast<std::size_t>(a)] += c;
  }
  // The highest switch that holds the job (the last of equal levels).
  int top = -1;
  for (const int i : by_level_)
    if (count[static_cast<std::size_t>(i)] >= need) {
      top = i;
      break;
    }
  if (top < 0) return {};
  // Switches outside the top switch's subtree count nothing (select_nodes zeroes them; here the
  // leaves among them are dropped from the live list, and the other switches are never read: a
  // comparison climbs from a live leaf to the top switch, then through its ancestors); its
  // ancestors hold its free nodes.
  const int top_count = count[static_cast<std::size_t>(top)];
  const char* in_top = &subtree_[static_cast<std::size_t>(top) * us];
  for (const int a : ancestors_[static_cast<std::size_t>(top)]) count[static_cast<std::size_t>(a)] = top_count;
  // The leaves that can be picked, in index order (the order select_nodes scans them in).
  live_.erase(
      std::remove_if(live_.begin(), live_.end(),
                     [&](int p) { return !in_top[static_cast<std::size_t>(leaves_[static_cast<std::size_t>(p)])]; }),
      live_.end());
  std::sort(live_.begin(), live_.end());
  auto compare = [&](int i, int j, int rem) {
    // > 0: i is the better leaf; Slurm's _topo_compare_switches (as select_nodes has it).
    while (true) {
      const int ci = count[static_cast<std::size_t>(i)], cj = count[static_cast<std::size_t>(j)];
      const bool i_fit = ci >= rem, j_fit = cj >= rem;
      if (i_fit && j_fit) {
        if (ci < cj) return 1;
        if (ci > cj) return -1;
        break;
      }
      if (i_fit) return 1;
      if (j_fit) return -1;
      const int pi = parent_[static_cast<std::size_t>(i)] < 0 ? i : parent_[static_cast<std::size_t>(i)];
      const int pj = parent_[static_cast<std::size_t>(j)] < 0 ? j : parent_[static_cast<std::size_t>(j)];
      if ((pi != i || pj != j) && pi != pj) {
        i = pi;
        j = pj;
        continue;
      }
      break;
    }
    const int ci = count[static_cast<std::size_t>(i)], cj = count[static_cast<std::size_t>(j)];
    if (ci > cj) return 1;
    if (ci < cj) return -1;
    const int li = level_[static_cast<std::size_t>(i)], lj = level_[static_cast<std::size_t>(j)];
    if (li < lj) return 1;
    if (li > lj) return -1;
    return 0;
  };
  const std::size_t l = leaves_.size();
  dist_.assign(l, 0);
  std::vector<int> chosen;
  chosen.reserve(static_cast<std::size_t>(need));
  int rem = need;
  while (rem > 0) {
    std::size_t best = l;  // position in leaves_
    for (const int live : live_) {
      const auto p = static_cast<std::size_t>(live);
      if (count[static_cast<std::size_t>(leaves_[p])] == 0) continue;
      if (best == l) {
        best = p;
        continue;
      }
      const int tcs = compare(leaves_[p], leaves_[best], rem);
      if ((dist_[p] < dist_[best] && tcs >= 0) || (dist_[p] == dist_[best] && tcs > 0)) best = p;
    }
    if (best == l) return {};
    const int* row = &leaf_dist_[best * l];
    for (const int live : live_) dist_[static_cast<std::size_t>(live)] += row[live];
    const int leaf = leaves_[best];
    // Within the top switch's subtree the free nodes are `available`'s; a disjoint leaf lists
    // each node once, and each leaf is taken once.
    for (const int node : layout_.switches[static_cast<std::size_t>(leaf)].nodes) {
      if (rem == 0) break;
      if (!available.test(node)) continue;
      chosen.push_back(node);
      --rem;
    }
    count[static_cast<std::size_t>(leaf)] = 0;
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace fmsim::orchestration
