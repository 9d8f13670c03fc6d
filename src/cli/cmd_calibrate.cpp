// fmsim calibrate training: fit the training calibration's named parameters to measured runs.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <regex>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/training_fit_data.hpp"
#include "config/training_calibration.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "training/calibration_fit.hpp"
#include "training/comm_adapter.hpp"

namespace fmsim::cli {

std::vector<training::Measurement> measurements_from_csv(const std::string& csv, Context& ctx,
                                                         const std::vector<std::string>& exclude_sources) {
  const auto rows = config::read_training_csv(csv, ctx.catalog());
  std::map<std::string, training::CommCostFn> comm_by_cluster;
  std::vector<training::Measurement> out;
  for (const auto& row : rows) {
    if (!row.job || !row.measured_step_time_s) continue;
    if (std::find(exclude_sources.begin(), exclude_sources.end(), row.source_id) != exclude_sources.end()) continue;
    const auto& job = *row.job;
    const std::string key = fmt::format("{}:{}:{}", job.cluster.system.name, job.cluster.count, job.cluster.gpu.name);
    auto it = comm_by_cluster.find(key);
    if (it == comm_by_cluster.end()) it = comm_by_cluster.emplace(key, training::make_comm_cost(job.cluster)).first;
    out.push_back(training::Measurement{job, *row.measured_step_time_s, row.source_id, it->second});
  }
  return out;
}

namespace {

// Sets `key`'s value inside the `section:` block of a calibration YAML (value on the next line, or
// inline `{value: x, ...}`), leaving the sources and comments as they are.
void set_yaml_value(std::string& yaml, const std::string& section, const std::string& key, const std::string& value) {
  const auto start = yaml.find("\n  " + section + ":\n");
  FMSIM_CHECK(start != std::string::npos, "calibration YAML has no section '" + section + "'");
  const std::regex field("\n    " + key + ":(\\s*\\{?\\s*value:\\s*)([0-9.eE+-]+( us)?)");
  std::smatch m;
  const auto from = yaml.cbegin() + static_cast<long>(start) + 1;
  FMSIM_CHECK(std::regex_search(from, yaml.cend(), m, field), "calibration YAML has no '" + section + "." + key + "'");
  const auto pos = static_cast<std::size_t>(m.position(2) + (from - yaml.cbegin()));
  yaml.replace(pos, static_cast<std::size_t>(m.length(2)), value);
}

// The starting YAML with every value the fit moved (fitted, linked and scaled parameters) replaced.
std::string fitted_yaml(std::string yaml, const training::Calibration& before, const training::Calibration& after) {
  using G = training::GpuCalibration;
  static const std::pair<const char*, double G::*> gpu_fields[] = {
      {"gemm_efficiency_bf16", &G::gemm_efficiency_bf16},   {"gemm_efficiency_fp8", &G::gemm_efficiency_fp8},
      {"gemm_efficiency_fp4", &G::gemm_efficiency_fp4},     {"attention_fwd_efficiency", &G::attention_fwd_efficiency},
      {"attention_bwd_efficiency", &G::attention_bwd_efficiency},
      {"flash2_fwd_efficiency", &G::flash2_fwd_efficiency}, {"flash2_bwd_efficiency", &G::flash2_bwd_efficiency}};
  for (const auto& [arch, g] : after.gpus) {
    const auto& g0 = before.gpus.at(arch);
    for (const auto& [key, field] : gpu_fields) {
      if (g.*field != g0.*field) set_yaml_value(yaml, std::string(training::calibration_key(arch)), key, fmt::format("{:.4g}", g.*field));
    }
  }
  using S = training::StackCalibration;
  static const std::pair<const char*, double S::*> stack_fields[] = {{"compute_efficiency", &S::compute_efficiency},
                                                                     {"layer_overhead", &S::layer_overhead_us},
                                                                     {"moe_layer_overhead", &S::moe_layer_overhead_us}};
  for (const auto& [name, st] : after.stacks) {
    const auto& s0 = before.stacks.at(name);
    for (const auto& [key, field] : stack_fields) {
      if (st.*field == s0.*field) continue;
      const bool us = std::string_view(key).ends_with("overhead");
      set_yaml_value(yaml, name, key, fmt::format("{:.4g}", st.*field) + (us ? " us" : ""));
    }
  }
  return yaml;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto* cal = app.add_subcommand("calibrate", "Fit calibration parameters to published measurements");
  cal->require_subcommand(1);
  auto* cmd = cal->add_subcommand("training", "Fit the training-step calibration to a training.csv-schema file");
  cmd->footer(
      "Moves only the named physical parameters (GEMM and attention efficiency per GPU architecture,\n"
      "per-layer and MoE overheads per software stack), within physical bounds, by coordinate\n"
      "descent on mean |ln(predicted/measured)| plus a pull toward each value's cited prior.");
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
  cmd->add_option("--csv", o->csv, "Measurements CSV")->required()->check(CLI::ExistingFile);
  cmd->add_option("--exclude-source", o->exclude, "Leave these source ids out of the fit")->delimiter(',');
  cmd->add_option("--calibration", o->calibration, "Starting calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rounds", o->rounds, "Coordinate-descent rounds")->check(CLI::Range(1, 20))->capture_default_str();
  cmd->add_flag("--from-current", o->from_current,
               "Start from the calibration's values instead of their priors (refine a fit)");
  cmd->add_option("--anchor", o->anchor, "Weight of ln(value/prior)^2 per parameter in the loss (0 = none)")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  cmd->add_option("--write", o->write,
                  "Write the starting calibration YAML with the fitted values to this file (sources and\n"
                  "comments kept; e.g. data/calibration/training.yaml to adopt the fit)");
  cmd->callback([o, &ctx]() {
    auto calibration = config::load_training_calibration(o->calibration);
    const auto before = calibration;
    const auto data = measurements_from_csv(o->csv, ctx, o->exclude);
    const auto report = training::fit_calibration(
        calibration, data, training::FitOptions{.rounds = o->rounds, .from_priors = !o->from_current, .anchor = o->anchor});
    fmt::print("fitted {} rows: loss (mean |ln ratio|) {:.4f} -> {:.4f} in {} evaluations\n\n", data.size(),
               report.loss_before, report.loss_after, report.evaluations);
    auto params_before = training::fit_parameters(const_cast<training::Calibration&>(before), data);
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
      write_file_atomically(o->write, fitted_yaml(std::move(yaml), before, calibration), "--write");
      fmt::print("\nwrote {}\n", o->write);
    }
  });
}

}  // namespace fmsim::cli
