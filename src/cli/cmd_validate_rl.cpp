// fmsim validate rl: predict the published RL steps, phases, weight syncs and throughputs of
// validation/rl.csv and report the error, per row type, and the async-vs-sync speed-ups.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/text_table.hpp"
#include "config/rl_input.hpp"
#include "config/serving_calibration.hpp"
#include "config/training_calibration.hpp"
#include "jobspec/rl.hpp"
#include "parallelism/stack.hpp"
#include "rl/rl_step.hpp"
#include "training/comm_adapter.hpp"

namespace fmsim::cli {
namespace {

struct Check {
  std::string id, type, what;  // type: step, phase, weight_sync, throughput
  double measured = 0.0, predicted = 0.0;
  [[nodiscard]] double error_pct() const { return 100.0 * (predicted - measured) / measured; }
};

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0.0;
  for (auto& x : v) x = std::abs(x);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Pair {
  std::string sync_id, async_id;
  double measured = 0.0, predicted = 0.0;  // step(sync colocated) / step(async separate)
};

}  // namespace

/// The checks and pairs of one CSV; shared by the command and the validation test through the CLI.
struct RlValidation {
  std::vector<config::RlRow> rows;
  std::map<std::string, rl::RlStepResult> results;               ///< predicted steps by row id
  std::vector<std::pair<std::string, std::string>> unpredicted;  ///< row id, why not
  std::vector<Check> checks;
  std::vector<Pair> pairs;
  int predicted_rows = 0, step_rows = 0, step_predicted = 0, sync_rows = 0, sync_predicted = 0;
};

static RlValidation run_rl_validation(const std::string& csv, Context& ctx) {
  RlValidation v;
  v.rows = config::load_rl_rows(csv, ctx.catalog());
  const auto calibration = config::load_training_calibration("");
  const auto serving_cal = config::load_serving_calibration();
  const auto cal = jobspec::rl_calibration(serving_cal);
  const rl::ServingRolloutEngine engine(serving_cal, "vllm");
  auto& results = v.results;
  for (const auto& row : v.rows) {
    if (row.row_type == config::RlRowType::RlStep) ++v.step_rows;
    if (row.row_type == config::RlRowType::WeightSync) ++v.sync_rows;
    if (row.sync_job && row.measured_sync_s) {
      const auto r = rl::estimate_weight_sync(*row.sync_job, cal, training::make_comm_cost(row.sync_job->cluster));
      v.checks.push_back({row.id, "weight_sync", "sync", *row.measured_sync_s, r.total.value()});
      ++v.predicted_rows;
      ++v.sync_predicted;
      continue;
    }
    if (!row.skip_reason.empty()) {
      v.unpredicted.emplace_back(row.id, row.skip_reason);
      continue;
    }
    if (!row.job || !row.measured_step_s) {
      v.unpredicted.emplace_back(row.id, "no measured time of a step or a sync");
      continue;
    }
    const auto r = rl::estimate_rl_step(*row.job, calibration, cal, engine);
    if (!r.feasible) {
      v.unpredicted.emplace_back(row.id, "infeasible: " + r.reason);
      continue;
    }
    results[row.id] = r;
    ++v.predicted_rows;
    ++v.step_predicted;
    v.checks.push_back({row.id, "step", "step", *row.measured_step_s, r.step_time.value()});
    const bool async = row.job->synchrony != rl::Synchrony::OnPolicy;
    const double update = rl::phase_time(r, rl::Phase::PolicyUpdate).value();
    if (row.measured_gen_s && *row.measured_gen_s > 0.0) {
      v.checks.push_back({row.id, "phase", async ? "trainer wait" : "generation", *row.measured_gen_s,
                          async ? r.trainer_wait.value() : r.rollout.makespan.value()});
    }
    if (row.measured_train_s && *row.measured_train_s > 0.0 &&
        parallelism::kStackWords.parse(row.job->stack) == parallelism::Stack::TorchTitan) {
      v.checks.push_back({row.id, "phase", "policy update", *row.measured_train_s, update});
    }
    if (row.measured_tokens_per_s_per_gpu) {
      const double tokens =
          static_cast<double>(r.responses) * (static_cast<double>(row.job->prompt_len) + r.mean_response);
      v.checks.push_back({row.id, "throughput", "tokens/s/GPU", *row.measured_tokens_per_s_per_gpu,
                          tokens / r.step_time.value() / row.job->job_gpus()});
    }
  }
  // Async (separate pools) vs sync (colocated) pairs: same source, model, GPU count and batch.
  for (const auto& a : v.rows) {
    if (!a.job || !results.count(a.id) || a.job->placement != rl::Placement::Colocated) continue;
    for (const auto& b : v.rows) {
      if (!b.job || !results.count(b.id) || b.job->placement != rl::Placement::Disaggregated) continue;
      if (a.source != b.source || a.model_text != b.model_text || a.hardware != b.hardware ||
          a.job->job_gpus() != b.job->job_gpus() || a.job->prompts != b.job->prompts)
        continue;
      v.pairs.push_back({a.id, b.id, *a.measured_step_s / *b.measured_step_s,
                         results[a.id].step_time.value() / results[b.id].step_time.value()});
      break;
    }
  }
  return v;
}

void add_validate_rl(CLI::App& validate, Context& ctx) {
  auto csv = std::make_shared<std::string>();  // empty: the copy of validation/rl.csv built into fmsim
  auto json = std::make_shared<bool>(false);
  auto* cmd = validate.add_subcommand(
      "rl", "Compare RL step, phase, weight-sync and throughput predictions with validation/rl.csv");
  cmd->add_option("--csv", *csv,
                  "Measurements (columns of validation/README.md; default: the built-in validation/rl.csv)")
      ->type_name("FILE");
  cmd->add_flag("--json", *json, "JSON output");
  cmd->callback([csv, json, &ctx] {
    const auto v = run_rl_validation(*csv, ctx);
    std::map<std::string, std::vector<double>> by_type;
    std::vector<double> all;
    for (const auto& c : v.checks) {
      by_type[c.type].push_back(c.error_pct());
      all.push_back(c.error_pct());
    }
    std::vector<double> pair_err;
    int agree = 0;
    for (const auto& p : v.pairs) {
      pair_err.push_back(100.0 * (p.predicted / p.measured - 1.0));
      if ((p.predicted > 1.0) == (p.measured > 1.0)) ++agree;
    }
    const double step_sync_cov = 100.0 * (v.step_predicted + v.sync_predicted) / std::max(1, v.step_rows + v.sync_rows);
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
                         {"training_fits_memory", r.train.fits_memory}});
      }
      nlohmann::json skipped = nlohmann::json::array();
      for (const auto& [id, why] : v.unpredicted) skipped.push_back({{"row_id", id}, {"reason", why}});
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
                                  {"unpredicted", skipped}}
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
