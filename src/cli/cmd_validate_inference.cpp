// fmsim validate inference: predict every row of a serving-measurements CSV (validation/
// inference.csv, validation/inference_aic.csv) with the serving simulator and report the per-row
// error and summaries by engine, GPU, mode, model and concurrency; --holdout predicts each
// partition with the engines' host costs fitted without it. The report is
// documents/validate_inference.hpp's.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "config/inference_csv.hpp"
#include "config/serving_calibration.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "documents/validate_inference.hpp"
#include "jobspec/validate_inference.hpp"

namespace fmsim::cli {
namespace {

struct ValidateArgs {
  std::string csv;  // empty: the copy of validation/inference.csv built into fmsim
  std::string calibration;
  std::string holdout;  // "" or a word of jobspec::kInferencePartitionWords
  int threads = 0;
  bool json = false;
  bool markdown = false;
  bool rows = true;
};

}  // namespace

void add_validate_inference(CLI::App& validate, Context& ctx) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = validate.add_subcommand(
      "inference", "Predict published serving measurements (validation/inference*.csv) and report the error");
  cmd->footer(
      "Each row is mapped to a model preset (by the name its publisher gives it, e.g. a Hugging Face\n"
      "repo id), a catalog system, a layout (aggregated, or disaggregated prefill and decode pools)\n"
      "and an engine profile, and played through the serving simulator with the row's scenario:\n"
      "offline (all requests queued), closed-loop concurrency (over the engine's HTTP server), or a\n"
      "static batch. Predicted: output tokens/s per GPU, mean TTFT, mean TPOT (first token\n"
      "excluded) and mean end-to-end latency, where the row publishes them.\n\n"
      "The engines' host costs (iteration_overhead, sequence_overhead, request_overhead in\n"
      "data/calibration/serving.yaml) are measured on validation/inference_aic.csv by `fmsim calibrate\n"
      "serving`; --holdout predicts each partition (a GPU, a GPU generation, an engine, a model or a\n"
      "mode) with them refitted on the other partitions' rows only.\n\n"
      "Examples:\n"
      "  fmsim validate inference\n"
      "  fmsim validate inference --csv validation/inference_aic.csv --no-rows\n"
      "  fmsim validate inference --csv validation/inference_aic.csv --holdout generation --no-rows\n"
      "  fmsim validate inference --csv validation/inference.csv --json\n"
      "  fmsim validate inference --calibration my_serving.yaml");
  cmd->add_option("--csv", args->csv,
                  "Measurements in the validation/inference.csv schema (default: the built-in copy)")
      ->type_name("FILE");
  cmd->add_option("--calibration", args->calibration,
                  "Serving calibration YAML (default: data/calibration/serving.yaml)")
      ->type_name("FILE");
  cmd->add_option("--holdout", args->holdout,
                  "Leave one partition out at a time: " + jobspec::kInferencePartitionWords.allowed())
      ->type_name("WORD");
  cmd->add_option("--threads", args->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->add_flag("--rows,!--no-rows", args->rows,
                "Print the per-row table (default on; --markdown without it prints the groupings instead)");
  cmd->add_flag("--json", args->json, "Machine-readable output; ends with \"summary\"");
  cmd->add_flag("--markdown", args->markdown,
                "The summary and per-row tables as Markdown (docs/validation.md's serving section); with --no-rows the "
                "groupings, with --holdout the held-out line");
  cmd->callback([args, &ctx]() {
    std::optional<jobspec::InferencePartition> holdout;
    if (!args->holdout.empty())
      holdout = config::word_flag(jobspec::kInferencePartitionWords, args->holdout, "--holdout");
    const auto cal = config::load_serving_calibration(args->calibration);
    const auto rows = config::read_inference_csv(args->csv);
    const std::string shown = args->csv.empty() ? "validation/inference.csv (built in)" : args->csv;
    documents::InferenceValidation v;
    v.csv = shown;
    v.results = jobspec::predict_inference_rows(rows, cal, ctx.catalog(), args->threads);
    v.holdout = holdout;
    v.holdout_word = args->holdout;
    if (holdout) v.held = jobspec::predict_held_out(rows, cal, ctx.catalog(), *holdout);
    if (args->json) {
      std::cout << documents::validate_inference_json(v, ctx.catalog()).dump(2) << "\n";
    } else {
      documents::print_validate_inference(std::cout, v, args->markdown, args->rows);
    }
  });
}

}  // namespace fmsim::cli
