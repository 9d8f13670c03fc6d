// The fmsim command: global flags, command registration, and the one place errors are caught.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "core/error.hpp"

namespace fmsim::cli {

void add_validate_command(CLI::App& app, Context& ctx) {
  auto* validate = app.add_subcommand("validate", "Compare predictions with published measurements (validation/*.csv)");
  validate->require_subcommand(1);
  add_validate_collectives(*validate, ctx);
  add_validate_training(*validate, ctx);
  add_validate_planner(*validate, ctx);
  add_validate_memory(*validate, ctx);
  add_validate_rl(*validate, ctx);
  add_validate_inference(*validate, ctx);
}

namespace {

// The command a command line runs ("train"), or "" when it names none of them (`fmsim --help`, a
// typo): the first word after the global options (--catalog FILE).
std::string command_word(int argc, char** argv) {
  static const std::set<std::string, std::less<>> kCommands = {
      "catalog",   "collective", "train",   "plan", "checkpoint", "goodput", "run",     "models", "validate",
      "calibrate", "topology",   "cluster", "rl",   "serve",      "metrics", "compare", "sweep",  "plan-serve"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--catalog") {
      ++i;
      continue;
    }
    if (word.rfind("--catalog=", 0) == 0) continue;
    return kCommands.count(word) != 0 ? std::string(word) : std::string();
  }
  return "";
}

// Whether the words of `fmsim plan` hold --rl: then `plan` is the RL planner (fmsim rl's options,
// the search of `fmsim rl --plan`) rather than the training planner. Each form is a CLI11 command
// of its own, since the two take different options under the same names.
bool plan_is_rl(int argc, char** argv) {
  bool in_plan = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (!in_plan) {
      if (word == "--catalog") {
        ++i;
        continue;
      }
      if (word.rfind("--catalog=", 0) == 0) continue;
      if (word != "plan") return false;
      in_plan = true;
    } else if (word == "--rl") {
      return true;
    }
  }
  return false;
}

}  // namespace

int run(int argc, char** argv) {
  Context ctx;
  CLI::App app{
      "fmsim: simulator and planner for foundation-model training and serving infrastructure.\n"
      "Predicts step time, throughput, memory, communication, checkpoint cost and goodput for a\n"
      "model, a parallel layout and a cluster (AWS P5/P5en/P6/P6e-GB200 or DGX/NVL72), and\n"
      "searches layouts and instance families for the best one.",
      "fmsim"};
  app.set_version_flag("--version", "fmsim 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--catalog", ctx.catalog_files,
                 "Extra catalog YAML file(s) adding or overriding GPUs, systems, fabrics, storage")
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  app.footer(
      "Examples:\n"
      "  fmsim catalog systems\n"
      "  fmsim collective --cluster p5.48xlarge:2 --op all_reduce\n"
      "  fmsim train --model llama3.1-70b --cluster p5.48xlarge:64 --tp 8 --pp 4 --gbs 512\n"
      "  fmsim plan --model llama3.1-70b --gpus 512 --tokens 15T\n"
      "  fmsim run --job examples/llama70b_job.yaml --storage fsx-persistent2-1000 --capacity 120TiB\n"
      "  fmsim sweep examples/sweep_train.yaml --slurm\n"
      "Run 'fmsim COMMAND --help' for the options of a command.");

  // Only the command being run is registered (all of them for top-level help or an unknown
  // word): building every command's options was half the time of a prediction run in-process,
  // point after point, by `fmsim sweep` and the Python API.
  const std::string only = command_word(argc, argv);
  const auto wanted = [&](const char* name) { return only.empty() || only == name; };
  if (wanted("catalog")) add_catalog_command(app, ctx);
  if (wanted("collective")) add_collective_command(app, ctx);
  if (wanted("train")) add_train_command(app, ctx);
  if (wanted("plan")) {
    if (only == "plan" && plan_is_rl(argc, argv))
      add_plan_rl_command(app, ctx);
    else
      add_plan_command(app, ctx);
  }
  if (wanted("checkpoint")) add_checkpoint_command(app, ctx);
  if (wanted("goodput")) add_goodput_command(app, ctx);
  if (wanted("run")) add_run_command(app, ctx);
  if (wanted("models")) add_models_command(app, ctx);
  if (wanted("validate")) add_validate_command(app, ctx);
  if (wanted("calibrate")) add_calibrate_command(app, ctx);
  if (wanted("topology")) add_topology_command(app, ctx);
  if (wanted("cluster")) add_cluster_command(app, ctx);
  if (wanted("rl")) add_rl_command(app, ctx);
  if (wanted("serve")) add_serve_command(app, ctx);
  if (wanted("metrics")) add_metrics_command(app, ctx);
  if (wanted("compare")) add_compare_command(app, ctx);
  if (wanted("sweep")) add_sweep_command(app, ctx);
  if (wanted("plan-serve")) add_plan_serve_command(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "fmsim: error: " << readable_parse_error(e.what(), app) << "\n";
    std::cerr << "Run with --help for usage.\n";
    return 2;
  } catch (const core::InputError& e) {
    std::cerr << "fmsim: error: " << e.what() << "\n";
    return 2;
  } catch (const core::InternalError& e) {
    std::cerr << "fmsim: " << e.what() << "\nThis is a bug in fmsim; please report it.\n";
    return 70;
  } catch (const std::exception& e) {
    // Anything else is a bug too: reported, not a crash (std::terminate).
    std::cerr << "fmsim: internal error: " << e.what() << "\nThis is a bug in fmsim; please report it.\n";
    return 70;
  }
  return ctx.exit_code;
}

}  // namespace fmsim::cli
