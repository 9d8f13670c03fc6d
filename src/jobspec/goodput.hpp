// The goodput scenario of a checkpointed job (failures, recovery, checkpoint strategy and
// interval, Monte Carlo), from the flag values of `fmsim goodput` and `fmsim run`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/units.hpp"
#include "jobspec/checkpoint.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
#include "storage/checkpoint_io.hpp"

namespace fmsim::jobspec {

/// Raw values of the failure, checkpoint-strategy, recovery, duration and Monte Carlo flags;
/// empty strings mean "not given" (the shipped default applies).
struct GoodputFlags {
  std::string failures = "llama3-405b";  ///< --failures: failure mix
  std::string failure_file;              ///< --failure-file
  std::string mtbf;                      ///< --mtbf: job-level, overrides the mix's rate
  std::string node_failure_rate;         ///< --node-failure-rate: per 1000 node-days or a named rate
  bool include_planned = false;          ///< --include-planned
  std::string strategy;                  ///< --strategy; "" = async with --async, else sync
  std::string save_time, copy_time, load_time, peer_load_time;  ///< instead of the storage model
  int replicas = 2;                                             ///< --replicas: copies of an in-memory checkpoint
  std::string interval;                                         ///< --interval; "" = the optimum
  std::string detect, replace, restart, repair;
  int spares = -1;                ///< --spares; -1 = never short of one
  std::string duration = "30d";   ///< --duration: wall-clock length of the run
  double weibull_shape = 1.0;     ///< --weibull-shape
  int replications = 1000;        ///< --replications: Monte Carlo runs (0 = none, in `run`)
  std::uint64_t seed = 20240723;  ///< --seed
  int threads = 2;                ///< --threads
};

/// A goodput scenario resolved from the flags, with what the commands report about it.
struct GoodputSetup {
  std::string failure_model;              ///< name of the failure mix
  reliability::GoodputScenario scenario;  ///< checkpoint interval set: --interval or the optimum
  reliability::CheckpointStrategy strategy = reliability::CheckpointStrategy::SyncDisk;
  std::optional<storage::CheckpointEstimate> estimate;  ///< when the storage model timed the checkpoint
  core::Seconds young{};                                ///< Young's interval sqrt(2 delta M), delta = the stall
  core::Seconds daly{};                                 ///< Daly's higher-order interval
  core::Seconds optimum{};                              ///< the interval that maximises the analytic ETTR
  reliability::MonteCarloOptions monte_carlo;
};

/// The scenario of a run of `job` (its nodes and GPUs fail; its checkpoint is timed by the storage
/// model when it has contents and a tier, else by --save-time and friends) whose steps take
/// `step_time` (0 = negligible). InputError naming the flag on bad or missing values.
GoodputSetup resolve_goodput_setup(const GoodputFlags& flags, const CheckpointJob& job, core::Seconds step_time);

}  // namespace fmsim::jobspec
