// Text rendering of one predicted training step, shared by `train` and `validate training --rows`.
#pragma once

#include "training/step_model.hpp"

namespace fmsim::cli {

/// Prints the layout, headline figures, critical-path breakdown and memory of a step to stdout.
void print_step(const training::TrainingJob& job, const training::StepResult& r);

}  // namespace fmsim::cli
