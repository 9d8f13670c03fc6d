// The rows of validation/training.csv predicted with the training step model, their errors, the
// groups of indistinguishable rows and the memory verdicts. `fmsim validate training` prints what
// this returns; `fmsim calibrate training` fits to `training_measurements`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/training_csv.hpp"
#include "hardware/catalog.hpp"
#include "training/calibration_fit.hpp"
#include "training/step_model.hpp"

namespace fmsim::jobspec {

/// What `fmsim validate training` was asked for.
struct TrainingValidationOptions {
  std::string csv;  ///< empty: the built-in validation/training.csv
  std::string calibration;
  std::vector<std::string> rows;  ///< only these row ids; each keeps its full step result
  bool analytical = false;        ///< the closed-form schedule instead of the event simulation
  bool holdout = false;           ///< leave-one-source-out refits
  double anchor = training::FitOptions{}.anchor;
};

/// A row and its prediction (or why it has none).
struct TrainingRowOutcome {
  config::TrainingRow row;
  double predicted = 0.0;
  double error_pct = 0.0;  ///< signed: (predicted - measured) / measured
  bool ok = false;
  bool oom = false;
  double memory_gib = 0.0;    ///< predicted peak per GPU (device total)
  double capacity_gib = 0.0;  ///< usable HBM
  int peak_stage = 0;
  std::optional<training::StepResult> step;  ///< with `rows` given: the whole prediction
};

/// Rows the simulator cannot tell apart (same model, system, GPU count, layout, sequence length,
/// task and stack) whose measurements still differ, e.g. the same recipe in two container
/// releases. A model that sees only these inputs predicts one time p for all of them; the worst
/// |error| in the group, max(p / m_min - 1, 1 - p / m_max), is smallest at
/// p = 2 m_min m_max / (m_min + m_max), where it is (m_max - m_min) / (m_max + m_min): the floor.
struct TrainingRepeatGroup {
  std::vector<const TrainingRowOutcome*> rows;
  double min_s = 0.0, max_s = 0.0;
  [[nodiscard]] double spread_pct() const { return 100.0 * (max_s / min_s - 1.0); }
  [[nodiscard]] double floor_pct() const { return 100.0 * (max_s - min_s) / (max_s + min_s); }
  [[nodiscard]] std::vector<std::string> ids() const;
};

/// The |error| statistics of a set of rows.
struct TrainingErrorSummary {
  int rows = 0;
  int predicted = 0;
  double median = 0, p90 = 0, max = 0, mean_signed = 0;
};

TrainingErrorSummary summarise_training(const std::vector<const TrainingRowOutcome*>& outcomes);

using TrainingGroups = std::map<std::string, std::vector<const TrainingRowOutcome*>>;

/// Every row's outcome and the summaries over them. Pointers refer into `outcomes` (kept valid by
/// moves; copies are not allowed).
struct TrainingValidation {
  TrainingValidation() = default;
  TrainingValidation(const TrainingValidation&) = delete;
  TrainingValidation& operator=(const TrainingValidation&) = delete;
  TrainingValidation(TrainingValidation&&) = default;
  TrainingValidation& operator=(TrainingValidation&&) = default;

  std::vector<std::pair<std::string, int>> refits;  ///< --holdout: each source refitted without, its rows
  std::vector<TrainingRowOutcome> outcomes;         ///< the CSV's rows (or `rows`), in order
  std::vector<const TrainingRowOutcome*> measured;  ///< rows with a measured step time
  std::vector<const TrainingRowOutcome*> derived;   ///< rows derived from published TFLOP/s
  TrainingGroups by_source, by_system, by_arch;     ///< measured rows
  TrainingErrorSummary all, derived_summary;
  std::vector<TrainingRepeatGroup> repeats;  ///< spread > 5%, widest first
  long repeats_over_25 = 0;                  ///< groups whose floor is above 25%
  std::vector<std::string> oom_ids;          ///< measured runs judged out of memory
  std::size_t fitting = 0;                   ///< measured runs predicted to fit
};

/// Predicts every row of `options.csv`.
TrainingValidation validate_training(const TrainingValidationOptions& options, const hardware::Catalog& catalog);

/// Every row of `csv` with a job and a measured step time, except those of `exclude_sources`.
std::vector<training::Measurement> training_measurements(const std::string& csv, const hardware::Catalog& catalog,
                                                         const std::vector<std::string>& exclude_sources);

}  // namespace fmsim::jobspec
