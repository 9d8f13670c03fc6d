// Serving model: per-iteration cost (roofline of weights, KV and FLOPs), KV-cache capacity, and
// the scheduler's event-by-event behaviour on hand-built specs.
#include <gtest/gtest.h>

#include <cmath>

#include "../training/test_fixtures.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::serving {
namespace {

// No communication cost: a single-GPU replica never calls it.
training::CommCostFn no_comm() {
  return [](collectives::Op, training::CommGroup, core::Bytes) { return core::Seconds(0.0); };
}

Deployment test_deployment() {
  Deployment d;
  d.model = testing::test_model();
  d.cluster = testing::test_cluster(1);
  d.engine.name = "test";
  d.engine.iteration_overhead_s = 0;
  d.engine.graph_layer_overhead_s = 0;
  d.engine.eager_layer_overhead_s = 0;
  d.engine.graph_memory_bytes = 0;
  d.engine.block_size = 16;
  d.engine.max_num_seqs = 64;
  d.engine.max_num_batched_tokens = 4096;
  return d;
}

TEST(ServingIteration, KvBytesPerTokenIsTwoKvHeadsTimesHeadDimTimesLayers) {
  // GQA: K and V, 8 KV heads x 128 dims x 16 layers x 2 bytes (BF16) = 65,536 bytes per token.
  const IterationModel m(test_deployment(), no_comm());
  EXPECT_DOUBLE_EQ(m.memory().kv_bytes_per_token, 2.0 * 8 * 128 * 16 * 2);
  // Paged: 17 tokens occupy two 16-token blocks.
  EXPECT_DOUBLE_EQ(m.kv_bytes(17), 32 * 65536.0);
  // Capacity = memory left after weights and workspace, in tokens.
  EXPECT_NEAR(m.memory().token_capacity, m.memory().kv_cache / 65536.0, 1e-6);
}

TEST(ServingIteration, Fp8KvCacheHalvesTheBytesAndDoublesTheCapacityLeft) {
  auto d = test_deployment();
  const IterationModel bf16(d, no_comm());
  d.kv = core::Precision::FP8;
  const IterationModel fp8(d, no_comm());
  EXPECT_DOUBLE_EQ(fp8.memory().kv_bytes_per_token, bf16.memory().kv_bytes_per_token / 2);
  EXPECT_NEAR(fp8.memory().token_capacity, 2 * bf16.memory().token_capacity, 1.0);
}

TEST(ServingIteration, BatchOneDecodeStreamsTheWeightsAtTheReadEfficiency) {
  // One decode token: every weight is read once; 2 FLOPs per weight are far below the compute
  // roof, so the linear time is weight bytes / (HBM bandwidth x weight_read_efficiency).
  const auto d = test_deployment();
  const IterationModel m(d, no_comm());
  BatchWork w;
  w.decode_seqs = 1;
  w.decode_ctx_full = w.decode_ctx_window = 100;
  w.sampled = 1;
  const auto c = m.iteration(w);
  const double layer = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336;  // QKV, O, SwiGLU MLP
  const double lm_head = 128256.0 * 4096;
  const double bw = d.cluster.gpu.hbm_bandwidth.value() * d.gpu_cal.weight_read_efficiency;
  EXPECT_NEAR(c.linear, (16 * layer + lm_head) * 2.0 / bw, 0.02 * c.linear);
}

TEST(ServingIteration, PrefillIsComputeBound) {
  // 4,096 prompt tokens: GEMM time = 2 x params x tokens / (peak x efficiency x g(4096)), well above
  // the weight read; g(m) = m / (m + gemm_half_dim) is the tile fill of m token rows.
  const auto d = test_deployment();
  const IterationModel m(d, no_comm());
  BatchWork w;
  w.prefill_tokens = 4096;
  w.prefill_seqs = 1;
  w.prefill_attn_full = w.prefill_attn_window = 4096.0 * 2048;
  w.sampled = 1;
  const auto c = m.iteration(w);
  const double layer = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336;
  const double peak = d.cluster.gpu.bf16.value() * d.cluster.gpu.power_clock_factor() * d.gpu_cal.gemm_efficiency_bf16;
  const double g = 4096.0 / (4096.0 + d.gpu_cal.gemm_half_dim);
  EXPECT_NEAR(c.linear, 2.0 * 16 * layer * 4096 / (peak * g), 0.02 * c.linear);
  EXPECT_GT(c.attention, 0.0);
}

TEST(ServingSpeculation, ExpectedTokensPerStepIsAGeometricSum) {
  // k = 3 drafts accepted independently with a = 0.5: 1 + a + a^2 + a^3 = 1.875.
  Speculation s{SpeculativeKind::Mtp, 3, 0.5, 0.0};
  EXPECT_DOUBLE_EQ(s.tokens_per_step(), 1.875);
  EXPECT_DOUBLE_EQ(Speculation{}.tokens_per_step(), 1.0);
}

TEST(ServingSimulator, OneRequestTakesOnePrefillThenOneDecodeIterationPerToken) {
  // Offline, one request of 512 in / 64 out: TTFT = the prefill iteration (it emits the first
  // token), then 63 decode iterations; E2E = TTFT + 63 x TPOT.
  const auto d = test_deployment();
  const IterationModel m(d, no_comm());
  WorkloadSpec wl;
  wl.num_requests = 1;
  wl.input.mean = 512;
  wl.output.mean = 64;
  const auto r = simulate(m, wl, make_requests(wl));
  ASSERT_EQ(r.requests.size(), 1u);
  const auto& q = r.requests[0];
  EXPECT_EQ(q.output_tokens, 64);
  EXPECT_EQ(r.iterations.size(), 64u);
  EXPECT_NEAR(q.ttft(), r.iterations[0].duration_s, 1e-12);
  EXPECT_NEAR(q.e2e(), q.ttft() + 63 * q.tpot(), 1e-9);
}

TEST(ServingSimulator, ClosedLoopOfOneIsOneRequestAfterAnother) {
  // Concurrency 1: requests never overlap, so throughput = output tokens / E2E of one request.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 1;
  wl.num_requests = 5;
  wl.input.mean = 256;
  wl.output.mean = 32;
  const auto r = simulate(m, wl, make_requests(wl));
  const auto s = summarize(r, {}, 0.0);
  EXPECT_EQ(s.completed, 5);
  EXPECT_NEAR(s.output_tokens_per_s, 32.0 / s.e2e.mean, 1e-6 * s.output_tokens_per_s);
  EXPECT_NEAR(s.batch_mean, 1.0, 1e-9);
}

TEST(ServingSimulator, BatchingRaisesThroughputUntilTheKvCacheIsFull) {
  // Decode is weight-bound: 64 requests at once share each weight read, so throughput grows
  // many-fold over one at a time.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec one;
  one.arrival = ArrivalKind::ClosedLoop;
  one.concurrency = 1;
  one.num_requests = 64;
  one.input.mean = 128;
  one.output.mean = 128;
  WorkloadSpec many = one;
  many.concurrency = 64;
  const auto a = summarize(simulate(m, one, make_requests(one)), {}, 0.0);
  const auto b = summarize(simulate(m, many, make_requests(many)), {}, 0.0);
  EXPECT_GT(b.output_tokens_per_s, 10 * a.output_tokens_per_s);
}

TEST(ServingSimulator, OnDemandKvPreemptsWhenFullAndReserveFullNeverDoes) {
  // A KV cache of ~40k tokens, 64 requests of 1,000 + 1,000 tokens: on-demand admission fills it
  // and preempts; reserving prompt + max output at admission never preempts.
  auto d = test_deployment();
  d.engine.gpu_memory_utilization = 0.0;
  IterationModel probe(d, no_comm());
  const double fixed = probe.memory().weights + probe.memory().activations;
  d.engine.gpu_memory_utilization = (fixed + 40000 * 65536.0) / d.cluster.gpu.hbm_usable.value();
  WorkloadSpec wl;
  wl.num_requests = 64;
  wl.input.mean = 1000;
  wl.output.mean = 1000;
  const IterationModel on_demand(d, no_comm());
  const auto a = simulate(on_demand, wl, make_requests(wl));
  d.engine.admission = KvAdmission::ReserveFull;
  const IterationModel reserve(d, no_comm());
  const auto b = simulate(reserve, wl, make_requests(wl));
  EXPECT_GT(a.preemptions, 0);
  EXPECT_EQ(b.preemptions, 0);
  EXPECT_EQ(summarize(a, {}, 0).completed, 64);
  EXPECT_EQ(summarize(b, {}, 0).completed, 64);
}

TEST(ServingSimulator, PrefixCacheSkipsTheSharedPromptOfLaterSamples) {
  // n = 4 samples of one 2,048-token prompt: the prompt is computed once; the other samples reuse it.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.num_requests = 1;
  wl.samples_per_prompt = 4;
  wl.input.mean = 2048;
  wl.output.mean = 16;
  const auto r = simulate(m, wl, make_requests(wl));
  ASSERT_EQ(r.requests.size(), 4u);
  std::int64_t cached = 0;
  for (const auto& q : r.requests) cached += q.cached_tokens;
  EXPECT_EQ(cached, 3 * 2047);
}

TEST(ServingLatency, PercentilesInterpolateBetweenOrderStatistics) {
  // numpy's default: p50 of 1..5 is 3, p90 is 4.6.
  const auto s = latency_stats({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.p50, 3.0);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
}

}  // namespace
}  // namespace fmsim::serving
