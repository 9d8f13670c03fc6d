// Cluster specs from the command line ("p5.48xlarge:64") or from a YAML file (kind: Cluster).
#pragma once

#include <string>

#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"

namespace fmsim::config {

/// Resolves `text` against the catalog. Accepted forms:
///   "p5.48xlarge:64"      64 instances
///   "u-p6e-gb200x72:4"    4 UltraServers (72 instances of 4 GPUs)
///   "dgx-h100:128"        128 DGX H100 nodes
///   "p5.48xlarge"         one unit
///   "path/to/cluster.yaml" a file with `kind: Cluster` (system, count, storage, fabric shape)
/// Throws core::InputError naming `flag` (or file:line: field) with the closest names on a typo.
hardware::ClusterSpec parse_cluster(const hardware::Catalog& catalog, const std::string& text,
                                    const std::string& flag = "--cluster");

/// A cluster of `gpus` GPUs on `system`, rounded up to whole units of the system.
hardware::ClusterSpec cluster_for_gpus(const hardware::Catalog& catalog, const std::string& system, int gpus,
                                       const std::string& flag = "--systems");

}  // namespace fmsim::config
