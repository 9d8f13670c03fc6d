// The planner: searches parallel layouts on each candidate system for a training job, prunes
// what does not divide or fit, ranks by time or cost (planner/ranking.hpp), and sweeps GPU counts.
//
// Search, per (system, GPU count) scenario:
//   shapes (tp, cp, pp, vp, ep; divisibility)  x  variants (ZeRO stage, micro-batch, recompute,
//   precision; batch divisibility)  ->  memory estimate (prune what exceeds usable HBM)
//   ->  training::estimate_step (the analytical fast path)  ->  rank.
// Evaluation runs on std::thread workers that take whole shapes from a shared counter; results
// land in per-shape slots and are merged in shape order, so the ranking is the same for any
// thread count. Each worker builds its own CommCostFn per cluster (the communication model may
// memoise, so it is not shared between threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "planner/bottleneck.hpp"
#include "planner/ranking.hpp"
#include "planner/search_space.hpp"
#include "training/calibration.hpp"
#include "training/step_model.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::planner {

/// One planning question.
struct PlanRequest {
  workload::ModelSpec model;
  std::vector<hardware::ClusterSpec> systems;  ///< one per candidate system; `count` is set per GPU count
  std::vector<int> gpu_counts;                 ///< GPUs the job uses; several = also choose how many
  /// GPU counts whose layouts compete for SystemPlan::top; empty = all of gpu_counts. (A scaling
  /// sweep can rank only the requested count while sweeping others for the scaling points.)
  std::vector<int> ranked_gpu_counts;
  std::int64_t seq_len = 8192;
  std::int64_t document_tokens = 0;  ///< mean tokens of the documents packed per sequence (0 = unpacked)
  std::int64_t global_batch = 1024;  ///< sequences per optimizer step
  double tokens = 15e12;             ///< training budget in tokens
  training::Task task = training::Task::Pretrain;
  int lora_rank = 16;  ///< with Task::Lora: adapters of this rank on `lora_targets`, base stored as `lora_base`
  unsigned lora_targets = static_cast<unsigned>(training::LoraModules::AllLinear);
  training::LoraBase lora_base = training::LoraBase::Bf16;
  std::string stack = "megatron";                         ///< key into Calibration::stacks
  std::optional<training::MoeDispatcher> moe_dispatcher;  ///< overrides the stack's when set
  Objective objective = Objective::Time;
  SearchSpace space;
  FrameworkSettings framework;  ///< overlaps etc., the same for every candidate
  int top = 3;                  ///< layouts kept per system
  /// Keep at most one layout per (GPUs, tp, pp, cp, ep) in SystemPlan::top, so the runners-up are
  /// different shapes rather than the best one with another micro-batch or ZeRO stage.
  bool distinct_shapes = true;
  int threads = 0;  ///< 0 = std::thread::hardware_concurrency()
};

/// Called from the thread that runs plan(), about every 100 ms while workers run, with the
/// candidates done so far and the total. Never called from a worker.
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

/// Counts from one search.
struct SearchStats {
  std::size_t shapes = 0;         ///< model-parallel shapes that divide (tp, cp, pp, vp, ep)
  std::size_t candidates = 0;     ///< shapes x variants: every layout considered
  std::size_t pruned_batch = 0;   ///< global batch not a multiple of micro-batch x dp
  std::size_t pruned_memory = 0;  ///< estimated memory above usable HBM
  std::size_t evaluated = 0;      ///< step estimates computed (divide and fit)
  double seconds = 0.0;           ///< wall time of the evaluation
  SearchStats& operator+=(const SearchStats& o);
};

/// A ranked layout with everything the tables and the report show.
struct PlannedLayout {
  int rank = 0;                    ///< 1 = best on its system
  int gpus = 0;                    ///< GPUs the job uses
  int units = 0;                   ///< instances / UltraServers rented (whole units)
  parallelism::Layout layout;      ///< dp filled
  training::StepResult step;       ///< from training::estimate_step
  double steps = 0.0;              ///< optimizer steps to consume the token budget (rounded up)
  double train_seconds = 0.0;      ///< steps x step time (no failures, restarts or checkpoints)
  double cost_usd = 0.0;           ///< train hours x price of the rented units; NaN when the price is unknown
  double tokens_per_dollar = 0.0;  ///< NaN when the price is unknown
  double headroom_bytes = 0.0;     ///< usable HBM minus estimated memory, per GPU
  Bottleneck bottleneck;
  [[nodiscard]] std::string label() const { return layout_label(layout); }
};

/// The search's answer for one system.
struct SystemPlan {
  hardware::ClusterSpec cluster;   ///< sized for the best layout's GPU count (or the first count)
  std::vector<PlannedLayout> top;  ///< best first; empty when nothing divides and fits
  SearchStats stats;
  /// When `top` is empty: why (nothing divides, or the smallest footprint and its layout).
  std::string empty_reason;
};

/// Best layout of one system at one GPU count (the scaling sweep).
struct ScalingPoint {
  int gpus = 0;
  std::optional<PlannedLayout> best;  ///< nullopt when nothing divides and fits
  double speedup = 0.0;               ///< step-time ratio to the previous point with a layout (0 for the first)
  double marginal_efficiency = 0.0;   ///< speedup / GPU ratio to that point (1 = linear scaling)
};

/// Scaling of one system over the requested GPU counts.
struct SystemScaling {
  std::string system;
  std::vector<ScalingPoint> points;
  /// Index into points of the last GPU count that still paid: every later step scales with
  /// marginal efficiency below kPayingEfficiency (nullopt: no point has a layout).
  std::optional<std::size_t> knee;
};

/// Adding GPUs "pays" while the step speeds up by at least this fraction of the GPU ratio.
inline constexpr double kPayingEfficiency = 0.8;

/// The whole answer.
struct Plan {
  std::vector<SystemPlan> systems;         ///< in request order
  std::optional<std::size_t> best_system;  ///< index of the system whose #1 ranks best overall
  std::vector<SystemScaling> scaling;      ///< filled by plan_scaling only
  SearchStats stats;                       ///< summed over systems
};

/// Searches every system at every GPU count of the request and keeps the `top` layouts per
/// system (across its GPU counts) under the request's objective. Pure: no I/O; progress, when
/// given, is only called as documented above. Preconditions (FMSIM_CHECK): at least one system,
/// one GPU count > 0, seq_len, global batch, top >= 1, and a calibration for each system's GPU.
Plan plan(const PlanRequest& request, const training::Calibration& calibration, const ProgressFn& progress = {});

/// As plan(), and also the best layout at each GPU count of each system with its speedup over
/// the previous count and the knee where adding GPUs stops paying.
Plan plan_scaling(const PlanRequest& request, const training::Calibration& calibration,
                  const ProgressFn& progress = {});

/// A layout of `request` evaluated on `cluster` (resized to `gpus`) and its cost figures; used
/// for ranked results and to price a given (e.g. published) layout the same way.
PlannedLayout evaluate_layout(const PlanRequest& request, const training::Calibration& calibration,
                              const hardware::ClusterSpec& cluster, int gpus, const parallelism::Layout& layout);

/// `cluster` with `count` set to the whole units needed for `gpus` GPUs.
hardware::ClusterSpec sized_cluster(hardware::ClusterSpec cluster, int gpus);

/// Optimizer steps for a token budget: ceil(tokens / (global_batch * seq_len)).
double steps_for_tokens(double tokens, std::int64_t global_batch, std::int64_t seq_len);

/// Cost in USD of running `units` units at `price_per_unit_hour` for `seconds`: units x price x seconds / 3600.
double cost_usd(double seconds, int units, double price_per_unit_hour);

/// The ranking key of a layout under an objective: lower is better (train seconds, cost, or
/// minus tokens per dollar); +infinity when the objective needs a price the system lacks.
double objective_key(const PlannedLayout& p, Objective objective);

}  // namespace fmsim::planner
