// The planner against published layouts: for each group of published runs that share everything
// the planner holds fixed (model, system, GPU count, sequence, global batch, precision, task,
// stack), the best published layout and the planner's best layout, both predicted by the same
// step model, and a verdict. `fmsim validate planner` and `fmsim plan --against-csv` print it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "training/calibration.hpp"
#include "training/step_model.hpp"

namespace fmsim::planner {

/// One published training run, as a job the step model can predict.
struct PublishedRun {
  std::string model;   ///< model name as published (groups runs)
  std::string system;  ///< catalog system of the run's hardware
  int gpus = 0;
  training::TrainingJob job;              ///< model, cluster, layout, stack and task of the run
  std::optional<double> measured_step_s;  ///< the published step time, when there is one
};

/// One group: the best published layout against the planner's best, both predicted.
struct PublishedComparison {
  std::string model, system, precision;
  int gpus = 0;
  std::int64_t seq_len = 0, global_batch = 0;
  std::string published_layout;  ///< label of the published layout the model predicts fastest
  double published_step_s = 0;   ///< its predicted step time
  bool published_fits = true;    ///< whether it fits the memory model
  double measured_step_s = 0;    ///< its published step time (NaN when none)
  std::string planner_layout;    ///< the planner's best ("-" when nothing fits)
  double planner_step_s = 0;     ///< its predicted step time (NaN when nothing fits)
  std::string verdict;           ///< "agrees (...)", "planner 12% faster", "planner slower: why"

  /// The planner's best predicted step is no slower than the best published layout's.
  [[nodiscard]] bool planner_at_least_as_fast() const;
};

struct ComparisonOptions {
  int threads = 0;  ///< planner worker threads (0 = all cores)
  int max_pp = 32;  ///< largest pipeline parallelism searched
  /// Called after each group with (groups done, groups in all); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
};

/// Groups `runs` (in first-appearance order), predicts each published layout, plans each group
/// with the group's model, system, GPUs, sequence, batch, precision, task, stack and framework
/// settings, and compares. Groups whose published layouts are all infeasible are left out.
[[nodiscard]] std::vector<PublishedComparison> compare_with_published(const std::vector<PublishedRun>& runs,
                                                                      const training::Calibration& calibration,
                                                                      const ComparisonOptions& options);

}  // namespace fmsim::planner
