// slurm.conf as users have it (Key=Value pairs, comments, line continuations, NodeName and
// PartitionName lines, host lists) read into the scheduler twin's settings, with Slurm 22.05's
// defaults for what the file leaves out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "orchestration/slurm_config.hpp"

namespace fmsim::config {

/// A slurm.conf as read: the settings, and the nodes its NodeName lines define (in order).
struct SlurmConfFile {
  orchestration::SlurmConfig config;
  std::vector<std::string> node_names;
  std::map<std::string, std::string> values;  ///< every other Key=Value seen (last wins), for --json
  std::string topology_plugin;                ///< "topology/tree", "topology/block", "" = none
};

/// Parses slurm.conf text. `path` names the file in errors (core::InputError with file:line,
/// the key and what is allowed). Unknown keys are kept in `values`, not rejected (slurm.conf has
/// hundreds); malformed values of keys the model uses are rejected.
SlurmConfFile parse_slurm_conf(const std::string& text, const std::string& path);

}  // namespace fmsim::config
