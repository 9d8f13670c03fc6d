// Advance reservations (scontrol create reservation; sbatch --reservation) and AWS Capacity Blocks
// for ML (GPU instances bought for a fixed window: the nodes exist only from its start to its
// end). config/slurm_reservations.hpp reads them from scontrol's syntax. A Capacity Block's nodes
// are added to the layout (<name>-1..<name>-N, under their own leaf switch and NVLink blocks):
// nobody but the reservation's jobs ever uses them, and they are paid for only within the window.
#pragma once

#include <string>
#include <vector>

#include "orchestration/cluster_layout.hpp"

namespace fmsim::orchestration {

struct Reservation {
  std::string name;
  double start_s = 0, end_s = 0;             ///< the window, seconds from the start of the replay
  std::vector<int> nodes;                    ///< node indices (ascending)
  bool capacity_block = false;               ///< the nodes exist only within the window, for this reservation's jobs
  std::vector<std::string> accounts, users;  ///< Accounts=, Users= (kept for the report)
};

/// Appends `count` nodes named <name>-1..<name>-count under a new leaf switch attached to the top
/// of the tree (and in new NVLink blocks of the layout's block size); returns their indices.
std::vector<int> add_capacity_block_nodes(ClusterLayout& layout, const std::string& name, int count);

}  // namespace fmsim::orchestration
