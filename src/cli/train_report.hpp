// Text and JSON rendering of one predicted training step, shared by `train`, `run` and
// `validate training --rows`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "training/step_model.hpp"

namespace fmsim::cli {

/// "llama3.1-70b on 64 x p5.48xlarge (512 x H100 SXM, 512 GPUs used)".
std::string job_line(const training::TrainingJob& job);

/// "layout      tp8 pp4 vp5 ... | mbs 1 gbs 512 (32 micro-batches) | seq 8192 | fp8 | ...".
std::string layout_line(const training::TrainingJob& job, const training::StepResult& r);

/// The layout, batch, sequence, precision, recompute, sharding and stack of the job as JSON.
nlohmann::json layout_json(const training::TrainingJob& job, const training::StepResult& r);

/// Prints the layout, headline figures, critical-path breakdown and memory of a step to stdout.
void print_step(const training::TrainingJob& job, const training::StepResult& r);

}  // namespace fmsim::cli
