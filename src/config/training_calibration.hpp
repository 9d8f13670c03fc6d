// Loading the training-step calibration (data/calibration/training.yaml).
#pragma once

#include <string>

#include "training/calibration.hpp"

namespace fmsim::config {

/// The shipped calibration, or the one in `path` when given (same schema). Every value needs a
/// source; errors name file:line: field.
/// The shipped one is parsed once per process and copied.
training::Calibration load_training_calibration(const std::string& path = "");

/// The same, parsed on every call (the shipped file when `path` is empty).
training::Calibration parse_training_calibration(const std::string& path);

}  // namespace fmsim::config
