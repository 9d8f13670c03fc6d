// Loading the collective-model calibration (data/calibration/collectives.yaml).
#pragma once

#include <string>

#include "collectives/calibration.hpp"

namespace fmsim::config {

/// The shipped calibration, or the one in `path` when given (same schema). Every value needs a
/// source; errors name file:line: field.
collectives::Calibration load_collectives_calibration(const std::string& path = "");

}  // namespace fmsim::config
