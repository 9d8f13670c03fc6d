// Measured training runs from a CSV, ready for the calibration fit (shared by calibrate and validate).
#pragma once

#include <string>
#include <vector>

#include "cli/context.hpp"
#include "config/training_csv.hpp"
#include "training/calibration_fit.hpp"

namespace fmsim::cli {

/// Every row of `csv` with a job and a measured step time, except those of `exclude_sources`.
std::vector<training::Measurement> measurements_from_csv(const std::string& csv, Context& ctx,
                                                         const std::vector<std::string>& exclude_sources);

}  // namespace fmsim::cli
