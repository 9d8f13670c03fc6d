// The training-step model: schedule formulas, exposure rules, verdicts and determinism.
#include "training/step_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_fixtures.hpp"
#include "workload/model_flops.hpp"

namespace fmsim::training {
namespace {

using testing::fixed_network;
using testing::free_network;
using testing::test_calibration;
using testing::test_job;

// A copy of the test stack, named `name`, that runs attention kernel `kernel`.
void add_stack_with_kernel(Calibration& cal, const std::string& name, AttentionKernel kernel) {
  StackCalibration s = cal.stacks["test"];
  s.name = name;
  s.attention_kernel = kernel;
  cal.stacks[name] = s;
}

parallelism::Layout layout(int tp, int pp, int vp, int mbs, std::int64_t gbs) {
  parallelism::Layout l;
  l.tp = tp;
  l.pp = pp;
  l.vp = vp;
  l.micro_batch = mbs;
  l.global_batch = gbs;
  l.recompute = parallelism::Recompute::None;
  return l;
}

// A step past 10^9 s (31.7 years) is not played on the event engine, whose integer clock holds
// 2^63 ns (292 years): the test model on a GPU of 100 kFLOP/s and 100 B/s of HBM takes a closed-form
// step of over 10^9 s, which simulate_step returns as the closed form's (no tasks played) instead
// of overflowing the clock. (A config.json with hidden_size 10^9 did the same through the CLI.)
TEST(StepModel, StepPastTheEngineClockKeepsTheClosedForm) {
  const auto cal = test_calibration();
  auto job = test_job(1, layout(1, 2, 1, 1, 8));
  job.cluster.gpu.bf16 = core::FlopsPerSecond(1e5);
  job.cluster.gpu.fp8 = core::FlopsPerSecond(1e5);
  job.cluster.gpu.hbm_bandwidth = core::BytesPerSecond(100);
  const auto analytic = estimate_step(job, cal, free_network());
  const auto simulated = simulate_step(job, cal, free_network());
  ASSERT_TRUE(analytic.feasible) << analytic.reason;
  EXPECT_GT(analytic.step_time.value(), 1e9);
  EXPECT_EQ(simulated.simulated_tasks, 0u);
  EXPECT_DOUBLE_EQ(simulated.step_time.value(), analytic.step_time.value());
}

// Without pipelining and with a free network, the step is m micro-batches of (F + B) plus the
// optimizer: doubling the global batch (m) doubles the compute part exactly.
TEST(StepModel, ComputeScalesWithMicroBatches) {
  const auto cal = test_calibration();
  const auto a = estimate_step(test_job(1, layout(1, 1, 1, 1, 8)), cal, free_network());
  const auto b = estimate_step(test_job(1, layout(1, 1, 1, 1, 16)), cal, free_network());
  ASSERT_TRUE(a.feasible) << a.reason;
  EXPECT_EQ(a.micro_batches, 1);
  EXPECT_EQ(b.micro_batches, 2);
  EXPECT_NEAR(b.breakdown.compute.value(), 2.0 * a.breakdown.compute.value(), 1e-12);
}

// Forward GEMM time = FLOPs / (peak x efficiency); a dense layer's GEMMs dominate, so the compute

// Activation offload time, per micro-batch: the offloaded share x of the layers copies B bytes to
// the host during its forward (x F) and back during its backward (x B); exposed = max(0, B/bw -
// xF) + max(0, B/bw - xB). At 1 GB/s the copies exceed the compute: the breakdown shows the
// difference; at 10 TB/s they hide entirely. Activations on the GPU shrink either way.
TEST(StepModel, ActivationOffloadTimeIsTheCopyBeyondTheOverlappedCompute) {
  const auto cal = test_calibration();
  auto job = test_job(1, layout(1, 1, 1, 1, 8));
  job.layout.offload_layers = 8;  // of 16
  job.cluster.gpu.host_link_bandwidth = core::BytesPerSecond(1e9);
  const auto slow = estimate_step(job, cal, free_network());
  ASSERT_TRUE(slow.feasible) << slow.reason;
  const auto& m = slow.memory;
  ASSERT_GT(m.offload_bytes_per_mb, 0.0);
  EXPECT_DOUBLE_EQ(m.offload_share, 0.5);
  const double copy = m.offload_bytes_per_mb / 1e9;
  // compute = fwd + bwd + recompute per micro-batch (1 micro-batch); backward ~ 2 x forward.
  EXPECT_GT(slow.breakdown.offload.value(), 2.0 * copy - m.offload_share * slow.breakdown.compute.value() - 1e-9);
  EXPECT_LE(slow.breakdown.offload.value(), 2.0 * copy);
  job.cluster.gpu.host_link_bandwidth = core::BytesPerSecond(1e13);
  const auto fast = estimate_step(job, cal, free_network());
  EXPECT_DOUBLE_EQ(fast.breakdown.offload.value(), 0.0);
  EXPECT_NEAR(slow.step_time.value() - fast.step_time.value(), slow.breakdown.offload.value(), 1e-9);
}

// per micro-batch is at least 3 x 2 x tokens x weights / (peak x 0.5) (forward + 2x backward).
TEST(StepModel, ComputeIsAtLeastTheGemmRoofline) {
  const auto cal = test_calibration();
  const auto job = test_job(1, layout(1, 1, 1, 1, 8));
  const auto r = estimate_step(job, cal, free_network());
  const auto& m = job.model;
  const double tokens = 4096.0;
  const double layer_weights = static_cast<double>(m.hidden) * (m.num_heads + 2 * m.num_kv_heads) * m.head_dim +
                               static_cast<double>(m.num_heads) * m.head_dim * m.hidden +
                               3.0 * static_cast<double>(m.hidden) * m.ffn_hidden;
  const double gemm = 3.0 * 2.0 * tokens * layer_weights * m.num_layers / (1000e12 * 0.5);
  EXPECT_GT(r.breakdown.compute.value(), gemm);
  EXPECT_LT(r.breakdown.compute.value(), 1.6 * gemm);  // attention, head and elementwise are the rest
}

// 1F1B bubble (Narayanan et al. 2021): (pp - 1) / vp x (F + B) of one micro-batch. The
// discrete-event schedule must reproduce the closed form for uniform stages.
TEST(StepModel, PipelineBubbleMatchesClosedForm) {
  const auto cal = test_calibration();
  for (int vp : {1, 2}) {
    auto job = test_job(1, layout(1, 4, vp, 1, 16));  // pp 4, dp 2, m = 8
    const auto analytic = estimate_step(job, cal, free_network());
    const auto simulated = simulate_step(job, cal, free_network());
    ASSERT_TRUE(analytic.feasible) << analytic.reason;
    EXPECT_GT(simulated.simulated_tasks, 0u);
    const double rel = std::fabs(simulated.step_time.value() - analytic.step_time.value()) / analytic.step_time.value();
    EXPECT_LT(rel, 0.08) << "vp=" << vp << " analytic " << analytic.step_time.value() << " simulated "
                         << simulated.step_time.value();
    EXPECT_GT(analytic.breakdown.bubble.value(), 0.0);
  }
}

// The planner's inner loop (estimate_step_time, given job_memory) is estimate_step without the
// second memory estimate and the FLOP metrics: the same step time, breakdown and memory, bit for bit.
TEST(StepModel, StepTimeWithKnownMemoryEqualsTheFullEstimate) {
  const auto cal = test_calibration();
  for (const auto& l : {layout(1, 1, 1, 1, 8), layout(2, 4, 2, 1, 16), layout(1, 4, 1, 2, 32)}) {
    const auto job = test_job(1, l);
    const auto full = estimate_step(job, cal, fixed_network(1e-3));
    const auto lean = estimate_step_time(job, cal, fixed_network(1e-3), job_memory(job));
    ASSERT_TRUE(full.feasible) << full.reason;
    EXPECT_EQ(lean.step_time.value(), full.step_time.value());
    EXPECT_EQ(lean.breakdown.bubble.value(), full.breakdown.bubble.value());
    EXPECT_EQ(lean.memory.total().value(), full.memory.total().value());
    EXPECT_EQ(lean.fits_memory, full.fits_memory);
    EXPECT_EQ(lean.mfu, 0.0);  // not computed on this path
  }
}

// A model of one layer kind (ModelSpec::uniform_layers) is costed as one layer times a layer count:
// per stage on the closed-form path, per chunk on the simulated one. The same model written layer by
// layer (an explicit attention + MLP pattern, which takes the per-layer path) gives the same step
// time and memory, to rounding, and so does the simulated path's compute.
TEST(StepModel, OneKindModelCostsOneLayerTimesTheCount) {
  const auto cal = test_calibration();
  for (const auto& l : {layout(1, 1, 1, 1, 8), layout(2, 4, 2, 1, 16), layout(1, 2, 1, 2, 32)}) {
    auto job = test_job(1, l);
    ASSERT_TRUE(job.model.uniform_layers());
    auto per_layer = job;
    per_layer.model.layers.assign(static_cast<std::size_t>(job.model.num_layers),
                                  workload::LayerSpec{workload::MixerKind::Attention, workload::FfnKind::Dense});
    ASSERT_FALSE(per_layer.model.uniform_layers());
    const auto a = estimate_step(job, cal, fixed_network(1e-3));
    const auto b = estimate_step(per_layer, cal, fixed_network(1e-3));
    ASSERT_TRUE(a.feasible) << a.reason;
    EXPECT_NEAR(a.step_time.value(), b.step_time.value(), 1e-9 * b.step_time.value());
    EXPECT_NEAR(a.memory.total().value(), b.memory.total().value(), 1e-9 * b.memory.total().value());
    EXPECT_NEAR(a.memory.activations.value(), b.memory.activations.value(), 1.0);
    const auto c = simulate_step(job, cal, fixed_network(1e-3));
    EXPECT_NEAR(a.breakdown.compute.value(), c.breakdown.compute.value(), 1e-9 * a.breakdown.compute.value());
  }
}

// Tied embeddings under pipeline parallelism: the last stage keeps its own copy of the word
// embeddings (vocab x h / tp more parameters there, so as many as untied), and the first and last
// stages all-reduce the embeddings' gradients once per step, exposed: with every collective at 1 ms
// and no DP overlap, exactly one more millisecond of DP time. With pp 1 nothing is added.
TEST(StepModel, TiedEmbeddingsSyncTheirGradientsAcrossThePipeline) {
  const auto cal = test_calibration();
  auto l = layout(1, 2, 1, 1, 16);
  l.overlap_dp_comm = false;
  auto untied = test_job(1, l);
  auto tied = untied;
  tied.model.tied_embeddings = true;
  const auto a = estimate_step(untied, cal, fixed_network(1e-3));
  const auto b = estimate_step(tied, cal, fixed_network(1e-3));
  ASSERT_TRUE(b.feasible) << b.reason;
  EXPECT_NEAR(b.breakdown.dp_comm.value() - a.breakdown.dp_comm.value(), 1e-3, 1e-12);
  EXPECT_NEAR(b.memory.params_on_gpu, a.memory.params_on_gpu, 1.0);
  auto one = layout(1, 1, 1, 1, 16);
  one.overlap_dp_comm = false;
  auto untied1 = test_job(1, one);
  auto tied1 = untied1;
  tied1.model.tied_embeddings = true;
  EXPECT_EQ(estimate_step(tied1, cal, fixed_network(1e-3)).breakdown.dp_comm.value(),
            estimate_step(untied1, cal, fixed_network(1e-3)).breakdown.dp_comm.value());
}

// Interleaving (vp > 1) divides the bubble by vp.
TEST(StepModel, InterleavingShrinksTheBubble) {
  const auto cal = test_calibration();
  const auto plain = estimate_step(test_job(1, layout(1, 4, 1, 1, 16)), cal, free_network());
  const auto inter = estimate_step(test_job(1, layout(1, 4, 2, 1, 16)), cal, free_network());
  EXPECT_NEAR(inter.breakdown.bubble.value(), plain.breakdown.bubble.value() / 2.0,
              0.05 * plain.breakdown.bubble.value());
}

// Megatron-Core's overlap_grad_reduce with the interleaved schedule: chunk c's gradients are final
// after its last backward, and the schedule still runs c x pp chunk passes after it (chunks are swept
// in groups of pp micro-batches), so with a reduction t much longer than the compute the hidden part
// is o x B x (1 + (vp - 1) pp) / vp against o x B without interleaving (B: one micro-batch's
// backward of the stage, o: the stack's dp_overlap). pp 4, vp 2: 2.5 times as much hidden.
TEST(StepModel, InterleavingHidesMoreOfTheGradientReduction) {
  const auto cal = test_calibration();
  auto hidden = [&](int vp) {
    auto l = layout(1, 4, vp, 1, 64);
    l.sharding = parallelism::Sharding::None;
    const auto overlapped = estimate_step(test_job(8, l), cal, fixed_network(10.0));
    l.overlap_dp_comm = false;
    const auto exposed = estimate_step(test_job(8, l), cal, fixed_network(10.0));
    EXPECT_TRUE(overlapped.feasible) << overlapped.reason;
    return exposed.breakdown.dp_comm.value() - overlapped.breakdown.dp_comm.value();
  };
  const double plain = hidden(1);
  ASSERT_GT(plain, 0.0);
  EXPECT_NEAR(hidden(2), 2.5 * plain, 1e-6 * plain);
}

// TP communication is on the critical path unless overlapped: with a 1 ms collective, tp 2 and
// SP, each layer has 2 all-gathers + 2 reduce-scatters forward and the same backward.
TEST(StepModel, TensorParallelCommIsExposedWithoutOverlap) {
  const auto cal = test_calibration();
  auto l = layout(2, 1, 1, 1, 4);
  l.sequence_parallel = true;
  l.sharding = parallelism::Sharding::None;
  l.overlap_dp_comm = false;
  const auto r = estimate_step(test_job(1, l), cal, fixed_network(1e-3));
  EXPECT_NEAR(r.breakdown.tp_comm.value(), 16 * 8 * 1e-3, 1e-9);  // 16 layers x 8 collectives
}

// A group of one rank never communicates: with dp = 1 and tp = pp = 1 nothing is exposed.
TEST(StepModel, SingleGpuHasNoCommunication) {
  const auto cal = test_calibration();
  auto job = test_job(1, layout(1, 1, 1, 1, 1));
  job.gpus = 1;
  job.layout = parallelism::with_dp(job.layout, 1);
  const auto r = estimate_step(job, cal, fixed_network(1.0));
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_EQ(r.breakdown.tp_comm.value() + r.breakdown.dp_comm.value() + r.breakdown.pp_comm.value(), 0.0);
}

// Invalid layouts are values with a reason, not exceptions.
TEST(StepModel, InvalidLayoutIsReported) {
  const auto r = estimate_step(test_job(3, layout(3, 1, 1, 1, 8)), test_calibration(), free_network());
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("attention heads"), std::string::npos) << r.reason;
}

// tokens/s/GPU = global batch x seq / (step time x GPUs); MFU = model FLOPs / (time x GPUs x peak).
TEST(StepModel, ThroughputAndMfuDefinitions) {
  const auto job = test_job(1, layout(1, 1, 1, 1, 8));
  const auto r = estimate_step(job, test_calibration(), free_network());
  EXPECT_NEAR(r.tokens_per_s_per_gpu, 8.0 * 4096 / (r.step_time.value() * 8), 1e-9);
  EXPECT_NEAR(r.mfu, r.model_flops_per_step / (r.step_time.value() * 8 * 1000e12), 1e-12);
  EXPECT_GT(r.mfu, 0.0);
  EXPECT_LT(r.mfu, 0.5);  // cannot beat the 0.5 GEMM efficiency of the test calibration
}

// A model that cannot fit is still simulated, with an out-of-memory verdict.
TEST(StepModel, OutOfMemoryVerdict) {
  auto job = test_job(1, layout(1, 1, 1, 8, 64));
  job.cluster.gpu.hbm_usable = core::gib(8);
  const auto r = estimate_step(job, test_calibration(), free_network());
  EXPECT_TRUE(r.feasible);
  EXPECT_FALSE(r.fits_memory);
  EXPECT_GT(r.memory.total(), r.memory_capacity);
}

// A power cap lowers the sustained clock as P^(1/3): 500 W of 700 W -> compute x (7/5)^(1/3).
TEST(StepModel, PowerCapSlowsCompute) {
  const auto cal = test_calibration();
  auto job = test_job(1, layout(1, 1, 1, 1, 8));
  const auto full = estimate_step(job, cal, free_network());
  job.cluster.gpu.power_limit = core::watts(500);
  const auto capped = estimate_step(job, cal, free_network());
  EXPECT_GT(capped.breakdown.compute.value(), full.breakdown.compute.value() * 1.05);
  EXPECT_LT(capped.breakdown.compute.value(), full.breakdown.compute.value() * std::cbrt(7.0 / 5.0) + 1e-9);
}

// A stack running FlashAttention-2 takes the architecture's FA2 efficiencies instead of the
// reference kernel's: with FA2 at half the reference efficiency, each layer's attention costs
// (1 + 2.5) x F / (peak x eff) twice over, F = the layer's causal q.k^T and scores.v FLOPs
// (backward = 2.5 x forward: FlashAttention recomputes the scores). Everything else is unchanged.
TEST(StepModel, FlashAttention2StackUsesItsOwnEfficiency) {
  auto cal = test_calibration();
  add_stack_with_kernel(cal, "test-fa2", AttentionKernel::FlashAttention2);
  cal.gpus[hardware::Architecture::Hopper].flash2_fwd_efficiency = 0.25;
  cal.gpus[hardware::Architecture::Hopper].flash2_bwd_efficiency = 0.25;
  auto job = test_job(1, layout(1, 1, 1, 1, 8), 8192);
  const auto ref = estimate_step(job, cal, free_network());
  job.stack = "test-fa2";
  const auto slow = estimate_step(job, cal, free_network());
  ASSERT_TRUE(ref.feasible && slow.feasible);
  const auto& m = job.model;
  double extra = 0.0;
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const double f =
        workload::layer_forward_flops(m, layer, job.seq_len, workload::AttentionMask::Causal).attention_core.value();
    extra += 3.5 * f / (job.cluster.gpu.bf16.value() * 0.25) - 3.5 * f / (job.cluster.gpu.bf16.value() * 0.5);
  }
  EXPECT_NEAR(slow.breakdown.compute.value() - ref.breakdown.compute.value(), extra, 1e-9 * extra);
  // Without FA2 figures (Ampere, where FA2 is the reference kernel) the stack runs the reference.
  EXPECT_EQ(attention_efficiency(GpuCalibration{}, AttentionKernel::FlashAttention2),
            attention_efficiency(GpuCalibration{}, AttentionKernel::Reference));
}

// Megatron-LM's attention before FlashAttention (AttentionKernel::Unfused): QK^T and PV as batched
// GEMMs over all s x s scores (the causal mask skips nothing), each the slower of its FLOPs at the
// GEMM rate and its HBM traffic (Q, K and the 16-bit scores; the probabilities, V and the output),
// plus the fused softmax and dropout passes over the scores, 9 bytes per score forward and 11
// backward; backward GEMMs cost twice the forward's. At 8k tokens the 128-deep QK^T is bound by
// writing its scores, and the whole core costs far more than the fused kernel's (1 + 2.5) F.
TEST(StepModel, UnfusedAttentionCostsTheWholeScoreMatrix) {
  auto cal = test_calibration();
  add_stack_with_kernel(cal, "test-unfused", AttentionKernel::Unfused);
  auto job = test_job(1, layout(1, 1, 1, 1, 8), 8192);
  const auto ref = estimate_step(job, cal, free_network());
  job.stack = "test-unfused";
  const auto legacy = estimate_step(job, cal, free_network());
  ASSERT_TRUE(ref.feasible && legacy.feasible);
  const double peak = job.cluster.gpu.bf16.value() * 0.5, bw = job.cluster.gpu.hbm_bandwidth.value();
  const double s = 8192.0, d = 128.0, heads = job.model.num_heads;
  auto gemm = [&](double m, double n, double k) {
    return std::max(2.0 * heads * m * n * k / peak, heads * (m * k + k * n + m * n) * 2.0 / bw);
  };
  const double scores = heads * s * s;
  const double gemms = gemm(s, s, d) + gemm(s, d, s);
  EXPECT_GT(heads * s * s * 2.0 / bw, 2.0 * heads * s * s * d / peak);  // QK^T: the score writes bind
  const double core = (gemms + 9.0 * scores / bw) + (2.0 * gemms + 11.0 * scores / bw);
  double extra = 0.0;
  for (int layer = 0; layer < job.model.num_layers; ++layer) {
    const double f = workload::layer_forward_flops(job.model, layer, job.seq_len, workload::AttentionMask::Causal)
                         .attention_core.value();
    extra += core - 3.5 * f / peak;
  }
  EXPECT_NEAR(legacy.breakdown.compute.value() - ref.breakdown.compute.value(), extra, 1e-9 * extra);
  EXPECT_GT(legacy.breakdown.compute.value(), 1.5 * ref.breakdown.compute.value());
}

// Attention at head dimension d < 128 runs at [d/(d+c)] / [128/(128+c)] of the calibrated rate.
// FlashAttention-3 on H100 (arXiv:2407.08608 Fig. 5, 16k tokens) reaches 497 TFLOP/s at d = 64
// against 648 at d = 128: 0.767, which c = 56 reproduces; FlashAttention-2 reaches 324 against 370
// (0.876), c = 21. Wider heads keep 1; c = 0 turns the law off; the FA2 stack takes the FA2 value.
TEST(StepModel, AttentionSlowsForNarrowHeads) {
  GpuCalibration g;
  g.attention_head_dim_half = 56.0;
  g.flash2_head_dim_half = 21.0;
  g.flash2_fwd_efficiency = 0.2;
  g.flash2_bwd_efficiency = 0.15;
  EXPECT_NEAR(attention_head_dim_factor(g, AttentionKernel::Reference, 64.0), 497.0 / 648.0, 0.005);
  EXPECT_NEAR(attention_head_dim_factor(g, AttentionKernel::FlashAttention2, 64.0), 324.0 / 370.0, 0.005);
  EXPECT_EQ(attention_head_dim_factor(g, AttentionKernel::Reference, 128.0), 1.0);
  EXPECT_EQ(attention_head_dim_factor(g, AttentionKernel::Reference, 256.0), 1.0);
  EXPECT_EQ(attention_head_dim_factor(GpuCalibration{}, AttentionKernel::Reference, 64.0), 1.0);

  // In a step with 64-wide heads, each layer's attention, (1 + 2.5) x F / (peak x 0.5) at c = 0
  // (F = causal q.k^T and scores.v FLOPs), costs 1 / 0.767 as much at c = 56; nothing else changes.
  auto cal = test_calibration();
  auto job = test_job(1, layout(1, 1, 1, 1, 8), 8192);
  job.model.head_dim = 64;
  job.model.num_heads = 64;
  job.model.num_kv_heads = 16;
  const auto flat = estimate_step(job, cal, free_network());
  cal.gpus[hardware::Architecture::Hopper].attention_head_dim_half = 56.0;
  const auto narrow = estimate_step(job, cal, free_network());
  ASSERT_TRUE(flat.feasible && narrow.feasible);
  const double factor =
      attention_head_dim_factor(cal.gpus[hardware::Architecture::Hopper], AttentionKernel::Reference, 64.0);
  double extra = 0.0;
  for (int layer = 0; layer < job.model.num_layers; ++layer) {
    const double f = workload::layer_forward_flops(job.model, layer, job.seq_len, workload::AttentionMask::Causal)
                         .attention_core.value();
    extra += 3.5 * f / (job.cluster.gpu.bf16.value() * 0.5) * (1.0 / factor - 1.0);
  }
  EXPECT_NEAR(narrow.breakdown.compute.value() - flat.breakdown.compute.value(), extra, 1e-9 * extra);
}

// A row- or block-scaled FP8 recipe runs its GEMMs (and their quantisation) at factor x the
// per-tensor rate: FP8 time = FLOPs / (peak x gemm_efficiency_fp8 x factor x shape terms). So a
// rowwise step at factor f costs exactly what a tensorwise step costs with gemm_efficiency_fp8 x f,
// the 16-bit output head included in both; BF16 steps ignore the recipe.
TEST(StepModel, Fp8RecipeFactorScalesTheFp8GemmRate) {
  auto cal = test_calibration();
  auto& g = cal.gpus[hardware::Architecture::Hopper];
  g.fp8_rowwise_factor = 0.6;
  g.fp8_block_factor = 0.8;
  auto l = layout(1, 1, 1, 1, 8);
  l.precision = core::Precision::FP8;
  const auto tensorwise = estimate_step(test_job(1, l), cal, free_network());
  l.fp8_recipe = core::Fp8Recipe::Rowwise;
  const auto rowwise = estimate_step(test_job(1, l), cal, free_network());
  l.fp8_recipe = core::Fp8Recipe::Block;
  const auto block = estimate_step(test_job(1, l), cal, free_network());
  ASSERT_TRUE(tensorwise.feasible && rowwise.feasible && block.feasible);
  EXPECT_GT(rowwise.breakdown.compute.value(), block.breakdown.compute.value());
  EXPECT_GT(block.breakdown.compute.value(), tensorwise.breakdown.compute.value());

  auto slower = cal;
  slower.gpus[hardware::Architecture::Hopper].gemm_efficiency_fp8 *= 0.6;
  l.fp8_recipe = core::Fp8Recipe::Tensorwise;
  const auto same = estimate_step(test_job(1, l), slower, free_network());
  EXPECT_NEAR(rowwise.breakdown.compute.value(), same.breakdown.compute.value(), 1e-12);

  l.precision = core::Precision::BF16;
  const auto bf16 = estimate_step(test_job(1, l), cal, free_network());
  l.fp8_recipe = core::Fp8Recipe::Rowwise;
  EXPECT_EQ(estimate_step(test_job(1, l), cal, free_network()).step_time.value(), bf16.step_time.value());
}

// A deduplicating dispatcher sends each token once per remote NVLink domain: with all-to-all
// time proportional to bytes, an EP group of 16 over two 8-GPU nodes costs dedup_ratio(E, k, 2)
// of the plain all-to-all; inside one node both cost the same.
TEST(StepModel, DeduplicatedDispatchScalesCrossNodeAllToAll) {
  auto cal = test_calibration();
  auto dedup = cal.stacks["test"];
  dedup.name = "test-dedup";
  dedup.moe_dispatcher = MoeDispatcher::Deduplicated;
  cal.stacks["test-dedup"] = dedup;
  const collectives::CommCostFn per_byte = [](collectives::Op op, collectives::CommGroup g, core::Bytes b) {
    return core::Seconds(op == collectives::Op::AllToAll && g.size > 1 ? b.value() * 1e-9 : 0.0);
  };
  auto ep_time = [&](int nodes, int ep, const std::string& stack) {
    auto l = layout(1, 1, 1, 1, 8 * nodes);
    l.ep = ep;
    auto job = test_job(nodes, l);
    job.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
    job.stack = stack;
    const auto r = estimate_step(job, cal, per_byte);
    EXPECT_TRUE(r.feasible) << r.reason;
    return r.breakdown.ep_comm.value();
  };
  const double plain = ep_time(2, 16, "test"), dd = ep_time(2, 16, "test-dedup");
  ASSERT_GT(plain, 0.0);
  EXPECT_NEAR(dd / plain, dedup_ratio(128, 8, 2), 1e-9);
  EXPECT_NEAR(ep_time(1, 8, "test-dedup"), ep_time(1, 8, "test"), 1e-12);
}

// MoE all-to-all overlapped with another micro-batch (RecipeSwitches::overlap_ep_comm): a layer's
// dispatch and combine (fwd + bwd, t) hide behind up to its own kernels (F + B); exposed =
// max(0, t - (F + B)) + min(t, F + B) x ep_overlap_cost. With a slow network (1 ns per byte) most
// of it stays exposed, with a fast one (1 ps per byte) only the cost share of it.
TEST(StepModel, OverlappedAllToAllHidesBehindTheLayersKernels) {
  auto cal = test_calibration();
  cal.stacks["test"].ep_overlap_cost = 0.15;
  auto per_byte = [](double s_per_byte) {
    return collectives::CommCostFn([s_per_byte](collectives::Op op, collectives::CommGroup g, core::Bytes b) {
      return core::Seconds(op == collectives::Op::AllToAll && g.size > 1 ? b.value() * s_per_byte : 0.0);
    });
  };
  auto l = layout(1, 1, 1, 1, 8);
  l.ep = 8;
  auto job = test_job(1, l);
  job.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
  for (const double s_per_byte : {1e-9, 1e-12}) {
    job.layout.recipe.overlap_ep_comm = false;
    const auto plain = estimate_step(job, cal, per_byte(s_per_byte));
    job.layout.recipe.overlap_ep_comm = true;
    const auto hidden = estimate_step(job, cal, per_byte(s_per_byte));
    ASSERT_TRUE(plain.feasible && hidden.feasible) << plain.reason << hidden.reason;
    const double t = plain.breakdown.ep_comm.value();
    const double kernels = plain.breakdown.compute.value();  // all layers' F + B (one micro-batch, one stage)
    ASSERT_GT(t, 0.0);
    // Every layer is alike here, so the per-layer rule holds for the sums too.
    const double expected = std::max(0.0, t - kernels) + std::min(t, kernels) * 0.15;
    EXPECT_NEAR(hidden.breakdown.ep_comm.value(), expected, 0.02 * t) << s_per_byte;
    EXPECT_EQ(hidden.breakdown.compute.value(), plain.breakdown.compute.value());
  }
}

// A full-iteration CUDA graph (RecipeSwitches::full_iteration_graph) removes the host's per-layer costs:
// with layer_overhead 100 us and moe_layer_overhead 1 ms over L MoE layers and one micro-batch,
// the compute falls by exactly L x 1.1 ms.
TEST(StepModel, FullIterationGraphRemovesPerLayerHostOverheads) {
  auto cal = test_calibration();
  cal.stacks["test"].layer_overhead_us = 100.0;
  cal.stacks["test"].moe_layer_overhead_us = 1000.0;
  auto l = layout(1, 1, 1, 1, 8);
  l.ep = 8;
  auto job = test_job(1, l);
  job.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
  const auto eager = estimate_step(job, cal, free_network());
  job.layout.recipe.full_iteration_graph = true;
  const auto graphed = estimate_step(job, cal, free_network());
  ASSERT_TRUE(eager.feasible && graphed.feasible) << eager.reason << graphed.reason;
  EXPECT_NEAR(eager.breakdown.compute.value() - graphed.breakdown.compute.value(), job.model.num_layers * 1.1e-3, 1e-9);
}

// FP8 attention (RecipeSwitches::fp8_attention) runs attention at fp8_attention_factor x (FP8 peak / BF16
// peak) of its BF16 rate, only with an FP8 recipe; a fused grouped MLP drops the expert
// activation pass and the expert GEMMs' FP8 casts, so both only make the step shorter.
TEST(StepModel, Fp8AttentionAndFusedGroupedMlpShortenTheKernels) {
  auto cal = test_calibration();
  cal.gpus[hardware::Architecture::Hopper].fp8_attention_factor = 0.8;
  auto l = layout(1, 1, 1, 1, 8);
  l.precision = core::Precision::FP8;
  auto job = test_job(1, l, /*seq=*/16384);
  const auto base = estimate_step(job, cal, free_network());
  job.layout.recipe.fp8_attention = true;
  const auto fp8 = estimate_step(job, cal, free_network());
  ASSERT_TRUE(base.feasible && fp8.feasible) << base.reason << fp8.reason;
  // Causal attention FLOPs per layer: 4 s^2 h / 2 forward, 2.5 x that backward (kAttentionBackwardFlopRatio).
  const auto& m = job.model;
  const double s = 16384.0, h = m.hidden;
  const double attn_flops = m.num_layers * (1.0 + 2.5) * 4.0 * s * s * h / 2.0;
  const double bf16_attn = attn_flops / (job.cluster.gpu.bf16.value() * 0.5);
  const double gain = 0.8 * job.cluster.gpu.fp8.value() / job.cluster.gpu.bf16.value();
  EXPECT_NEAR(base.breakdown.compute.value() - fp8.breakdown.compute.value(), bf16_attn * (1.0 - 1.0 / gain),
              0.05 * bf16_attn);
  job.layout.precision = core::Precision::BF16;  // BF16 recipe: no FP8 attention
  job.layout.recipe.fp8_attention = false;
  const auto bf = estimate_step(job, cal, free_network());
  job.layout.recipe.fp8_attention = true;
  EXPECT_EQ(estimate_step(job, cal, free_network()).step_time.value(), bf.step_time.value());

  auto moe = test_job(1, l);
  moe.layout.ep = 8;
  moe.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
  const auto unfused = estimate_step(moe, cal, free_network());
  moe.layout.recipe.fused_grouped_mlp = true;
  const auto fused = estimate_step(moe, cal, free_network());
  ASSERT_TRUE(unfused.feasible && fused.feasible) << unfused.reason << fused.reason;
  EXPECT_LT(fused.breakdown.compute.value(), unfused.breakdown.compute.value());
}

// GPT-OSS's passes outside Megatron-Core's fused kernels (workload::layer_operators rope_unfused,
// expert_clamp, expert_bias) cost their bytes at the HBM rate and a launch per kernel, forward and
// twice again backward: compute grows by layers x 3 x (bytes / bandwidth + kernels x overhead).
// A fused grouped MLP takes the clamp and the bias into its kernels: only the RoPE pass is left.
TEST(StepModel, UnfusedRopeClampAndExpertBiasCostTheirPasses) {
  auto cal = test_calibration();
  const double overhead = 2e-6;
  cal.gpus[hardware::Architecture::Hopper].kernel_overhead = core::Seconds(overhead);
  auto l = layout(1, 1, 1, 1, 8);
  l.ep = 8;
  auto base = test_job(1, l);
  base.model.moe = workload::MoeSpec{.num_experts = 64, .top_k = 4, .expert_ffn = 1024};
  auto oss = base;
  oss.model.rope_yarn = true;
  oss.model.activation_clamp = 7.0;
  oss.model.mlp_bias = true;
  const auto plain = estimate_step(base, cal, free_network());
  const auto unfused = estimate_step(oss, cal, free_network());
  ASSERT_TRUE(plain.feasible && unfused.feasible) << plain.reason << unfused.reason;
  const double tokens = 4096.0, rows = tokens * 4.0, bw = 3e12, layers = 16.0;
  const double rope = 12.0 * tokens * (32.0 + 8.0) * 128.0, clamp = 12.0 * rows * 1024.0, bias = 24.0 * rows * 4096.0;
  const double kernels = 1.0 + 1.0 + (2.0 * 64.0 / 8.0 + 2.0);
  const double expected = layers * 3.0 * ((rope + clamp + bias) / bw + kernels * overhead);
  EXPECT_NEAR(unfused.breakdown.compute.value() - plain.breakdown.compute.value(), expected, 1e-9);

  base.layout.recipe.fused_grouped_mlp = oss.layout.recipe.fused_grouped_mlp = true;
  const double fused_gap = estimate_step(oss, cal, free_network()).breakdown.compute.value() -
                           estimate_step(base, cal, free_network()).breakdown.compute.value();
  EXPECT_NEAR(fused_gap, layers * 3.0 * (rope / bw + overhead), 1e-9);
}

// expert_load_factor f (the busiest EP rank's routed load over the mean): the expert GEMMs, the
// expert activation and the all-to-all take f times as long; everything else is unchanged, and a
// dense model ignores it.
TEST(StepModel, ExpertLoadFactorScalesTheExpertWork) {
  const auto cal = test_calibration();
  const collectives::CommCostFn per_byte = [](collectives::Op op, collectives::CommGroup g, core::Bytes b) {
    return core::Seconds(op == collectives::Op::AllToAll && g.size > 1 ? b.value() * 1e-9 : 0.0);
  };
  auto l = layout(1, 1, 1, 1, 8);
  l.ep = 8;
  auto job = test_job(1, l);
  job.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
  const auto a = estimate_step(job, cal, per_byte);
  job.expert_load_factor = 2.0;
  const auto b = estimate_step(job, cal, per_byte);
  ASSERT_TRUE(a.feasible && b.feasible) << a.reason << b.reason;
  EXPECT_NEAR(b.breakdown.ep_comm.value(), 2.0 * a.breakdown.ep_comm.value(), 1e-12);
  EXPECT_GT(b.breakdown.compute.value(), a.breakdown.compute.value());
  EXPECT_LT(b.breakdown.compute.value(), 2.0 * a.breakdown.compute.value());  // attention, dense GEMMs unchanged
  auto dense = test_job(1, layout(1, 1, 1, 1, 8));
  const auto d1 = estimate_step(dense, cal, per_byte);
  dense.expert_load_factor = 2.0;
  EXPECT_EQ(estimate_step(dense, cal, per_byte).step_time.value(), d1.step_time.value());
}

// Roofline of a grouped expert GEMM: with 64 tokens routed top-8 over 128 experts, each expert
// gets 4 rows, and its GEMMs are bound by reading its weights (3 x h x f_e in 16 bits per expert
// and layer), not by the tensor cores. Forward reads each weight once, backward (dgrad + wgrad,
// kGemmBackwardRatio = 2) twice: compute >= 3 x expert weight bytes / HBM bandwidth, while the
// expert FLOPs at 0.5 of peak would take 2.4% of that.
TEST(StepModel, SmallExpertGemmsAreBoundByWeightReads) {
  const auto cal = test_calibration();
  auto job = test_job(1, layout(1, 1, 1, 1, 8), /*seq=*/64);
  job.model.moe = workload::MoeSpec{.num_experts = 128, .top_k = 8, .expert_ffn = 768};
  const auto r = estimate_step(job, cal, free_network());
  ASSERT_TRUE(r.feasible) << r.reason;
  const auto& m = job.model;
  const double expert_bytes = m.num_layers * 128.0 * 3.0 * m.hidden * 768.0 * 2.0;
  const double weight_reads = 3.0 * expert_bytes / job.cluster.gpu.hbm_bandwidth.value();
  const double expert_flops = 3.0 * m.num_layers * 2.0 * 64.0 * 8.0 * 3.0 * m.hidden * 768.0;
  EXPECT_LT(expert_flops / (job.cluster.gpu.bf16.value() * 0.5), 0.05 * weight_reads);
  EXPECT_GT(r.breakdown.compute.value(), weight_reads);
  EXPECT_LT(r.breakdown.compute.value(), 1.5 * weight_reads);  // attention, dense GEMMs, head: small at 64 tokens
}

// Same input, same output; and the trace has one track per stream per stage.
TEST(StepModel, DeterministicAndTraced) {
  const auto cal = test_calibration();
  const auto job = test_job(1, layout(1, 2, 1, 1, 16));
  engine::TraceBuffer trace;
  const auto a = simulate_step(job, cal, fixed_network(1e-4), &trace);
  const auto b = simulate_step(job, cal, fixed_network(1e-4));
  EXPECT_EQ(a.step_time.value(), b.step_time.value());
  bool stage0 = false, stage1 = false;
  for (const auto& e : trace.events()) {
    stage0 |= e.process.find("stage 0") != std::string::npos;
    stage1 |= e.process.find("stage 1") != std::string::npos;
  }
  EXPECT_TRUE(stage0 && stage1);
}

// Megatron-Core recompute_modules: repeating the dense MLP frees its intermediates (memory) and
// charges its forward again in backward (time), so "mlp" sits between none and full on both; the
// largest micro-batch that fits is the one a bisection over the memory model finds.
TEST(StepModel, RecomputeModulesTradeMemoryForTime) {
  const auto cal = test_calibration();
  auto none = test_job(1, layout(1, 1, 1, 1, 8));
  auto mlp = none;
  mlp.layout.recompute = parallelism::Recompute::Selective;
  mlp.layout.recompute_modules = parallelism::module_bit(parallelism::RecomputeModule::Mlp);
  const auto a = estimate_step(none, cal, free_network());
  const auto b = estimate_step(mlp, cal, free_network());
  ASSERT_TRUE(b.feasible) << b.reason;
  EXPECT_LT(b.memory.activations.value(), a.memory.activations.value());
  EXPECT_GT(b.breakdown.compute.value(), a.breakdown.compute.value());
  // The fitting micro-batch: memory at it fits, one more does not.
  const int best = largest_fitting_micro_batch(none, 4096);
  ASSERT_GT(best, 0);
  const auto fits = [&](int mbs) {
    auto j = none;  // pp 1: one micro-batch in flight whatever the global batch
    j.layout.micro_batch = mbs;
    j.layout.global_batch = static_cast<std::int64_t>(mbs) * j.layout.dp;
    return estimate_step(j, cal, free_network()).fits_memory;
  };
  EXPECT_TRUE(fits(best));
  if (best < 4096) {
    EXPECT_FALSE(fits(best + 1));
  }
}

}  // namespace
}  // namespace fmsim::training

namespace fmsim::training {
namespace {

// LoRA (Hu et al. 2021): only the adapters train, so data-parallel traffic is their gradients:
// r (k + n) parameters per adapted k x n weight, a fraction 2 r / h of a square h x h weight.
// With plain DDP the per-step DP bytes equal the adapter count x 4 (fp32 gradients), and the
// full-training traffic is at least 30x larger at rank 16 on hidden 4096 (2 x 16 / 4096 < 1/30).
TEST(StepModel, LoraSendsOnlyAdapterGradients) {
  const auto cal = test_calibration();
  auto l = parallelism::Layout{};
  l.micro_batch = 1;
  l.global_batch = 16;
  l.sharding = parallelism::Sharding::None;
  auto full = test_job(2, l);
  auto lora = full;
  lora.task = Task::Lora;
  lora.lora_rank = 16;
  const auto a = estimate_step(full, cal, fixed_network(1e-3));
  const auto b = estimate_step(lora, cal, fixed_network(1e-3));
  ASSERT_TRUE(a.feasible && b.feasible);
  EXPECT_GT(a.comm.dp.value(), 30.0 * b.comm.dp.value());
  EXPECT_GT(b.comm.dp.value(), 0.0);
  // No weight-gradient GEMMs and no optimizer over the frozen base: a faster step.
  EXPECT_LT(b.step_time.value(), a.step_time.value());
  // Gradients and optimizer states for the adapters only: a 16-bit gradient per adapter
  // parameter (the DDP bytes / 4) and fp32 master, m, v (12 bytes).
  const double adapters = b.comm.dp.value() / 4.0;
  EXPECT_DOUBLE_EQ(b.memory.gradients.value(), 2.0 * adapters);
  EXPECT_DOUBLE_EQ(b.memory.optimizer.value(), 12.0 * adapters);
}

}  // namespace

// gemm_seconds: a compute-bound GEMM takes FLOPs / (peak x power clock x sustained rate x
// efficiency x tile factors). The sustained-rate factor (Blackwell Ultra's 1.13: 160 of 148 SMs
// at a higher power limit behind an unchanged printed BF16/FP8 peak) divides BF16 and FP8 GEMM
// time, and leaves FP4, whose peak was reprinted for Ultra, alone.
TEST(StepModel, SustainedRateFactorDividesBf16AndFp8GemmTimeNotFp4) {
  auto gpu = testing::test_cluster(1).gpu;
  gpu.fp4 = core::tflops(4000);
  GpuCalibration gc;
  gc.kernel_overhead = core::Seconds(0.0);
  const double m = 16384, n = 16384, k = 16384, flops = 2.0 * m * n * k;
  GpuCalibration faster = gc;
  faster.sustained_rate_factor = 1.13;
  for (const auto p : {core::Precision::BF16, core::Precision::FP8, core::Precision::FP4}) {
    const double base = gemm_seconds(gpu, gc, 1.0, p, core::Fp8Recipe::Tensorwise, m, n, k, 1.0, flops);
    const double with = gemm_seconds(gpu, faster, 1.0, p, core::Fp8Recipe::Tensorwise, m, n, k, 1.0, flops);
    const double expected_ratio = p == core::Precision::FP4 ? 1.0 : 1.13;
    EXPECT_NEAR(base / with, expected_ratio, 1e-9) << static_cast<int>(p);
  }
}

}  // namespace fmsim::training
