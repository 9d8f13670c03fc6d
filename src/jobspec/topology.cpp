// `fmsim topology`'s flags resolved (jobspec/topology.hpp).
#include "jobspec/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "config/cluster_loader.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "orchestration/node_select.hpp"
#include "orchestration/slurm_simulator.hpp"

namespace fmsim::jobspec {

TopologyJob resolve_topology_job(const TopologyFlags& f, const hardware::Catalog& catalog) {
  const bool slurm = config::word_flag(orchestration::kSchedulerKindWords, f.flavour, "flavour") ==
                     orchestration::SchedulerKind::Slurm;
  const auto cluster = config::parse_cluster(catalog, f.cluster);
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
  TopologyJob job{orchestration::layout_from_cluster(cluster, f.node_prefix), slurm, false, cluster.system.name};
  job.blocks = job.layout.block_size > 0;
  if (!f.plugin.empty()) {
    const auto plugin = config::word_flag(orchestration::kPlacementWords, f.plugin, "--plugin");
    if (plugin == orchestration::Placement::Consecutive)
      throw core::InputError::flag("--plugin", fmt::format("'{}' is not allowed; use tree or block", f.plugin));
    job.blocks = plugin == orchestration::Placement::Block;
  }
  if (!slurm && !f.plugin.empty()) throw core::InputError::flag("--plugin", "applies to `fmsim topology slurm` only");
  if (job.blocks && slurm && job.layout.block_size == 0)
    throw core::InputError::flag("--plugin", fmt::format("block needs NVLink blocks of several nodes; {} has none "
                                                         "(UltraServers such as u-p6e-gb200x72 do)",
                                                         cluster.system.name));
  return job;
}

}  // namespace fmsim::jobspec
