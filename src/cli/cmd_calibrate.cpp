// fmsim calibrate training: fit the training calibration's named parameters to measured runs.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/training_fit_data.hpp"
#include "config/training_calibration.hpp"
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

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto* cal = app.add_subcommand("calibrate", "Fit calibration parameters to published measurements");
  cal->require_subcommand(1);
  auto* cmd = cal->add_subcommand("training", "Fit the training-step calibration to a training.csv-schema file");
  cmd->footer(
      "Moves only the named physical parameters (GEMM and attention efficiency per GPU architecture,\n"
      "per-layer and MoE overheads per software stack), within physical bounds, by coordinate\n"
      "descent on median + mean |ln(predicted/measured)| over the analytical step model.");
  struct Opts {
    std::string csv;
    std::vector<std::string> exclude;
    std::string calibration;
    int rounds = 6;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--csv", o->csv, "Measurements CSV")->required()->check(CLI::ExistingFile);
  cmd->add_option("--exclude-source", o->exclude, "Leave these source ids out of the fit")->delimiter(',');
  cmd->add_option("--calibration", o->calibration, "Starting calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--rounds", o->rounds, "Coordinate-descent rounds")->check(CLI::Range(1, 20))->capture_default_str();
  cmd->callback([o, &ctx]() {
    auto calibration = config::load_training_calibration(o->calibration);
    const auto before = calibration;
    const auto data = measurements_from_csv(o->csv, ctx, o->exclude);
    const auto report = training::fit_calibration(calibration, data, o->rounds);
    fmt::print("fitted {} rows: loss (median + mean |ln ratio|) {:.4f} -> {:.4f} in {} evaluations\n\n", data.size(),
               report.loss_before, report.loss_after, report.evaluations);
    auto params_before = training::fit_parameters(const_cast<training::Calibration&>(before), data);
    auto params_after = training::fit_parameters(calibration, data);
    fmt::print("{:<44}{:>12}{:>12}\n", "parameter", "prior", "fitted");
    for (std::size_t i = 0; i < params_after.size(); ++i) {
      fmt::print("{:<44}{:>12.4g}{:>12.4g}\n", params_after[i].name, *params_before[i].value, *params_after[i].value);
    }
  });
}

}  // namespace fmsim::cli
