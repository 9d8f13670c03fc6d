// Advance reservations (scontrol create reservation; sbatch --reservation) and AWS Capacity Blocks
// for ML (GPU instances bought for a fixed window: the nodes exist only from its start to its
// end). Read from lines in the syntax scontrol takes, one reservation per line:
//
//   ReservationName=cb1 StartTime=now+2days Duration=3-00:00:00 NodeCnt=16 CapacityBlock=YES
//   ReservationName=maint StartTime=now+12hours EndTime=now+14hours Nodes=node[1-32]
//
// StartTime/EndTime: now, now+N[seconds|minutes|hours|days] or plain seconds from the start of the
// replay; Duration in Slurm's formats (minutes, HH:MM:SS, D-HH:MM:SS...). Nodes= names existing
// nodes; NodeCnt= takes the highest-numbered nodes of an ordinary reservation, and adds new nodes
// (<name>-1..<name>-N, under their own leaf switch and NVLink blocks) for a Capacity Block.
// CapacityBlock=YES is fmsim's key (Slurm has none): nobody but the reservation's jobs ever uses
// the nodes, and they are paid for only within the window.
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

/// Parses reservation lines (blank lines and '#' comments skipped). Capacity Blocks given by
/// NodeCnt add their nodes to `layout`. Errors name `path`:line and the key.
std::vector<Reservation> parse_reservations(const std::string& text, const std::string& path, ClusterLayout& layout);

/// Appends `count` nodes named <name>-1..<name>-count under a new leaf switch attached to the top
/// of the tree (and in new NVLink blocks of the layout's block size); returns their indices.
std::vector<int> add_capacity_block_nodes(ClusterLayout& layout, const std::string& name, int count);

}  // namespace fmsim::orchestration
