// fmsim topology slurm|k8s: the topology.conf (Slurm topology/tree or topology/block) or the
// Kubernetes node labels of a cluster from the catalog, as the scheduler twin lays it out. The job is
// jobspec/topology.hpp's, the text and JSON documents/topology.hpp's.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "documents/topology.hpp"
#include "jobspec/topology.hpp"

namespace fmsim::cli {
namespace {

// The flags (jobspec::TopologyFlags, resolved by jobspec::resolve_topology_job) and where to write.
struct TopologyFlags : jobspec::TopologyFlags {
  std::string output;
  bool json = false;
};

void run_topology(const TopologyFlags& f, Context& ctx) {
  const auto job = jobspec::resolve_topology_job(f, ctx.catalog());
  std::string text = documents::topology_text(job);
  if (f.json) text = documents::topology_json(job, text).dump(2) + "\n";
  if (f.output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(f.output, text, "--output");
    std::cerr << fmt::format("wrote {} ({} nodes)\n", f.output, job.layout.nodes());
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
