#include "config/topology_conf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "config/slurm_syntax.hpp"
#include "core/error.hpp"

namespace fmsim::config {

void apply_topology_conf(orchestration::ClusterLayout& layout, const std::string& text, const std::string& path) {
  layout.switches.clear();
  layout.node_block.assign(static_cast<std::size_t>(layout.nodes()), -1);
  layout.block_size = 0;
  struct Pending {
    int line;
    std::vector<std::string> children;
  };
  std::vector<Pending> pending;
  int blocks = 0;
  for (const auto& cl : split_slurm_conf(text, path)) {
    const std::string head = lower_case(cl.pairs[0].first);
    auto node_indices = [&](const std::string& list) {
      std::vector<int> out;
      for (const auto& name : expand_hostlist(list, path, cl.line, "Nodes")) {
        const int i = layout.index_of(name);
        if (i < 0) throw core::InputError(path, cl.line, "Nodes", fmt::format("node {} is not in the cluster", name));
        out.push_back(i);
      }
      return out;
    };
    if (head == "switchname") {
      orchestration::Switch sw;
      sw.name = cl.pairs[0].second;
      Pending p{cl.line, {}};
      for (std::size_t i = 1; i < cl.pairs.size(); ++i) {
        const std::string key = lower_case(cl.pairs[i].first);
        if (key == "nodes")
          sw.nodes = node_indices(cl.pairs[i].second);
        else if (key == "switches")
          p.children = expand_hostlist(cl.pairs[i].second, path, cl.line, "Switches");
      }
      layout.switches.push_back(std::move(sw));
      pending.push_back(std::move(p));
    } else if (head == "blockname") {
      for (std::size_t i = 1; i < cl.pairs.size(); ++i)
        if (lower_case(cl.pairs[i].first) == "nodes") {
          const auto nodes = node_indices(cl.pairs[i].second);
          for (int n : nodes) layout.node_block[static_cast<std::size_t>(n)] = blocks;
          layout.block_size = std::max(layout.block_size, static_cast<int>(nodes.size()));
        }
      ++blocks;
    } else if (head == "blocksizes") {
      layout.block_size = static_cast<int>(slurm_number_value(
          path, cl.line, "BlockSizes", cl.pairs[0].second.substr(0, cl.pairs[0].second.find(',')), 1));
    } else {
      throw core::InputError(path, cl.line, cl.pairs[0].first, "expected SwitchName=, BlockName= or BlockSizes=");
    }
  }
  for (std::size_t i = 0; i < pending.size(); ++i)
    for (const auto& child : pending[i].children) {
      auto it = std::find_if(layout.switches.begin(), layout.switches.end(),
                             [&](const orchestration::Switch& s) { return s.name == child; });
      if (it == layout.switches.end())
        throw core::InputError(path, pending[i].line, "Switches", fmt::format("switch {} is not defined", child));
      it->parent = static_cast<int>(i);
    }
  layout.finalize();
}

}  // namespace fmsim::config
