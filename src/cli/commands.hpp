// One registration function per command; each lives in its own cmd_<name>.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "jobspec/checkpoint.hpp"
#include "jobspec/goodput.hpp"

namespace fmsim::cli {

void add_catalog_command(CLI::App& app, Context& ctx);
void add_collective_command(CLI::App& app, Context& ctx);
void add_train_command(CLI::App& app, Context& ctx);
void add_plan_command(CLI::App& app, Context& ctx);
void add_checkpoint_command(CLI::App& app, Context& ctx);
void add_goodput_command(CLI::App& app, Context& ctx);
void add_run_command(CLI::App& app, Context& ctx);
void add_models_command(CLI::App& app, Context& ctx);
void add_calibrate_command(CLI::App& app, Context& ctx);
void add_topology_command(CLI::App& app, Context& ctx);
void add_cluster_command(CLI::App& app, Context& ctx);
void add_rl_command(CLI::App& app, Context& ctx);
/// `fmsim plan --rl`: fmsim rl's options with --plan implied (registered instead of the training
/// planner when the plan command's words hold --rl; in cmd_rl.cpp).
void add_plan_rl_command(CLI::App& app, Context& ctx);
void add_serve_command(CLI::App& app, Context& ctx);
void add_metrics_command(CLI::App& app, Context& ctx);
void add_compare_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_plan_serve_command(CLI::App& app, Context& ctx);
/// `fmsim validate <what>`: each validation registers under the same parent.
void add_validate_command(CLI::App& app, Context& ctx);
void add_validate_collectives(CLI::App& validate, Context& ctx);
void add_validate_training(CLI::App& validate, Context& ctx);
void add_validate_planner(CLI::App& validate, Context& ctx);  ///< in cmd_plan.cpp (shares --against-csv)
void add_validate_memory(CLI::App& validate, Context& ctx);
void add_validate_rl(CLI::App& validate, Context& ctx);
void add_validate_inference(CLI::App& validate, Context& ctx);

/// The job flags `checkpoint` and `goodput` share (model or parameter count, cluster, layout,
/// storage tier); defined in cmd_checkpoint.cpp.
void add_checkpoint_job_flags(CLI::App& cmd, jobspec::CheckpointJobFlags& f);

/// Of those, the flags about contents, tier and engine (--bytes-per-param, --storage, --capacity,
/// --async, ...), which `run` adds to its training-job flags; defined in cmd_checkpoint.cpp.
void add_checkpoint_storage_flags(CLI::App& cmd, jobspec::CheckpointJobFlags& f);

/// The failure, strategy, recovery, duration and Monte Carlo flags `goodput` and `run` share;
/// defined in cmd_goodput.cpp.
void add_goodput_flags(CLI::App& cmd, jobspec::GoodputFlags& f);

/// Runs fmsim with these arguments; returns the exit status (0 ok, 2 bad input, 70 internal error).
int run(int argc, char** argv);

/// The flags of the command `words` names ("train", "validate training"; a word starting with -
/// only chooses the form: "plan --rl"), as the Python API
/// presents them: a list of {name, names, type (CLI11's INT, FLOAT, TEXT...), default (text, "" for
/// none), help, takes_value, many, required}; null when `words` names no command.
nlohmann::json describe_flags(const std::vector<std::string>& words);

}  // namespace fmsim::cli
