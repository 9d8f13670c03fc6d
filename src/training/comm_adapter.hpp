// Binds the training simulator's communication questions to the collectives model of a cluster.
#pragma once

#include "hardware/specs.hpp"
#include "training/comm_model.hpp"

namespace fmsim::training {

/// A CommCostFn answering with the collectives model (NCCL-style algorithm selection) on the
/// physical topology of `cluster`. Results are memoised per (op, group, size), so a step costs
/// each distinct collective once.
CommCostFn make_comm_cost(const hardware::ClusterSpec& cluster);

}  // namespace fmsim::training
