// The rows of validation/rl.csv predicted with the RL step model: steps, phases, weight syncs,
// throughputs and the async-vs-sync speed-ups, with their errors. `fmsim validate rl` prints what
// this returns.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/rl_input.hpp"
#include "hardware/catalog.hpp"
#include "rl/rl_step.hpp"

namespace fmsim::jobspec {

/// One measured figure and its prediction.
struct RlCheck {
  std::string id, type, what;  ///< type: step, phase, weight_sync, throughput
  double measured = 0.0, predicted = 0.0;
  [[nodiscard]] double error_pct() const { return 100.0 * (predicted - measured) / measured; }
};

/// A synchronous (colocated) row and its asynchronous (separate pools) twin: same source, model,
/// GPU count and batch; the speed-up is step(sync) / step(async).
struct RlSpeedupPair {
  std::string sync_id, async_id;
  double measured = 0.0, predicted = 0.0;
};

/// The median of |v| (the mean of the middle two for an even count); 0 when empty.
double median_abs(std::vector<double> v);

/// The checks and pairs of one CSV and their summary.
struct RlValidation {
  std::vector<config::RlRow> rows;
  std::map<std::string, rl::RlStepResult> results;               ///< predicted steps by row id
  std::vector<std::pair<std::string, std::string>> unpredicted;  ///< row id, why not
  std::vector<RlCheck> checks;
  std::vector<RlSpeedupPair> pairs;
  int predicted_rows = 0, step_rows = 0, step_predicted = 0, sync_rows = 0, sync_predicted = 0;
  std::map<std::string, std::vector<double>> errors_by_type;  ///< signed error % of the checks by type
  std::vector<double> errors;                                 ///< every check's signed error %
  std::vector<double> pair_errors;                            ///< 100 (predicted / measured speed-up - 1)
  int pairs_agreeing = 0;                                     ///< pairs whose speed-up is on the measured side of 1
  double step_sync_coverage_pct = 0.0;                        ///< predicted of the step and sync rows
};

/// Predicts every row of `csv` (the built-in validation/rl.csv when empty).
RlValidation validate_rl(const std::string& csv, const hardware::Catalog& catalog);

}  // namespace fmsim::jobspec
