// The training spelling of make_comm_cost, which binds a CommCostFn to the collectives model of a
// cluster (collectives/comm_cost.hpp).
#pragma once

#include "collectives/comm_cost.hpp"
#include "training/comm_model.hpp"

namespace fmsim::training {

using collectives::make_comm_cost;

}  // namespace fmsim::training
