// topology.conf (slurm.conf(5)'s companion for topology/tree and topology/block) read onto the
// cluster twin's layout: SwitchName=... Nodes=... / Switches=... lines build the switch tree,
// BlockName=... Nodes=... and BlockSizes= the NVLink blocks.
#pragma once

#include <string>

#include "orchestration/cluster_layout.hpp"

namespace fmsim::config {

/// Replaces the layout's switches and blocks with those of a topology.conf; node names must be the
/// layout's. Errors (core::InputError) name `path`:line and the key (unknown nodes or switches).
void apply_topology_conf(orchestration::ClusterLayout& layout, const std::string& text, const std::string& path);

}  // namespace fmsim::config
