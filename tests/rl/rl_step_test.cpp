// Composition of one RL step from its phases (src/rl/rl_step.hpp), with a stand-in rollout
// engine whose makespan is known: the longest response x 1 ms per token.
#include "rl/rl_step.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "../training/test_fixtures.hpp"
#include "serving/iteration_model.hpp"

namespace fmsim::rl {
namespace {

class TailEngine final : public RolloutEngine {
 public:
  [[nodiscard]] RolloutResult generate(const GeneratorConfig&, const RolloutRequest& req,
                                       const RlCalibration&) const override {
    RolloutResult r;
    r.feasible = true;
    const auto longest = *std::max_element(req.lengths.begin(), req.lengths.end());
    r.makespan = core::Seconds(1e-3 * static_cast<double>(longest));
    r.generated_tokens = std::accumulate(req.lengths.begin(), req.lengths.end(), 0.0);
    r.full_rate_tokens_per_s = r.generated_tokens / (0.5 * r.makespan.value());
    r.busy_fraction = 0.5;
    r.concurrency = 64;
    return r;
  }
  [[nodiscard]] std::string name() const override { return "tail"; }
};

RlJob base_job() {
  RlJob j;
  j.policy = testing::test_model();
  j.cluster = testing::test_cluster(1);
  j.stack = "test";
  j.prompts = 64;
  j.samples = 8;
  j.prompt_len = 256;
  j.lengths = LengthDistribution{LengthLaw::Lognormal, 1024.0, 0.8, 4096};
  j.generator_tp = 1;
  return j;
}

double phase(const RlStepResult& r, const std::string& name) {
  for (const auto& p : r.phases)
    if (kPhaseWords.name(p.phase) == name) return p.time.value();
  return 0.0;
}

double exposed_sum(const RlStepResult& r) {
  double s = 0.0;
  for (const auto& p : r.phases) s += p.exposed.value();
  return s;
}

// On-policy and colocated, phases run one after another: the step is the sum of all of them,
// and the rollout takes the engine's makespan (the longest response).
TEST(RlStep, ColocatedOnPolicyStepIsTheSumOfItsPhases) {
  const auto r = estimate_rl_step(base_job(), testing::test_calibration(), RlCalibration{}, TailEngine{});
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_NEAR(r.step_time.value(), exposed_sum(r), 1e-9);
  EXPECT_NEAR(phase(r, "rollout"), 4.096, 1e-9);  // 4096-token cap reached by the tail: 4096 x 1 ms
  for (const char* name :
       {"rollout", "reward", "old_log_prob", "reference", "policy_update", "weight_sync", "offload_reload"}) {
    EXPECT_GT(phase(r, name), 0.0) << name;
  }
  EXPECT_EQ(r.responses, 64 * 8);
}

// Off-policy on separate pools: generation of the next batch overlaps training of this one, so
// the step is max(generation + reward, training phases) + weight sync + overhead, plus the stall
// that batches of other lengths cause in the pipeline (pipelined_step over 8 drawn batches, k = 1).
TEST(RlStep, OffPolicyOverlapsGenerationAndTraining) {
  auto j = base_job();
  j.placement = Placement::Disaggregated;
  j.synchrony = Synchrony::OffPolicy;
  const auto r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.generator_gpus, 4);
  EXPECT_EQ(r.trainer_gpus, 4);
  const double gen = phase(r, "rollout") + phase(r, "reward");
  const double train = phase(r, "old_log_prob") + phase(r, "reference") + phase(r, "policy_update");
  EXPECT_NEAR(r.step_time.value(),
              std::max(gen, train) + phase(r, "weight_sync") + phase(r, "overhead") + phase(r, "pipeline_stall"), 1e-9);
  EXPECT_NEAR(r.step_time.value(), exposed_sum(r), 1e-9);
  EXPECT_DOUBLE_EQ(phase(r, "offload_reload"), 0.0);  // nothing to swap on separate pools
}

// A trainer that keeps its master parameters and optimizer states in host memory (verl's
// param_offload + optimizer_offload) loads and offloads them around every training phase: the
// update moves weights + optimizer states in and out, each log-prob forward (old log-probs,
// reference) the weights, all at offload_bandwidth; the colocated switch is then only the
// engine's weights (sleep and wake-up).
TEST(RlStep, TrainerOffloadMovesStatesAroundEachTrainingPhase) {
  auto j = base_job();
  j.trainer_offload = TrainerOffload::ParamsOptimizer;
  const RlCalibration cal;
  const auto r = estimate_rl_step(j, testing::test_calibration(), cal, TailEngine{});
  ASSERT_TRUE(r.feasible) << r.reason;
  const double w = r.train.memory.weights.value(), o = r.train.memory.optimizer.value();
  EXPECT_NEAR(phase(r, "trainer_offload"), 2.0 * ((w + o) + 2.0 * w) / cal.offload_bandwidth.value(), 1e-9);
  EXPECT_NEAR(phase(r, "offload_reload"), 2.0 * r.rollout.weights_per_gpu.value() / cal.offload_bandwidth.value(),
              1e-9);
  EXPECT_NEAR(r.step_time.value(), exposed_sum(r), 1e-9);
  // With gradient buffers too (Megatron grad_offload) the update moves them as well.
  j.trainer_offload = TrainerOffload::ParamsGradsOptimizer;
  const auto g = estimate_rl_step(j, testing::test_calibration(), cal, TailEngine{});
  EXPECT_NEAR(phase(g, "trainer_offload") - phase(r, "trainer_offload"),
              2.0 * g.train.memory.gradients.value() / cal.offload_bandwidth.value(), 1e-9);
}

// The engine's share of HBM given by the job (vLLM gpu_memory_utilization in the recipe) reaches
// the rollout engine instead of the placement's default.
TEST(RlStep, GeneratorMemoryShareReachesTheEngine) {
  class ShareEngine final : public RolloutEngine {
   public:
    mutable double seen = 0.0;
    [[nodiscard]] RolloutResult generate(const GeneratorConfig& g, const RolloutRequest& req,
                                         const RlCalibration& cal) const override {
      seen = cal.gpu_memory_utilization;
      return TailEngine{}.generate(g, req, cal);
    }
    [[nodiscard]] std::string name() const override { return "share"; }
  };
  auto j = base_job();
  const ShareEngine engine;
  ASSERT_TRUE(estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, engine).feasible);
  EXPECT_DOUBLE_EQ(engine.seen, RlCalibration{}.gpu_memory_utilization);
  j.generator_memory_utilization = 0.8;
  ASSERT_TRUE(estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, engine).feasible);
  EXPECT_DOUBLE_EQ(engine.seen, 0.8);
}

// A released router's uneven expert popularity: the busiest of ep ranks holding E/ep experts
// carries 1 + z_ep cv / sqrt(E/ep) times the mean routed load (z_ep: expected maximum of ep
// standard normals). Qwen3-30B-A3B's 128 experts, top 8, over EP 8 with cv 2.14: 1 + z_8 2.14 / 4.
TEST(RlStep, ExpertLoadFactorOfAReleasedRouter) {
  auto m = testing::test_model();
  EXPECT_DOUBLE_EQ(expert_load_factor(m, 8, 2.14), 1.0);  // dense
  m.moe.num_experts = 128;
  m.moe.top_k = 8;
  m.moe.expert_ffn = 768;
  ASSERT_TRUE(m.is_moe());
  EXPECT_DOUBLE_EQ(expert_load_factor(m, 1, 2.14), 1.0);  // one rank holds every expert
  EXPECT_NEAR(expert_load_factor(m, 8, 2.14), 1.0 + serving::expected_max_standard_normal(8) * 2.14 / 4.0, 1e-12);
  EXPECT_GT(expert_load_factor(m, 16, 2.14), expert_load_factor(m, 8, 2.14));  // fewer experts per rank
  // At most every token's copies on one rank: min(k, E/ep) x ep / k.
  EXPECT_LE(expert_load_factor(m, 128, 100.0), 128.0 / 8.0 + 1e-12);
}

// Equal batches: the pipeline runs at its slower side plus the sync, max(gen, train) + sync,
// whatever the staleness k.
TEST(PipelinedStep, EqualBatchesRunAtTheSlowerSide) {
  for (int k : {1, 2, 4}) {
    EXPECT_NEAR(pipelined_step(k, std::vector<double>(6, 10.0), std::vector<double>(6, 4.0), 1.0).value(), 11.0, 1e-12);
    EXPECT_NEAR(pipelined_step(k, std::vector<double>(6, 4.0), std::vector<double>(6, 10.0), 1.0).value(), 11.0, 1e-12);
  }
}

// Uneven batches (generation 10, 2, 10, 2, ... s; training 6 s; no sync): both sides average 6 s.
// At k = 1 a long batch cannot start before the previous version is trained, so the trainer waits
// and completes at 16, 22, 32, 38, 48, 54, 64, 70 s: from the second batch on, (70 - 22) / 6 = 8 s
// per step. At k = 3 the generators run ahead and the trainer never waits: 6 s per step.
TEST(PipelinedStep, LargerStalenessAbsorbsUnevenBatches) {
  const std::vector<double> gen{10, 2, 10, 2, 10, 2, 10, 2};
  const std::vector<double> train(8, 6.0);
  EXPECT_NEAR(pipelined_step(1, gen, train, 0.0).value(), 8.0, 1e-12);
  EXPECT_NEAR(pipelined_step(3, gen, train, 0.0).value(), 6.0, 1e-12);
}

// Algorithms differ in their forwards: DAPO drops the KL reference, PPO adds a critic (values
// forward and its own update), engine log-probs remove the old-log-prob forward.
TEST(RlStep, AlgorithmsAddAndDropForwards) {
  auto j = base_job();
  j.algorithm = Algorithm::Dapo;
  auto r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  EXPECT_DOUBLE_EQ(phase(r, "reference"), 0.0);
  j.algorithm = Algorithm::Ppo;
  r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  EXPECT_NEAR(phase(r, "critic_update"), phase(r, "policy_update"), 1e-9);  // same architecture
  EXPECT_GT(phase(r, "critic_values"), 0.0);
  j.rollout_logprobs = true;
  r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  EXPECT_DOUBLE_EQ(phase(r, "old_log_prob"), 0.0);
}

// Dynamic sampling generates oversample x the responses it keeps and trains only the kept ones.
TEST(RlStep, DynamicSamplingGeneratesMoreTrainsTheSame) {
  auto j = base_job();
  const auto plain = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  j.oversample = 2.0;
  const auto over = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  EXPECT_EQ(over.responses, 2 * plain.responses);
  EXPECT_DOUBLE_EQ(over.trained_tokens, plain.trained_tokens);
  EXPECT_NEAR(over.generated_tokens, 2.0 * plain.generated_tokens, 0.01 * plain.generated_tokens);
}

// k-step off-policy with refilled slots (NeMo-RL in-flight weight updates): no batch drains to its
// longest response, so a batch takes its tokens at the pool's streaming rate. The stand-in engine
// streams at tokens / (0.5 x makespan): the refilled rollout is half the drained one (the drawn
// batches' tokens and longest responses scale the two alike, within a few percent).
TEST(RlStep, RefilledSlotsMakeOffPolicyGenerationThroughputBound) {
  auto j = base_job();
  j.placement = Placement::Disaggregated;
  j.synchrony = Synchrony::OffPolicy;
  const auto drained = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  j.refill = true;
  const auto refilled = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  ASSERT_TRUE(drained.feasible && refilled.feasible);
  EXPECT_NEAR(phase(refilled, "rollout") / phase(drained, "rollout"), 0.5, 0.05);
  EXPECT_NEAR(refilled.step_time.value(), exposed_sum(refilled), 1e-9);
}

// Fully async: the run-ahead (staleness_fraction x the window) refills the slots a window's tail
// drains. The stand-in pool holds 4 replicas x 64 = 256 sequences and a window is 512 responses:
// at staleness 0 the whole tail is exposed (generation = the makespan, 4.096 s), from 0.5 on
// (256 run-ahead samples fill every slot) none of it (generation = the streaming time, half of
// it), and 0.25 hides half of the tail. Exposed at staleness 0, the trainer's last mini-batch
// also waits for the window's last sample: step = max(gen + train / mini-batches, train) + sync +
// overhead, and the trainer's wait is what that adds to its training.
TEST(RlStep, FullyAsyncStalenessHidesTheTail) {
  auto j = base_job();
  j.placement = Placement::Disaggregated;
  j.synchrony = Synchrony::FullyAsync;
  j.mini_batches = 4;
  auto gen_at = [&](double s) {
    j.staleness_fraction = s;
    const auto r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
    EXPECT_TRUE(r.feasible) << r.reason;
    EXPECT_NEAR(r.step_time.value(), exposed_sum(r), 1e-9);
    return r;
  };
  const auto none = gen_at(0.0), half = gen_at(0.25), full = gen_at(0.5), more = gen_at(2.0);
  EXPECT_NEAR(phase(none, "rollout"), 4.096, 1e-9);
  EXPECT_NEAR(phase(full, "rollout"), 0.5 * 4.096, 1e-9);
  EXPECT_NEAR(phase(more, "rollout"), 0.5 * 4.096, 1e-9);
  EXPECT_NEAR(phase(half, "rollout"), 0.75 * 4.096, 1e-9);
  const double train = phase(none, "old_log_prob") + phase(none, "reference") + phase(none, "policy_update");
  const double gen = phase(none, "rollout") + phase(none, "reward");
  const double window = std::max(gen + train / 4.0, train);
  EXPECT_NEAR(none.step_time.value(), window + phase(none, "weight_sync") + phase(none, "overhead"), 1e-9);
  EXPECT_NEAR(none.trainer_wait.value(), window - train, 1e-9);
  EXPECT_LE(full.step_time.value(), none.step_time.value());
}

// Time-sharing GPUs cannot run generation and training at once: asking for it is an error.
TEST(RlStep, ColocatedOffPolicyIsRefused) {
  auto j = base_job();
  j.synchrony = Synchrony::OffPolicy;
  const auto r = estimate_rl_step(j, testing::test_calibration(), RlCalibration{}, TailEngine{});
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("disaggregated"), std::string::npos);
}

}  // namespace
}  // namespace fmsim::rl
