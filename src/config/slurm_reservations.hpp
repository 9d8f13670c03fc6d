// Advance reservations and AWS Capacity Blocks (`fmsim cluster --reservations FILE`,
// `--reservation LINE`) in the syntax scontrol takes, one reservation per line:
//
//   ReservationName=cb1 StartTime=now+2days Duration=3-00:00:00 NodeCnt=16 CapacityBlock=YES
//   ReservationName=maint StartTime=now+12hours EndTime=now+14hours Nodes=node[1-32]
//
// StartTime/EndTime: now, now+N[seconds|minutes|hours|days] or plain seconds from the start of the
// replay; Duration in Slurm's formats (minutes, HH:MM:SS, D-HH:MM:SS...). Nodes= names existing
// nodes; NodeCnt= takes the highest-numbered nodes of an ordinary reservation, and adds new nodes
// for a Capacity Block (orchestration::add_capacity_block_nodes). CapacityBlock=YES is fmsim's key
// (Slurm has none).
#pragma once

#include <string>
#include <vector>

#include "orchestration/cluster_layout.hpp"
#include "orchestration/reservation.hpp"

namespace fmsim::config {

/// Parses reservation lines (blank lines and '#' comments skipped). Capacity Blocks given by
/// NodeCnt add their nodes to `layout`. Errors (core::InputError) name `path`:line and the key;
/// two reservations that share a node while their windows overlap are an error too.
std::vector<orchestration::Reservation> parse_reservations(const std::string& text, const std::string& path,
                                                           orchestration::ClusterLayout& layout);

}  // namespace fmsim::config
