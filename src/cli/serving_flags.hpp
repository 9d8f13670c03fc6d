// The command-line side of a serving deployment: declares --model, --cluster, --tp ... into
// jobspec::ServingFlags (src/jobspec/serving.hpp resolves them), and the --job file of any
// command whose keys are its flag names.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "jobspec/serving.hpp"

namespace fmsim::cli {

void add_serving_flags(CLI::App& cmd, jobspec::ServingFlags& f);
/// Fills flags not given on the command line from --job (YAML: keys are flag names without "--").
void apply_serving_job_file(jobspec::ServingFlags& f, CLI::App& cmd);
/// The same for any command: the options of `cmd` not given on the command line from `file`
/// (YAML map, keys = flag names without "--"; `kind` ignored). Nothing when `file` is empty.
void apply_flags_job_file(const std::string& file, CLI::App& cmd);

}  // namespace fmsim::cli
