// fmsim validate rl: predict the published RL steps, phases, weight syncs and throughputs of
// validation/rl.csv and report the error, per row type, and the async-vs-sync speed-ups
// (jobspec::validate_rl predicts; this prints).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "documents/text_table.hpp"
#include "documents/validation_summary.hpp"
#include "jobspec/validate_rl.hpp"

namespace fmsim::cli {
using documents::TextTable;
using documents::validation_summary;

void add_validate_rl(CLI::App& validate, Context& ctx) {
  auto csv = std::make_shared<std::string>();  // empty: the copy of validation/rl.csv built into fmsim
  auto json = std::make_shared<bool>(false);
  auto* cmd = validate.add_subcommand(
      "rl", "Compare RL step, phase, weight-sync and throughput predictions with validation/rl.csv");
  cmd->footer(
      "Predicts every rl_step and weight_sync row that names its model, GPUs, layout and lengths (the rest\n"
      "are listed with the reason), and the async-vs-sync speed-up of each pair of rows from one source.\n"
      "Error = (predicted - measured) / measured.\n\n"
      "Examples:\n"
      "  fmsim validate rl\n"
      "  fmsim validate rl --json");
  cmd->add_option("--csv", *csv,
                  "Measurements (columns of validation/README.md; default: the built-in validation/rl.csv)")
      ->type_name("FILE");
  cmd->add_flag("--json", *json, "JSON output");
  cmd->callback([csv, json, &ctx] {
    const auto v = jobspec::validate_rl(*csv, ctx.catalog());
    const auto& by_type = v.errors_by_type;
    const auto& all = v.errors;
    const auto& pair_err = v.pair_errors;
    const int agree = v.pairs_agreeing;
    const double step_sync_cov = v.step_sync_coverage_pct;
    using jobspec::median_abs;
    if (*json) {
      nlohmann::json types = nlohmann::json::object();
      for (const auto& [t, e] : by_type) types[t] = {{"checks", e.size()}, {"median_abs_error_pct", median_abs(e)}};
      nlohmann::json checks = nlohmann::json::array();
      for (const auto& c : v.checks) {
        checks.push_back({{"row_id", c.id},
                          {"type", c.type},
                          {"what", c.what},
                          {"measured", c.measured},
                          {"predicted", c.predicted},
                          {"error_pct", c.error_pct()}});
      }
      nlohmann::json pairs = nlohmann::json::array();
      for (const auto& p : v.pairs) {
        pairs.push_back({{"sync_row", p.sync_id},
                         {"async_row", p.async_id},
                         {"measured_speedup", p.measured},
                         {"predicted_speedup", p.predicted}});
      }
      nlohmann::json steps = nlohmann::json::array();
      for (const auto& [id, r] : v.results) {
        nlohmann::json phases = nlohmann::json::object();
        for (const auto& p : r.phases) phases[std::string(rl::kPhaseWords.name(p.phase))] = p.time.value();
        steps.push_back({{"row_id", id},
                         {"step_time_s", r.step_time.value()},
                         {"phases", phases},
                         {"mean_response_tokens", r.mean_response},
                         {"generator_tp", r.generator_tp},
                         {"rollout_concurrency", r.rollout.concurrency},
                         {"fits_memory", r.train.fits_memory},
                         {"training_fits_memory", r.train.fits_memory}});  // older key, kept for one release
      }
      nlohmann::json skipped = nlohmann::json::array();
      for (const auto& [id, why] : v.unpredicted) skipped.push_back({{"row_id", id}, {"reason", why}});
      std::vector<double> abs_errors;
      for (const double e : all) abs_errors.push_back(std::abs(e));
      const nlohmann::json rl_summary =
          validation_summary(v.rows.size(), static_cast<std::size_t>(v.predicted_rows), abs_errors,
                             {{"rl_step_rows", v.step_rows},
                              {"rl_step_predicted", v.step_predicted},
                              {"speedup_median_abs_error_pct", median_abs(pair_err)}});
      std::cout << nlohmann::json{{"csv", csv->empty() ? std::string("validation/rl.csv (built in)") : *csv},
                                  {"rows", v.rows.size()},
                                  {"predicted", v.predicted_rows},
                                  {"median_abs_error_pct", median_abs(all)},
                                  {"rl_step_rows", v.step_rows},
                                  {"rl_step_predicted", v.step_predicted},
                                  {"weight_sync_rows", v.sync_rows},
                                  {"weight_sync_predicted", v.sync_predicted},
                                  {"step_and_sync_coverage_pct", step_sync_cov},
                                  {"by_type", types},
                                  {"speedup_pairs", pairs},
                                  {"speedup_direction_agrees", agree},
                                  {"speedup_median_abs_error_pct", median_abs(pair_err)},
                                  {"checks", checks},
                                  {"predicted_steps", steps},
                                  {"unpredicted", skipped},
                                  {"summary", rl_summary}}
                       .dump(2)
                << "\n";
      return;
    }
    std::cout << fmt::format("validate rl: {}\n", csv->empty() ? std::string("validation/rl.csv (built in)") : *csv);
    std::cout << fmt::format(
        "  rows {}, predicted {} (rl_step {}/{}, weight_sync {}/{}: {:.0f}% of step and sync rows)\n", v.rows.size(),
        v.predicted_rows, v.step_predicted, v.step_rows, v.sync_predicted, v.sync_rows, step_sync_cov);
    std::cout << fmt::format("  median_abs_error_pct {:.1f} over {} checks\n\n", median_abs(all), all.size());
    TextTable types({{"TYPE"}, {"CHECKS", true}, {"MEDIAN |ERR| %", true}});
    for (const auto& [t, e] : by_type) types.add({t, std::to_string(e.size()), fmt::format("{:.1f}", median_abs(e))});
    types.print(std::cout, "  ");
    std::cout << fmt::format(
        "\n  async (separate pools) vs sync (colocated) speed-up: {} pairs, direction agrees {}/{}, "
        "median |size error| {:.1f}%\n",
        v.pairs.size(), agree, v.pairs.size(), median_abs(pair_err));
    TextTable pt({{"SYNC ROW"}, {"ASYNC ROW"}, {"MEASURED x", true}, {"PREDICTED x", true}});
    for (const auto& p : v.pairs)
      pt.add({p.sync_id, p.async_id, fmt::format("{:.2f}", p.measured), fmt::format("{:.2f}", p.predicted)});
    pt.print(std::cout, "  ");
    std::cout << "\n";
    TextTable t({{"ROW"}, {"TYPE"}, {"WHAT"}, {"MEASURED", true}, {"PREDICTED", true}, {"ERR %", true}});
    for (const auto& c : v.checks) {
      t.add({c.id, c.type, c.what, fmt::format("{:.3g}", c.measured), fmt::format("{:.3g}", c.predicted),
             fmt::format("{:+.1f}", c.error_pct())});
    }
    t.print(std::cout, "  ");
  });
}

}  // namespace fmsim::cli
