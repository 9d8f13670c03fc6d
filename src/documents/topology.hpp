// `fmsim topology` as documents: Slurm's topology.conf or the Kubernetes node labels of a
// cluster's layout, and the layout (nodes, switches, blocks) as JSON with that text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "jobspec/topology.hpp"

namespace fmsim::documents {

/// topology.conf with the slurm.conf line that selects its plugin, or the `kubectl label node`
/// script.
std::string topology_text(const jobspec::TopologyJob& job);

/// The layout's nodes (leaf switch, block), switches (level, nodes, parent), the flavour, the
/// plugin (Slurm) and `text`.
nlohmann::json topology_json(const jobspec::TopologyJob& job, const std::string& text);

}  // namespace fmsim::documents
