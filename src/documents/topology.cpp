// `fmsim topology` as text and JSON (documents/topology.hpp).
#include "documents/topology.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "orchestration/slurm_simulator.hpp"

namespace fmsim::documents {
namespace {

nlohmann::json cluster_layout_json(const orchestration::ClusterLayout& layout) {
  nlohmann::json nodes = nlohmann::json::array();
  for (int i = 0; i < layout.nodes(); ++i) {
    nlohmann::json n{{"name", layout.node_names[static_cast<std::size_t>(i)]}};
    const int leaf = layout.node_leaf.empty() ? -1 : layout.node_leaf[static_cast<std::size_t>(i)];
    if (leaf >= 0) n["leaf_switch"] = layout.switches[static_cast<std::size_t>(leaf)].name;
    if (layout.node_block[static_cast<std::size_t>(i)] >= 0)
      n["block"] = layout.node_block[static_cast<std::size_t>(i)] + 1;
    nodes.push_back(n);
  }
  nlohmann::json switches = nlohmann::json::array();
  for (const auto& sw : layout.switches) {
    nlohmann::json s{{"name", sw.name}, {"level", sw.level}, {"nodes", orchestration::hostlist(layout, sw.nodes)}};
    if (sw.parent >= 0) s["parent"] = layout.switches[static_cast<std::size_t>(sw.parent)].name;
    switches.push_back(s);
  }
  return {{"instance_type", layout.instance_type},
          {"gpus_per_node", layout.gpus_per_node},
          {"block_size", layout.block_size},
          {"nodes", nodes},
          {"switches", switches}};
}

}  // namespace

std::string topology_text(const jobspec::TopologyJob& job) {
  if (!job.slurm) return orchestration::write_node_labels(job.layout);
  return orchestration::write_topology_conf(job.layout, job.blocks) +
         fmt::format("# slurm.conf: TopologyPlugin=topology/{}\n", job.blocks ? "block" : "tree");
}

nlohmann::json topology_json(const jobspec::TopologyJob& job, const std::string& text) {
  auto out = cluster_layout_json(job.layout);
  out["flavour"] = std::string(orchestration::kSchedulerKindWords.name(
      job.slurm ? orchestration::SchedulerKind::Slurm : orchestration::SchedulerKind::Kueue));
  if (job.slurm) out["topology_plugin"] = job.blocks ? "topology/block" : "topology/tree";
  out["text"] = text;
  return out;
}

}  // namespace fmsim::documents
