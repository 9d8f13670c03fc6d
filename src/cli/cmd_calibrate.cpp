// fmsim calibrate training: fit the training calibration's named parameters to measured runs.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "config/inference_csv.hpp"
#include "config/serving_calibration.hpp"
#include "config/training_calibration.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "jobspec/validate_inference.hpp"
#include "jobspec/validate_training.hpp"
#include "training/calibration_fit.hpp"

namespace fmsim::cli {

namespace {

// Sets `key`'s value (number and unit, as `value` holds them) inside the `section:` block of a
// calibration YAML, value on the next line or inline `{value: x, ...}`, leaving sources, priors and
// comments as they are. The block ends at the next key of its indent or less; `origin` names the
// file in the error when the key is not written there.
void set_yaml_value(std::string& yaml, const std::string& origin, const std::string& section, const std::string& key,
                    const std::string& value) {
  const auto head = yaml.find("\n  " + section + ":\n");
  if (head == std::string::npos) {
    throw core::InputError::flag("--calibration", origin + " has no section '" + section + "' to write the fit into");
  }
  const std::size_t start = head + 1;
  // Plain scanning rather than std::regex: libstdc++'s regex does not build under
  // -fsanitize=address with -Werror (maybe-uninitialized inside <regex>), and this needs none.
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  // The section ends at the next line indented by at most two spaces that is not blank or a comment.
  std::size_t end = yaml.size();
  for (std::size_t nl = yaml.find('\n', start + 1); nl != std::string::npos; nl = yaml.find('\n', nl + 1)) {
    std::size_t i = nl + 1;
    while (i < yaml.size() && i - nl - 1 < 3 && yaml[i] == ' ') ++i;
    if (i - nl - 1 <= 2 && i < yaml.size() && yaml[i] != ' ' && yaml[i] != '\n' && yaml[i] != '#') {
      end = nl;
      break;
    }
  }
  // `    key:` then `{ value: x` inline or `value: x` on a following line; x ends at a newline, a
  // comma, a closing brace or a quote, without trailing spaces.
  const std::string needle = "\n    " + key + ":";
  for (std::size_t at = yaml.find(needle, start); at != std::string::npos && at < end; at = yaml.find(needle, at + 1)) {
    std::size_t i = at + needle.size();
    bool next_line = false;
    while (i < end && is_space(yaml[i])) {
      if (yaml[i] == '\n' && i + 1 < end && is_space(yaml[i + 1])) next_line = true;
      ++i;
    }
    if (i < end && yaml[i] == '{') {
      ++i;
      while (i < end && is_space(yaml[i])) ++i;
    } else if (!next_line) {
      continue;
    }
    if (yaml.compare(i, 6, "value:") != 0) continue;
    i += 6;
    while (i < end && is_space(yaml[i])) ++i;
    if (i < end && yaml[i] == '"') ++i;
    std::size_t stop = i;
    while (stop < end && yaml[stop] != '\n' && yaml[stop] != ',' && yaml[stop] != '}' && yaml[stop] != '"') ++stop;
    while (stop > i && is_space(yaml[stop - 1])) --stop;
    if (stop == i) continue;
    yaml.replace(i, stop - i, value);
    return;
  }
  throw core::InputError::flag("--calibration",
                               origin + " has no " + section + "." + key +
                                   " to write the fitted value into; add it as {value: ..., source: ...}");
}

// The starting YAML with every value the fit moved (fitted, linked and scaled parameters) replaced.
std::string fitted_yaml(std::string yaml, const std::string& origin, const training::Calibration& before,
                        const training::Calibration& after) {
  using G = training::GpuCalibration;
  static const std::pair<const char*, double G::*> gpu_fields[] = {
      {"gemm_efficiency_bf16", &G::gemm_efficiency_bf16},
      {"gemm_efficiency_fp8", &G::gemm_efficiency_fp8},
      {"gemm_efficiency_fp4", &G::gemm_efficiency_fp4},
      {"fp8_rowwise_factor", &G::fp8_rowwise_factor},
      {"fp8_block_factor", &G::fp8_block_factor},
      {"attention_fwd_efficiency", &G::attention_fwd_efficiency},
      {"attention_bwd_efficiency", &G::attention_bwd_efficiency},
      {"flash2_fwd_efficiency", &G::flash2_fwd_efficiency},
      {"flash2_bwd_efficiency", &G::flash2_bwd_efficiency}};
  for (const auto& [arch, g] : after.gpus) {
    const auto& g0 = before.gpus.at(arch);
    for (const auto& [key, field] : gpu_fields) {
      if (g.*field != g0.*field) {
        set_yaml_value(yaml, origin, std::string(training::calibration_key(arch)), key,
                       fmt::format("{:.4g}", g.*field));
      }
    }
  }
  using S = training::StackCalibration;
  struct StackField {
    const char* key;
    double S::*field;
    const char* unit;  // the YAML unit of the struct's value
  };
  static const StackField stack_fields[] = {{"compute_efficiency", &S::compute_efficiency, ""},
                                            {"layer_overhead", &S::layer_overhead_us, " us"},
                                            {"moe_layer_overhead", &S::moe_layer_overhead_us, " us"}};
  for (const auto& [name, st] : after.stacks) {
    const auto& s0 = before.stacks.at(name);
    for (const auto& f : stack_fields) {
      if (st.*f.field != s0.*f.field)
        set_yaml_value(yaml, origin, name, f.key, fmt::format("{:.4g}{}", st.*f.field, f.unit));
    }
  }
  return yaml;
}

}  // namespace

// fmsim calibrate serving: the engines' host costs measured on closed-loop serving rows.
void add_calibrate_serving(CLI::App& cal, Context& ctx) {
  auto* cmd = cal.add_subcommand("serving", "Measure the serving engines' host costs on an inference.csv-schema file");
  cmd->footer(
      "Predicts every aggregated closed-loop row with each engine's iteration_overhead,\n"
      "sequence_overhead and request_overhead at zero, then fits, per engine: TPOT residual =\n"
      "iteration_overhead + sequence_overhead x (sequences per decode step and attention-DP rank), by\n"
      "least absolute deviations, both >= 0; then predicts the rows of 8 clients or fewer again with\n"
      "those and takes request_overhead = the median TTFT they leave. Prints the values to put in\n"
      "data/calibration/serving.yaml.\n\n"
      "Example:\n"
      "  fmsim calibrate serving --csv validation/inference_aic.csv");
  struct Opts {
    std::string csv = "validation/inference_aic.csv";
    std::string calibration;
    int threads = 0;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--csv", o->csv, "Measurements CSV")->check(CLI::ExistingFile)->capture_default_str();
  cmd->add_option("--calibration", o->calibration, "Serving calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", o->threads, "Worker threads (0 = all cores)")
      ->check(whole_number(0, 1024))
      ->capture_default_str();
  cmd->callback([o, &ctx]() {
    const auto calibration = config::load_serving_calibration(o->calibration);
    const auto rows = config::read_inference_csv(o->csv);
    const auto at_zero = jobspec::predict_inference_rows(rows, jobspec::without_engine_overheads(calibration),
                                                         ctx.catalog(), o->threads);
    const auto fits = jobspec::measure_engine_overheads(rows, at_zero, calibration, ctx.catalog(),
                                                        [](const config::InferenceRow&) { return true; });
    fmt::print("{:<8}{:>10}{:>10}{:>22}{:>22}{:>20}\n", "engine", "TPOT rows", "TTFT rows", "iteration_overhead ms",
               "sequence_overhead us", "request_overhead ms");
    for (const auto& f : fits) {
      fmt::print("{:<8}{:>10}{:>10}{:>22.3f}{:>22.2f}{:>20.1f}\n", serving::kEngineKindWords.name(f.engine),
                 f.tpot_rows, f.ttft_rows, f.iteration_overhead_s * 1e3, f.sequence_overhead_s * 1e6,
                 f.request_overhead_s * 1e3);
    }
  });
}

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto* cal = app.add_subcommand("calibrate", "Fit calibration parameters to published measurements");
  cal->require_subcommand(1);
  cal->footer(
      "Examples:\n"
      "  fmsim calibrate training --csv validation/training.csv\n"
      "  fmsim calibrate serving --csv validation/inference_aic.csv");
  auto* cmd = cal->add_subcommand("training", "Fit the training-step calibration to a training.csv-schema file");
  cmd->footer(
      "Moves only the named physical parameters (per GPU architecture: GEMM efficiency per precision,\n"
      "row- and block-scaled FP8 factors, reference and FlashAttention-2 attention efficiency; per\n"
      "software stack: compute efficiency,\n"
      "per-layer and per-MoE-layer overheads), within physical bounds, by coordinate descent on the\n"
      "mean |ln(predicted/measured)| plus 0.0005 x sum (ln(value/prior) / spread)^2, starting from each\n"
      "value's cited prior (`prior:` in the YAML; `prior_spread:` its 1-sigma in ln units, 0.3 if not\n"
      "given): a value may leave its benchmark only as far as the data and the prior's spread allow.\n\n"
      "Examples:\n"
      "  fmsim calibrate training --csv validation/training.csv\n"
      "  fmsim calibrate training --csv validation/training.csv --exclude-source S24 --rounds 2");
  struct Opts {
    std::string csv;
    std::vector<std::string> exclude;
    std::string calibration;
    int rounds = 6;
    std::string write;
    bool from_current = false;
    double anchor = training::FitOptions{}.anchor;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--csv", o->csv, "Measurements CSV (default: the built-in validation/training.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--exclude-source", o->exclude, "Leave these source ids out of the fit")->delimiter(',');
  cmd->add_option("--calibration", o->calibration, "Starting calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rounds", o->rounds, "Coordinate-descent rounds")
      ->check(whole_number(1, 20))
      ->capture_default_str();
  cmd->add_flag("--from-current", o->from_current,
                "Start from the calibration's values instead of their priors (refine a fit)");
  cmd->add_option("--anchor", o->anchor, "Weight of (ln(value/prior)/spread)^2 per parameter in the loss (0 = none)")
      ->check(real_range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--write", o->write,
                  "Write the starting calibration YAML with the fitted values to this file (sources and\n"
                  "comments kept; e.g. data/calibration/training.yaml to adopt the fit)")
      ->check(output_file());
  cmd->callback([o, &ctx]() {
    auto calibration = config::load_training_calibration(o->calibration);
    auto before = calibration;
    const auto data = jobspec::training_measurements(o->csv, ctx.catalog(), o->exclude);
    const auto report = training::fit_calibration(
        calibration, data,
        training::FitOptions{.rounds = o->rounds, .from_priors = !o->from_current, .anchor = o->anchor});
    fmt::print("fitted {} rows: loss (mean |ln ratio|) {:.4f} -> {:.4f} in {} evaluations\n\n", data.size(),
               report.loss_before, report.loss_after, report.evaluations);
    auto params_before = training::fit_parameters(before, data);
    auto params_after = training::fit_parameters(calibration, data);
    fmt::print("{:<44}{:>12}{:>12}{:>12}\n", "parameter", "prior", "was", "fitted");
    for (std::size_t i = 0; i < params_after.size(); ++i) {
      fmt::print("{:<44}{:>12.4g}{:>12.4g}{:>12.4g}\n", params_after[i].name, params_after[i].prior,
                 *params_before[i].value, *params_after[i].value);
    }
    if (!o->write.empty()) {
      std::string yaml;
      if (o->calibration.empty()) {
        const auto text = core::embedded_file("calibration/training.yaml");
        FMSIM_CHECK(text.has_value(), "data/calibration/training.yaml is not embedded");
        yaml = std::string(*text);
      } else {
        yaml = read_file(o->calibration, "--calibration");
      }
      const std::string origin = o->calibration.empty() ? "data/calibration/training.yaml" : o->calibration;
      write_file_atomically(o->write, fitted_yaml(std::move(yaml), origin, before, calibration), "--write");
      fmt::print("\nwrote {}\n", o->write);
    }
  });

  add_calibrate_serving(*cal, ctx);
}

}  // namespace fmsim::cli
