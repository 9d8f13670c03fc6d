// validation/rl.csv rows predicted with the RL step model.
#include "jobspec/validate_rl.hpp"

#include <algorithm>
#include <cmath>

#include "collectives/comm_cost.hpp"
#include "config/serving_calibration.hpp"
#include "config/training_calibration.hpp"
#include "jobspec/rl.hpp"
#include "parallelism/stack.hpp"

namespace fmsim::jobspec {

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0.0;
  for (auto& x : v) x = std::abs(x);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

RlValidation validate_rl(const std::string& csv, const hardware::Catalog& catalog) {
  RlValidation v;
  v.rows = config::load_rl_rows(csv, catalog);
  const auto calibration = config::load_training_calibration("");
  const auto serving_cal = config::load_serving_calibration();
  const auto cal = rl_calibration(serving_cal);
  const rl::ServingRolloutEngine engine(serving_cal, "vllm");
  auto& results = v.results;
  for (const auto& row : v.rows) {
    if (row.row_type == config::RlRowType::RlStep) ++v.step_rows;
    if (row.row_type == config::RlRowType::WeightSync) ++v.sync_rows;
    if (row.sync_job && row.measured_sync_s) {
      const auto r = rl::estimate_weight_sync(*row.sync_job, cal, collectives::make_comm_cost(row.sync_job->cluster));
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
  for (const auto& c : v.checks) {
    v.errors_by_type[c.type].push_back(c.error_pct());
    v.errors.push_back(c.error_pct());
  }
  for (const auto& p : v.pairs) {
    v.pair_errors.push_back(100.0 * (p.predicted / p.measured - 1.0));
    if ((p.predicted > 1.0) == (p.measured > 1.0)) ++v.pairs_agreeing;
  }
  v.step_sync_coverage_pct = 100.0 * (v.step_predicted + v.sync_predicted) / std::max(1, v.step_rows + v.sync_rows);
  return v;
}

}  // namespace fmsim::jobspec
