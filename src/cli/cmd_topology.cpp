// fmsim topology slurm|k8s: the topology.conf (Slurm topology/tree or topology/block) or the
// Kubernetes node labels of a cluster from the catalog, as the scheduler twin lays it out.
#include <fmt/format.h>

#include <algorithm>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "config/cluster_loader.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "orchestration/cluster_layout.hpp"
#include "orchestration/node_select.hpp"
#include "orchestration/slurm_simulator.hpp"

namespace fmsim::cli {
namespace {

struct TopologyFlags {
  std::string flavour;
  std::string cluster = "p5.48xlarge:32";
  std::string plugin;  ///< tree | block; default block for UltraServers, tree otherwise
  std::string node_prefix = "node";
  std::string output;
  bool json = false;
};

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
    nlohmann::json s{{"name", sw.name}, {"level", sw.level}, {"nodes", hostlist(layout, sw.nodes)}};
    if (sw.parent >= 0) s["parent"] = layout.switches[static_cast<std::size_t>(sw.parent)].name;
    switches.push_back(s);
  }
  return {{"instance_type", layout.instance_type},
          {"gpus_per_node", layout.gpus_per_node},
          {"block_size", layout.block_size},
          {"nodes", nodes},
          {"switches", switches}};
}

void run_topology(const TopologyFlags& f, Context& ctx) {
  const bool slurm = config::word_flag(orchestration::kSchedulerKindWords, f.flavour, "flavour") ==
                     orchestration::SchedulerKind::Slurm;
  const auto cluster = config::parse_cluster(ctx.catalog(), f.cluster);
  // The names go into the `kubectl label node` script and topology.conf as they are, so only the
  // characters a Kubernetes node name (RFC 1123) and a Slurm host name share: nothing a shell or a
  // Slurm host list reads as syntax.
  const auto allowed = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'; };
  if (f.node_prefix.empty() || f.node_prefix.size() > 50 ||
      !(f.node_prefix.front() >= 'a' && f.node_prefix.front() <= 'z') ||
      !std::all_of(f.node_prefix.begin(), f.node_prefix.end(), allowed) ||
      std::isdigit(static_cast<unsigned char>(f.node_prefix.back())))
    throw core::InputError::flag("--node-prefix",
                                 fmt::format("'{}' is not a node-name prefix; allowed: 1 to 50 of a-z, 0-9, '-' and "
                                             "'.', starting with a letter and not ending in a digit (Kubernetes node "
                                             "names, Slurm host lists)",
                                             f.node_prefix));
  // One line or label a node: 524,288 nodes took 30 s and 4.8 GB.
  constexpr int kMaxNodes = 100'000;
  if (cluster.nodes() > kMaxNodes)
    throw core::InputError::flag("--cluster",
                                 fmt::format("{} is {} nodes; allowed: at most 100,000", f.cluster, cluster.nodes()));
  const auto layout = orchestration::layout_from_cluster(cluster, f.node_prefix);
  bool blocks = layout.block_size > 0;
  if (!f.plugin.empty()) {
    const auto plugin = config::word_flag(orchestration::kPlacementWords, f.plugin, "--plugin");
    if (plugin == orchestration::Placement::Consecutive)
      throw core::InputError::flag("--plugin", fmt::format("'{}' is not allowed; use tree or block", f.plugin));
    blocks = plugin == orchestration::Placement::Block;
  }
  if (!slurm && !f.plugin.empty()) throw core::InputError::flag("--plugin", "applies to `fmsim topology slurm` only");
  if (blocks && slurm && layout.block_size == 0)
    throw core::InputError::flag("--plugin", fmt::format("block needs NVLink blocks of several nodes; {} has none "
                                                         "(UltraServers such as u-p6e-gb200x72 do)",
                                                         cluster.system.name));
  std::string text;
  if (slurm) {
    text = orchestration::write_topology_conf(layout, blocks);
    text += fmt::format("# slurm.conf: TopologyPlugin=topology/{}\n", blocks ? "block" : "tree");
  } else {
    text = orchestration::write_node_labels(layout);
  }
  if (f.json) {
    auto out = cluster_layout_json(layout);
    out["flavour"] = std::string(orchestration::kSchedulerKindWords.name(slurm ? orchestration::SchedulerKind::Slurm
                                                                               : orchestration::SchedulerKind::Kueue));
    if (slurm) out["topology_plugin"] = blocks ? "topology/block" : "topology/tree";
    out["text"] = text;
    text = out.dump(2) + "\n";
  }
  if (f.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(f.output, text, "--output");
    std::cerr << fmt::format("wrote {} ({} nodes)\n", f.output, layout.nodes());
  }
}

}  // namespace

void add_topology_command(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<TopologyFlags>();
  auto* cmd = app.add_subcommand(
      "topology", "Write Slurm's topology.conf or Kubernetes node labels for a cluster from the catalog");
  cmd->add_option("flavour", flags->flavour, "slurm (topology.conf) or k8s (node labels)")->required();
  cmd->add_option("--cluster", flags->cluster, "Cluster: SYSTEM:COUNT (e.g. p5en.48xlarge:128, u-p6e-gb200x72:8)")
      ->type_name("SPEC");
  cmd->add_option("--plugin", flags->plugin,
                  "slurm: tree (EFA leaf/spine switches) or block (one block per NVLink domain); "
                  "default block for UltraServers, tree otherwise");
  cmd->add_option("--node-prefix", flags->node_prefix, "Node names are PREFIX1..PREFIXN (default node)")
      ->type_name("PREFIX");
  cmd->add_option("--output,-o", flags->output, "Write to FILE (whole or not at all) instead of stdout")
      ->check(output_file())
      ->type_name("FILE");
  cmd->add_flag("--json", flags->json, "Nodes, switches and blocks as JSON, with the text");
  cmd->footer(
      "The layout: nodes in catalog order; UltraServers are NVLink blocks; EFA leaf switches hold\n"
      "the catalog's nodes per leaf (one UltraServer, or 16 nodes when it says non-blocking), 16\n"
      "leaves per spine, one root above several spines. `fmsim cluster` schedules on the same layout.\n"
      "Examples:\n"
      "  fmsim topology slurm --cluster p5en.48xlarge:128 -o topology.conf\n"
      "  fmsim topology slurm --cluster u-p6e-gb200x72:8            # BlockName lines, BlockSizes=18\n"
      "  fmsim topology slurm --cluster u-p6e-gb200x72:8 --plugin tree\n"
      "  fmsim topology k8s --cluster p5.48xlarge:64 > label-nodes.sh");
  cmd->callback([flags, &ctx] { run_topology(*flags, ctx); });
}

}  // namespace fmsim::cli
