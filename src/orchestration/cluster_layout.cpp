#include "orchestration/cluster_layout.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace fmsim::orchestration {

int ClusterLayout::index_of(const std::string& node) const {
  const auto it = std::find(node_names.begin(), node_names.end(), node);
  return it == node_names.end() ? -1 : static_cast<int>(it - node_names.begin());
}

void ClusterLayout::finalize() {
  const int n = nodes();
  node_leaf.assign(static_cast<std::size_t>(n), -1);
  if (node_block.size() != static_cast<std::size_t>(n)) node_block.assign(static_cast<std::size_t>(n), -1);
  const int s = static_cast<int>(switches.size());
  for (auto& sw : switches) sw.children.clear();
  for (int i = 0; i < s; ++i)
    if (switches[static_cast<std::size_t>(i)].parent >= 0)
      switches[static_cast<std::size_t>(switches[static_cast<std::size_t>(i)].parent)].children.push_back(i);
  // Levels: leaves 0, a switch one above its highest child.
  for (int pass = 0; pass < s; ++pass) {
    bool changed = false;
    for (auto& sw : switches) {
      int level = 0;
      for (int c : sw.children) level = std::max(level, switches[static_cast<std::size_t>(c)].level + 1);
      if (level != sw.level) {
        sw.level = level;
        changed = true;
      }
    }
    if (!changed) break;
  }
  // Node lists of upper switches: union of their children's, ascending.
  std::vector<int> order(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return switches[static_cast<std::size_t>(a)].level < switches[static_cast<std::size_t>(b)].level;
  });
  for (int i : order) {
    auto& sw = switches[static_cast<std::size_t>(i)];
    if (sw.children.empty()) {
      std::sort(sw.nodes.begin(), sw.nodes.end());
      for (int node : sw.nodes) node_leaf[static_cast<std::size_t>(node)] = i;
      continue;
    }
    sw.nodes.clear();
    for (int c : sw.children) {
      const auto& child = switches[static_cast<std::size_t>(c)].nodes;
      sw.nodes.insert(sw.nodes.end(), child.begin(), child.end());
    }
    std::sort(sw.nodes.begin(), sw.nodes.end());
    sw.nodes.erase(std::unique(sw.nodes.begin(), sw.nodes.end()), sw.nodes.end());
  }
  {
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    disjoint_tree_ = true;
    for (const auto& sw : switches)
      if (sw.children.empty())
        for (int node : sw.nodes)
          if (seen[static_cast<std::size_t>(node)]++) disjoint_tree_ = false;
  }
  single_tree_ = false;
  for (const auto& sw : switches)
    if (static_cast<int>(sw.nodes.size()) == n) single_tree_ = true;
  // Hops through the lowest common ancestor.
  switch_distance.assign(static_cast<std::size_t>(s), std::vector<int>(static_cast<std::size_t>(s), kUnreachable));
  std::vector<std::vector<int>> ancestors(static_cast<std::size_t>(s));
  for (int i = 0; i < s; ++i)
    for (int a = i; a >= 0; a = switches[static_cast<std::size_t>(a)].parent)
      ancestors[static_cast<std::size_t>(i)].push_back(a);
  for (int i = 0; i < s; ++i)
    for (int j = 0; j < s; ++j) {
      const auto& ai = ancestors[static_cast<std::size_t>(i)];
      const auto& aj = ancestors[static_cast<std::size_t>(j)];
      for (std::size_t x = 0; x < ai.size(); ++x) {
        const auto y = std::find(aj.begin(), aj.end(), ai[x]);
        if (y != aj.end()) {
          switch_distance[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
              static_cast<int>(x) + static_cast<int>(y - aj.begin());
          break;
        }
      }
    }
}

ClusterLayout layout_from_cluster(const hardware::ClusterSpec& cluster, const std::string& prefix) {
  ClusterLayout layout;
  const int n = cluster.nodes();
  layout.gpus_per_node = cluster.gpus_per_node();
  layout.instance_type = cluster.system.name;
  layout.price_per_node_hour =
      cluster.system.nodes > 0 ? cluster.system.price_per_hour_usd / cluster.system.nodes : 0.0;
  for (int i = 1; i <= n; ++i) layout.node_names.push_back(prefix + std::to_string(i));
  const bool ultraserver = cluster.system.kind == hardware::SystemKind::UltraServer && cluster.system.nodes > 1;
  layout.node_block.assign(static_cast<std::size_t>(n), -1);
  if (ultraserver) {
    layout.block_size = cluster.system.nodes;
    for (int i = 0; i < n; ++i) layout.node_block[static_cast<std::size_t>(i)] = i / layout.block_size;
  }
  // 16 nodes per leaf and 16 leaves per spine when the catalog gives no radix: an assumption (AWS
  // does not publish the UltraCluster switch radix; docs/models/orchestration.md); --topology-conf
  // replaces it with a real topology.conf.
  int leaf_size = cluster.nodes_per_leaf > 0 ? cluster.nodes_per_leaf : (ultraserver ? cluster.system.nodes : 16);
  leaf_size = std::max(1, std::min(leaf_size, n));
  const int leaves = (n + leaf_size - 1) / leaf_size;
  for (int l = 0; l < leaves; ++l) {
    Switch leaf;
    leaf.name = "leaf" + std::to_string(l + 1);
    for (int i = l * leaf_size; i < std::min(n, (l + 1) * leaf_size); ++i) leaf.nodes.push_back(i);
    layout.switches.push_back(std::move(leaf));
  }
  if (leaves > 1) {
    constexpr int kLeavesPerSpine = 16;
    const int spines = (leaves + kLeavesPerSpine - 1) / kLeavesPerSpine;
    const int first_spine = leaves;
    for (int s = 0; s < spines; ++s) {
      Switch spine;
      spine.name = "spine" + std::to_string(s + 1);
      layout.switches.push_back(std::move(spine));
    }
    for (int l = 0; l < leaves; ++l)
      layout.switches[static_cast<std::size_t>(l)].parent = first_spine + l / kLeavesPerSpine;
    if (spines > 1) {
      Switch root;
      root.name = "root";
      layout.switches.push_back(std::move(root));
      for (int s = 0; s < spines; ++s)
        layout.switches[static_cast<std::size_t>(first_spine + s)].parent =
            static_cast<int>(layout.switches.size()) - 1;
    }
  }
  layout.finalize();
  return layout;
}

ClusterLayout layout_from_names(std::vector<std::string> names) {
  ClusterLayout layout;
  layout.node_names = std::move(names);
  layout.finalize();
  return layout;
}

ClusterLayout flat_layout(int count, const std::string& prefix) {
  std::vector<std::string> names;
  for (int i = 1; i <= count; ++i) names.push_back(prefix + std::to_string(i));
  return layout_from_names(std::move(names));
}

std::string hostlist(const ClusterLayout& layout, const std::vector<int>& nodes_in) {
  std::vector<int> nodes = nodes_in;
  std::sort(nodes.begin(), nodes.end());
  // Group by name prefix (letters) and number; compress runs of consecutive numbers.
  std::map<std::string, std::vector<std::pair<long, std::string>>> groups;
  std::vector<std::string> prefixes;
  std::vector<std::string> plain;
  for (int node : nodes) {
    const std::string& name = layout.node_names[static_cast<std::size_t>(node)];
    std::size_t cut = name.size();
    while (cut > 0 && std::isdigit(static_cast<unsigned char>(name[cut - 1]))) --cut;
    if (cut == name.size()) {
      plain.push_back(name);
      continue;
    }
    const std::string prefix = name.substr(0, cut);
    if (!groups.count(prefix)) prefixes.push_back(prefix);
    groups[prefix].push_back({std::stol(name.substr(cut)), name.substr(cut)});
  }
  std::ostringstream out;
  bool first = true;
  for (const auto& prefix : prefixes) {
    auto& numbers = groups[prefix];
    std::sort(numbers.begin(), numbers.end());
    if (!first) out << ",";
    first = false;
    if (numbers.size() == 1) {
      out << prefix << numbers[0].second;
      continue;
    }
    out << prefix << "[";
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      // Zero-padded numbers only join runs of the same width ("n[08-10]" is not a run of "08".."10").
      auto padded = [](const std::string& s) { return s.size() > 1 && s[0] == '0'; };
      while (j + 1 < numbers.size() && numbers[j + 1].first == numbers[j].first + 1 &&
             ((!padded(numbers[j + 1].second) && !padded(numbers[i].second)) ||
              numbers[j + 1].second.size() == numbers[i].second.size()))
        ++j;
      if (i > 0) out << ",";
      out << numbers[i].second;
      if (j > i) out << "-" << numbers[j].second;
      i = j + 1;
    }
    out << "]";
  }
  for (const auto& name : plain) {
    out << (first ? "" : ",") << name;
    first = false;
  }
  return out.str();
}

std::string write_topology_conf(const ClusterLayout& layout, bool blocks) {
  std::ostringstream out;
  out << "# topology.conf for " << layout.nodes() << " x " << layout.instance_type << " ("
      << (blocks ? "topology/block: one block per NVLink domain" : "topology/tree: EFA leaf and spine switches")
      << "), written by fmsim topology\n";
  if (blocks) {
    int max_block = -1;
    for (int b : layout.node_block) max_block = std::max(max_block, b);
    for (int b = 0; b <= max_block; ++b) {
      std::vector<int> members;
      for (int i = 0; i < layout.nodes(); ++i)
        if (layout.node_block[static_cast<std::size_t>(i)] == b) members.push_back(i);
      out << "BlockName=block" << b + 1 << " Nodes=" << hostlist(layout, members) << "\n";
    }
    if (layout.block_size > 0) out << "BlockSizes=" << layout.block_size << "\n";
    return out.str();
  }
  for (const auto& sw : layout.switches) {
    out << "SwitchName=" << sw.name;
    if (sw.children.empty()) {
      out << " Nodes=" << hostlist(layout, sw.nodes);
    } else {
      out << " Switches=";
      for (std::size_t c = 0; c < sw.children.size(); ++c)
        out << (c ? "," : "") << layout.switches[static_cast<std::size_t>(sw.children[c])].name;
    }
    out << "\n";
  }
  return out.str();
}

std::string write_node_labels(const ClusterLayout& layout) {
  std::ostringstream out;
  out << "# Kubernetes node labels as EKS sets them (topology.k8s.aws/network-node-layer-1 is the\n"
      << "# farthest network node, layer-3 the closest), written by fmsim topology\n";
  for (int i = 0; i < layout.nodes(); ++i) {
    std::vector<std::string> chain;  // closest first
    for (int s = layout.node_leaf.empty() ? -1 : layout.node_leaf[static_cast<std::size_t>(i)]; s >= 0;
         s = layout.switches[static_cast<std::size_t>(s)].parent)
      chain.push_back(layout.switches[static_cast<std::size_t>(s)].name);
    out << "kubectl label node " << layout.node_names[static_cast<std::size_t>(i)];
    // layer-3 = closest (leaf), layer-2 its parent, layer-1 above that; fewer than three levels
    // repeat the top.
    for (int layer = 1; layer <= 3 && !chain.empty(); ++layer) {
      const int idx = std::min(3 - layer, static_cast<int>(chain.size()) - 1);
      out << " topology.k8s.aws/network-node-layer-" << layer << "=" << chain[static_cast<std::size_t>(idx)];
    }
    if (layout.node_block[static_cast<std::size_t>(i)] >= 0)
      out << " topology.k8s.aws/ultraserver-id=us" << layout.node_block[static_cast<std::size_t>(i)] + 1;
    out << " node.kubernetes.io/instance-type=" << layout.instance_type << "\n";
  }
  return out.str();
}

std::vector<int> add_capacity_block_nodes(ClusterLayout& layout, const std::string& name, int count) {
  std::vector<int> added;
  const int first = layout.nodes();
  int first_block = 0;
  for (int b : layout.node_block) first_block = std::max(first_block, b + 1);
  for (int i = 0; i < count; ++i) {
    layout.node_names.push_back(name + "-" + std::to_string(i + 1));
    layout.node_block.push_back(layout.block_size > 0 ? first_block + i / layout.block_size : -1);
    added.push_back(first + i);
  }
  if (!layout.switches.empty()) {
    // Its own leaf, under the switch at the top of the tree (the first one without a parent).
    Switch leaf;
    leaf.name = name + "-leaf";
    leaf.nodes = added;
    for (std::size_t s = 0; s < layout.switches.size(); ++s)
      if (layout.switches[s].parent < 0 && !layout.switches[s].children.empty()) {
        leaf.parent = static_cast<int>(s);
        break;
      }
    layout.switches.push_back(std::move(leaf));
  }
  layout.finalize();
  return added;
}

}  // namespace fmsim::orchestration
