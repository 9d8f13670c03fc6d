// Cluster specs from the command line ("p5.48xlarge:64") or from a YAML file (kind: Cluster).
#pragma once

#include <string>
#include <string_view>

#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"

namespace fmsim::config {

/// The most GPUs a cluster (or one unit of a catalog system) may hold: 2^22 (4,194,304), over
/// ten times the largest cluster built, so that every GPU, node and link count fits an int.
inline constexpr long long kMaxClusterGpus = 1LL << 22;

/// Resolves `text` against the catalog. Accepted forms:
///   "p5.48xlarge:64"      64 instances
///   "u-p6e-gb200x72:4"    4 UltraServers (72 instances of 4 GPUs)
///   "dgx-h100:128"        128 DGX H100 nodes
///   "p5.48xlarge"         one unit
///   "path/to/cluster.yaml" a file with `kind: Cluster` (system, count, storage, fabric shape)
/// Throws core::InputError naming `flag` (or file:line: field) with the closest names on a typo.
hardware::ClusterSpec parse_cluster(const hardware::Catalog& catalog, const std::string& text,
                                    const std::string& flag = "--cluster");

/// A cluster file's YAML text (kind: Cluster) already in memory; `file` names it in errors and,
/// without a `name:` field, names the cluster (its stem), as parse_cluster does for a path.
hardware::ClusterSpec parse_cluster_text(const hardware::Catalog& catalog, std::string_view text,
                                         const std::string& file);

/// A cluster of `gpus` GPUs on `system`, rounded up to whole units of the system.
hardware::ClusterSpec cluster_for_gpus(const hardware::Catalog& catalog, const std::string& system, int gpus,
                                       const std::string& flag = "--systems");

}  // namespace fmsim::config
