// Loading the serving calibration (data/calibration/serving.yaml): GPU kernel efficiencies and
// engine profiles (vLLM, SGLang, TensorRT-LLM).
#pragma once

#include <string>

#include "serving/calibration.hpp"

namespace fmsim::config {

/// The shipped calibration, or the one in `path` (same schema). Every value carries a source;
/// errors name file:line: field.
serving::ServingCalibration load_serving_calibration(const std::string& path = "");

}  // namespace fmsim::config
