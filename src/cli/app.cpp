// The fmsim command: global flags, command registration, and the one place errors are caught.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"

namespace fmsim::cli {

void add_validate_command(CLI::App& app, Context& ctx) {
  auto* validate = app.add_subcommand("validate", "Compare predictions with published measurements (validation/*.csv)");
  validate->require_subcommand(1);
  validate->footer(
      "Each subcommand predicts the rows of one validation/*.csv file (built in; --csv FILE for your own) and\n"
      "prints the error per row and per partition (docs/validation.md).\n\n"
      "Examples:\n"
      "  fmsim validate training --holdout\n"
      "  fmsim validate inference --csv validation/inference_aic.csv --no-rows\n"
      "  fmsim validate memory\n"
      "  fmsim validate rl --json");
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

constexpr const char* kDescription =
    "fmsim: simulator and planner for foundation-model training and serving infrastructure.\n"
    "Predicts step time, throughput, memory, communication, checkpoint cost and goodput for a\n"
    "model, a parallel layout and a cluster (AWS P5/P5en/P6/P6e-GB200 or DGX/NVL72), and\n"
    "searches layouts and instance families for the best one.";

// The global flags and the commands a command line needs (the one it names, or all of them).
void build_app(CLI::App& app, Context& ctx, int argc, char** argv) {
  app.set_version_flag("--version", "fmsim 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--catalog", ctx.catalog_files,
                 "Extra catalog YAML file adding or overriding GPUs, systems, fabrics, storage (repeat the flag "
                 "for more files)")
      // One file per flag: a list would swallow the command word after it (`--catalog FILE traim`
      // read 'traim' as a second file).
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
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
  require_finite_reals(app);
}

}  // namespace

nlohmann::json describe_flags(const std::vector<std::string>& words) {
  std::vector<std::string> argv_words{"fmsim"};
  argv_words.insert(argv_words.end(), words.begin(), words.end());
  std::vector<char*> argv;
  for (auto& w : argv_words) argv.push_back(w.data());
  argv.push_back(nullptr);
  Context ctx;
  CLI::App app{kDescription, "fmsim"};
  build_app(app, ctx, static_cast<int>(argv_words.size()), argv.data());
  const CLI::App* command = &app;
  for (const auto& w : words) {
    if (w.starts_with("-")) continue;  // a flag that picks the command's form (plan --rl)
    const auto subs = command->get_subcommands([&](const CLI::App* a) { return a->check_name(w); });
    if (subs.empty()) return nullptr;
    command = subs.front();
  }
  nlohmann::json flags = nlohmann::json::array();
  for (const CLI::Option* o : command->get_options()) {
    if (o->get_lnames().empty() || o->get_lnames().front() == "help") continue;
    nlohmann::json names = nlohmann::json::array();
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    const std::string type = o->get_type_name();
    flags.push_back(
        {{"name", names.front()},
         {"names", names},
         {"type", type.substr(0, type.find(':'))},  // without its checks' text: "INT", not "INT:INT in [..]"
         {"default", o->get_default_str()},
         {"help", o->get_description()},
         {"takes_value", o->get_items_expected_max() > 0},
         {"many", o->get_items_expected_max() > 1},
         {"required", o->get_required()}});
  }
  return flags;
}

int run(int argc, char** argv) {
  Context ctx;
  CLI::App app{kDescription, "fmsim"};
  build_app(app, ctx, argc, argv);

  // The command's output files appear together when it completes (whatever exit status it chose),
  // and not at all when it fails: the batch removes them when an error leaves this function.
  OutputBatch outputs;
  try {
    app.parse(argc, argv);
    outputs.commit();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt subcommand or flag is the likeliest cause of the errors CLI11 words as "A
    // subcommand is required" and "The following arguments were not expected".
    const bool unplaced =
        dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr || dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
    const std::string hint = unplaced ? unknown_word_message(app, argc, argv) : "";
    std::cerr << "fmsim: error: " << (hint.empty() ? readable_parse_error(e.what(), app) : hint) << "\n";
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
