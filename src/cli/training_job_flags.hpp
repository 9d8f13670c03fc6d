// The command-line side of a training job: declares --job, --model, --cluster, --tp ... into
// jobspec::TrainingJobFlags (src/jobspec/training.hpp resolves them into the job).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.hpp"
#include "jobspec/flags.hpp"
#include "jobspec/training.hpp"

namespace fmsim::cli {

/// Registers --job, --model, --cluster, --gpus, --tp ... --tp-overlap and --calibration on `cmd`.
/// `job_file_flag` names the job-file flag ("--job", or "--job-file" where --job means something else).
void add_training_job_flags(CLI::App& cmd, jobspec::TrainingJobFlags& f, const std::string& job_file_flag = "--job");

/// Registers Megatron-Bridge's recipe switches on `cmd`: --full-iteration-cuda-graph,
/// --moe-a2a-overlap, --fused-grouped-mlp and --fp8-attention (`fmsim train` and `fmsim plan`).
void add_recipe_switch_flags(CLI::App& cmd, parallelism::RecipeSwitches& s);

/// Whether a flag was given on `cmd`'s command line, for the job-file resolvers of jobspec/.
jobspec::FlagGiven given_on(const CLI::App& cmd);

/// A training job from its flags (jobspec::resolve_training_job) with its predicted step (the event
/// simulation, or the closed form when `analytical`): what `fmsim run` and `fmsim compare` both
/// start from.
struct PredictedJob {
  jobspec::TrainingSetup setup;
  training::StepResult step;
};
PredictedJob predict_training_job(const jobspec::TrainingJobFlags& flags, const CLI::App& cmd, Context& ctx,
                                  bool analytical = false);

}  // namespace fmsim::cli
