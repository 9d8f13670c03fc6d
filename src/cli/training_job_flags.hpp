// The command-line side of a training job: declares --job, --model, --cluster, --tp ... into
// jobspec::TrainingJobFlags (src/jobspec/training.hpp resolves them into the job).
#pragma once

#include <CLI/CLI.hpp>

#include "jobspec/flags.hpp"
#include "jobspec/training.hpp"

namespace fmsim::cli {

/// Registers --job, --model, --cluster, --gpus, --tp ... --tp-overlap and --calibration on `cmd`.
void add_training_job_flags(CLI::App& cmd, jobspec::TrainingJobFlags& f);

/// Whether a flag was given on `cmd`'s command line, for the job-file resolvers of jobspec/.
jobspec::FlagGiven given_on(const CLI::App& cmd);

}  // namespace fmsim::cli
