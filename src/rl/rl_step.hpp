// One step of RL post-training (GRPO, DAPO, PPO, REINFORCE) on a cluster: rollout, reward,
// log-prob forwards, policy (and critic) update, weight sync; colocated or disaggregated, on- or
// off-policy. Built on the training step model (training/) and a RolloutEngine (rollout.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"
#include "engine/trace.hpp"
#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "rl/calibration.hpp"
#include "rl/lengths.hpp"
#include "rl/rollout.hpp"
#include "rl/weight_sync.hpp"
#include "training/calibration.hpp"
#include "training/step_model.hpp"
#include "workload/expert_load.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::rl {

enum class Algorithm { Grpo, Dapo, Ppo, Reinforce };
enum class Placement { Colocated, Disaggregated };
enum class Synchrony {
  OnPolicy,    ///< generate, then train, then sync: phases in sequence
  OffPolicy,   ///< k-step off-policy: generation of step n+k overlaps training of step n
  FullyAsync,  ///< streaming generation with partial rollouts: the long tail no longer holds a step
};
enum class RewardKind { Rule, Model };
/// What a colocated step moves to host memory between generation and training.
enum class ColocatedOffload {
  Always,      ///< trainer gradients and optimizer states, engine weights (NeMo-RL, verl hybrid engine)
  WhenNeeded,  ///< only when the trainer's memory and the engine's share do not fit together (TRL colocate without vLLM
               ///< sleep)
};
inline constexpr core::Word<ColocatedOffload> kColocatedOffloadWordList[] = {
    {ColocatedOffload::Always, "always"},
    {ColocatedOffload::WhenNeeded, "when-needed"},
};
inline constexpr core::Vocabulary<ColocatedOffload> kColocatedOffloadWords{"colocated offload",
                                                                           kColocatedOffloadWordList};
/// What the trainer itself keeps in host memory between its phases (verl's
/// actor.fsdp_config.param_offload / optimizer_offload, actor.megatron.param_offload /
/// grad_offload / optimizer_offload): each training phase loads it to the GPU first and offloads
/// it after, inside the phase's own timer.
enum class TrainerOffload {
  None,
  ParamsOptimizer,       ///< master parameters and optimizer states (FSDP param_offload + optimizer_offload)
  ParamsGradsOptimizer,  ///< also the gradient buffers (Megatron grad_offload)
};
inline constexpr core::Word<TrainerOffload> kTrainerOffloadWordList[] = {
    {TrainerOffload::None, "none"},
    {TrainerOffload::ParamsOptimizer, "params+optimizer"},
    {TrainerOffload::ParamsGradsOptimizer, "params+grads+optimizer"},
};
inline constexpr core::Vocabulary<TrainerOffload> kTrainerOffloadWords{"trainer offload", kTrainerOffloadWordList};

/// The words of --algorithm, --placement, --sync and --reward (and rl.csv's cells).
inline constexpr core::Word<Algorithm> kAlgorithmWordList[] = {
    {Algorithm::Grpo, "grpo"},
    {Algorithm::Dapo, "dapo"},
    {Algorithm::Ppo, "ppo"},
    {Algorithm::Reinforce, "reinforce"},
};
inline constexpr core::Vocabulary<Algorithm> kAlgorithmWords{"algorithm", kAlgorithmWordList};
inline constexpr core::Word<Placement> kPlacementWordList[] = {
    {Placement::Colocated, "colocated"},
    {Placement::Disaggregated, "disaggregated"},
};
inline constexpr core::Vocabulary<Placement> kPlacementWords{"placement", kPlacementWordList};
inline constexpr core::Word<Synchrony> kSynchronyWordList[] = {
    {Synchrony::OnPolicy, "on-policy"},
    {Synchrony::OffPolicy, "off-policy"},
    {Synchrony::FullyAsync, "fully-async"},
};
inline constexpr core::Vocabulary<Synchrony> kSynchronyWords{"synchrony", kSynchronyWordList};
inline constexpr core::Word<RewardKind> kRewardKindWordList[] = {
    {RewardKind::Rule, "rule"},
    {RewardKind::Model, "model"},
};
inline constexpr core::Vocabulary<RewardKind> kRewardKindWords{"reward", kRewardKindWordList};

std::string to_string(Algorithm a);
std::string to_string(Placement p);
std::string to_string(Synchrony s);

struct RlJob {
  workload::ModelSpec policy;
  std::optional<workload::ModelSpec> critic;        ///< PPO; default: the policy's architecture
  std::optional<workload::ModelSpec> reward_model;  ///< RewardKind::Model; default: the policy's architecture
  hardware::ClusterSpec cluster;
  int gpus = 0;  ///< GPUs used; 0 = the whole cluster
  Algorithm algorithm = Algorithm::Grpo;
  std::int64_t prompts = 512;
  int samples = 8;
  std::int64_t prompt_len = 512;
  LengthDistribution lengths;
  Placement placement = Placement::Colocated;
  /// Disaggregated: GPUs of the generator pool; 0 = half of the GPUs, the split of the published
  /// disaggregated recipes (28 of the 31 rows of validation/rl.csv that state their split, among
  /// them verl's fully-async R002-R012, 16+16 to 64+64, and NeMo-RL's *-async-1off R062-R093, 4+4
  /// to 256+256). A default of the job, not a calibration: `fmsim rl --plan` searches 1/4..3/4.
  int generator_gpus = 0;
  Synchrony synchrony = Synchrony::OnPolicy;
  int staleness = 1;  ///< k of k-step off-policy
  /// Off-policy: the engine refills the slots of finished responses with the next batch's prompts
  /// and takes new weights in flight (NeMo-RL async GRPO with in_flight_weight_updates, an async
  /// vLLM engine), so no batch drains to its longest response: generation is bound by the pool's
  /// token rate with at most k batches in flight. Without it every batch is played to its longest
  /// response (verl one-step-off).
  bool refill = false;
  /// Fully async: how far the generators may run ahead of the trainer, as a fraction of the
  /// samples of one parameter-sync window (verl fully_async staleness_threshold; 0 = the
  /// generators stop at each window's quota and drain to its longest response).
  double staleness_fraction = 0.5;
  double oversample = 1.0;  ///< dynamic sampling: responses generated per response kept
  /// Agentic episodes: turns, tool latency, observations, caps on agents and tool calls, which
  /// tokens are trained (rl/agentic.hpp). The default is single-turn.
  AgentSpec agent;
  RewardKind reward = RewardKind::Rule;
  ColocatedOffload offload = ColocatedOffload::Always;
  TrainerOffload trainer_offload = TrainerOffload::None;
  /// The engine's share of HBM (vLLM gpu_memory_utilization); 0 = RlCalibration's default for
  /// the placement (0.6 time-shared, 0.9 on a separate pool).
  double generator_memory_utilization = 0.0;
  int generator_tp = 0;  ///< 0 = smallest TP whose weights use at most half the engine's memory
  /// Expert parallelism of a generator replica (vLLM --enable-expert-parallel: the experts spread
  /// over the replica's GPUs instead of each split by TP); divides the generation TP. 1 = none.
  int generator_ep = 1;
  core::Precision generator_precision = core::Precision::BF16;
  parallelism::Layout train_layout;  ///< dp derived from the trainer GPUs
  std::string stack = "megatron";
  std::int64_t mini_batches = 1;  ///< optimizer steps per RL step (ppo_mini_batch)
  int epochs = 1;                 ///< passes over the batch (PPO epochs)
  bool rollout_logprobs = false;  ///< reuse the engine's log-probs: no old-log-prob forward
  std::optional<bool> reference;  ///< KL reference forward; default by algorithm (not DAPO)
  SyncMethod sync_method = SyncMethod::NcclBucketed;
  std::int64_t steps = 1;  ///< for the time and cost of a run
  std::uint64_t seed = 1;
  [[nodiscard]] int job_gpus() const { return gpus > 0 ? gpus : cluster.gpus(); }
};

/// The phases of one RL step, in the order a step reports them. The names are the timers of the
/// RL frameworks (verl's timing_s/old_log_prob, timing_s/update_actor as policy_update, ...).
enum class Phase {
  Rollout,         ///< generation of the responses
  Reward,          ///< rule or reward-model scoring
  OldLogProb,      ///< the policy's log-probs of the responses before the update
  Reference,       ///< the reference model's log-probs (KL term)
  CriticValues,    ///< the critic's values (PPO)
  PolicyUpdate,    ///< forward, backward and optimizer step of the policy
  CriticUpdate,    ///< the critic's update (PPO)
  WeightSync,      ///< trainer -> generator weights
  TrainerOffload,  ///< the trainer's own host offload around its phases
  OffloadReload,   ///< colocated: the switch between engine and trainer in GPU memory
  PipelineStall,   ///< off-policy: what the pipeline's ramp adds per step
  Overhead,        ///< the rest of a step (data, logging, scheduling)
};
inline constexpr core::Word<Phase> kPhaseWordList[] = {
    {Phase::Rollout, "rollout"},
    {Phase::Reward, "reward"},
    {Phase::OldLogProb, "old_log_prob"},
    {Phase::Reference, "reference"},
    {Phase::CriticValues, "critic_values"},
    {Phase::PolicyUpdate, "policy_update"},
    {Phase::CriticUpdate, "critic_update"},
    {Phase::WeightSync, "weight_sync"},
    {Phase::TrainerOffload, "trainer_offload"},
    {Phase::OffloadReload, "offload_reload"},
    {Phase::PipelineStall, "pipeline_stall"},
    {Phase::Overhead, "overhead"},
};
inline constexpr core::Vocabulary<Phase> kPhaseWords{"RL phase", kPhaseWordList};

struct PhaseResult {
  Phase phase = Phase::Rollout;
  core::Seconds time{};      ///< duration of the phase itself
  core::Seconds exposed{};   ///< what it adds to the step (0 when hidden behind another pool's work)
  int gpus = 0;              ///< GPUs working in the phase
  double utilisation = 0.0;  ///< busy fraction of the job's GPUs during the phase
  core::Bytes memory_per_gpu{};
};

struct RlStepResult {
  bool feasible = false;
  std::string reason;
  core::Seconds step_time{};
  std::vector<PhaseResult> phases;
  RolloutResult rollout;
  WeightSyncResult sync;
  training::StepResult train;  ///< one optimizer step of the policy
  int generator_gpus = 0, trainer_gpus = 0, generator_tp = 1, generator_replicas = 1;
  parallelism::Layout train_layout;
  std::int64_t responses = 0;
  double generated_tokens = 0.0, trained_tokens = 0.0;
  double generated_tokens_per_s = 0.0, trained_tokens_per_s = 0.0;  ///< over the step
  core::Seconds trainer_wait{};  ///< trainer idle waiting for samples (verl's async "gen")
  double gpu_utilisation = 0.0;  ///< time-weighted over the step
  double mean_response = 0.0, truncated_fraction = 0.0;
  /// Trained sequences per step and their mean length (agentic: observations as context, or one
  /// sequence per turn; otherwise prompt + response).
  double trained_sequences = 0.0, trained_sequence_tokens = 0.0;
  core::Seconds run_time{};                            ///< steps x step_time
  double cost_per_step_usd = 0.0, run_cost_usd = 0.0;  ///< 0 when the system has no price
};

/// Steady-state step of k-step off-policy training over a run of batches: batch b is generated
/// (gen[b] seconds) with weights at most k versions old, then trained (train[b]); after each
/// batch the trainer sends the new version (sync seconds) and the generators load the newest
/// version at their next batch boundary (sync seconds on their side too). Returns the mean time
/// between the trainer's completions of batches 1..n-1 (batches 0 and 1 are the start-up: the
/// first is generated with no overlap, the second before any new weights exist). With equal batches this is max(gen,
/// train) + sync for any k; with batches of uneven length a larger k lets the generators run ahead and absorb the
/// spread.
core::Seconds pipelined_step(int k, const std::vector<double>& gen, const std::vector<double>& train, double sync);

/// Batches of drawn lengths an off-policy step runs through pipelined_step: 8, the same draws
/// for every k, so that k changes the schedule and not the sample. A setting of the simulation
/// (the sample of batches the pipeline is run over), not a physical constant: several times the
/// staleness of the one-step-off recipes in validation/rl.csv (k = 1), so the pipeline fills and
/// drains, and few enough to keep a placement search in milliseconds.
int pipeline_batches();

/// The smallest power-of-two TP (up to the NVLink domain) whose weights take at most half of
/// the engine's share of HBM.
int auto_generator_tp(const workload::ModelSpec& model, const hardware::ClusterSpec& cluster, core::Precision p,
                      const RlCalibration& cal);

/// Routed tokens on the busiest of `ep` expert-parallel ranks over the mean for a released router
/// with per-expert load CV `cv` (workload/expert_load.hpp; shared with serving and training).
using workload::expert_load_factor;

/// Predicts one RL step. Pure; emits phases and generator batches to `trace` when given.
RlStepResult estimate_rl_step(const RlJob& job, const training::Calibration& calibration, const RlCalibration& cal,
                              const RolloutEngine& engine, engine::TraceSink* trace = nullptr);

/// The duration of `phase` in `r`; 0 when the step has no such phase.
core::Seconds phase_time(const RlStepResult& r, Phase phase);

}  // namespace fmsim::rl
