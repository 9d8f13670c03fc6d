#include "orchestration/slurm_config.hpp"

namespace fmsim::orchestration {

int SlurmConfig::partition_index(const std::string& name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (name.empty() ? partitions[i].is_default : partitions[i].name == name) return static_cast<int>(i);
  }
  if (name.empty() && !partitions.empty()) return 0;  // no Default=YES: the first
  return -1;
}

int SlurmConfig::qos_index(const std::string& name) const {
  for (std::size_t i = 0; i < qos.size(); ++i)
    if (qos[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace fmsim::orchestration
