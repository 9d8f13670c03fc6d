// Serving model: per-iteration cost (roofline of weights, KV and FLOPs), KV-cache capacity, and
// the scheduler's event-by-event behaviour on hand-built specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "../support/model_fixtures.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::serving {
namespace {

// No communication cost: a single-GPU replica never calls it.
collectives::CommCostFn no_comm() {
  return [](collectives::Op, collectives::CommGroup, core::Bytes) { return core::Seconds(0.0); };
}

Deployment test_deployment() {
  Deployment d;
  d.model = testing::test_model();
  d.cluster = testing::test_cluster(1);
  d.engine.name = "test";
  d.engine.iteration_overhead = core::Seconds(0);
  d.engine.graph_layer_overhead = core::Seconds(0);
  d.engine.eager_layer_overhead = core::Seconds(0);
  d.engine.graph_memory = core::Bytes(0);
  d.engine.block_size = 16;
  d.engine.max_num_seqs = 64;
  d.engine.max_num_batched_tokens = 4096;
  return d;
}

TEST(ServingIteration, KvBytesPerTokenIsTwoKvHeadsTimesHeadDimTimesLayers) {
  // GQA: K and V, 8 KV heads x 128 dims x 16 layers x 2 bytes (BF16) = 65,536 bytes per token.
  const IterationModel m(test_deployment(), no_comm());
  EXPECT_DOUBLE_EQ(m.memory().kv_bytes_per_token.value(), 2.0 * 8 * 128 * 16 * 2);
  // Paged: 17 tokens occupy two 16-token blocks.
  EXPECT_DOUBLE_EQ(m.kv_bytes(17), 32 * 65536.0);
  // Capacity = memory left after weights and workspace, in tokens.
  EXPECT_NEAR(m.memory().token_capacity, m.memory().kv_cache.value() / 65536.0, 1e-6);
}

TEST(ServingIteration, Fp8KvCacheHalvesTheBytesAndDoublesTheCapacityLeft) {
  auto d = test_deployment();
  const IterationModel bf16(d, no_comm());
  d.kv = core::Precision::FP8;
  const IterationModel fp8(d, no_comm());
  EXPECT_DOUBLE_EQ(fp8.memory().kv_bytes_per_token.value(), bf16.memory().kv_bytes_per_token.value() / 2);
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
  EXPECT_NEAR(c.linear.value(), (16 * layer + lm_head) * 2.0 / bw, 0.02 * c.linear.value());
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
  EXPECT_NEAR(c.linear.value(), 2.0 * 16 * layer * 4096 / (peak * g), 0.02 * c.linear.value());
  EXPECT_GT(c.attention.value(), 0.0);
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
  EXPECT_NEAR(q.ttft().value(), r.iterations[0].duration.value(), 1e-12);
  EXPECT_NEAR(q.e2e().value(), (q.ttft() + 63 * q.tpot()).value(), 1e-9);
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
  EXPECT_NEAR(s.output_tokens_per_s.value(), 32.0 / s.e2e.mean, 1e-6 * s.output_tokens_per_s.value());
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

// A KV cache of 40,000 tokens (65,536 bytes each) after weights and workspace.
Deployment overfull_kv_deployment() {
  auto d = test_deployment();
  d.engine.gpu_memory_utilization = 0.0;
  IterationModel probe(d, no_comm());
  const double fixed = (probe.memory().weights + probe.memory().activations).value();
  d.engine.gpu_memory_utilization = (fixed + 40000 * 65536.0) / d.cluster.gpu.hbm_usable.value();
  return d;
}

// `requests` requests of fixed lengths.
WorkloadSpec fixed_workload(int requests, double input, double output) {
  WorkloadSpec wl;
  wl.num_requests = requests;
  wl.input.mean = input;
  wl.output.mean = output;
  return wl;
}

// 64 requests of 1,000 + 1,000 tokens: more than that cache holds at once.
WorkloadSpec overfull_kv_workload() { return fixed_workload(64, 1000, 1000); }

// A run played step by step: a trace sink turns the decode-stretch shortcut off.
ServeResult step_by_step(const IterationModel& m, const WorkloadSpec& wl) {
  engine::TraceBuffer trace;
  return simulate(m, wl, make_requests(wl), &trace);
}

// Same requests, same token times (to rounding), same iterations and KV usage.
void expect_same_run(const ServeResult& a, const ServeResult& b) {
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_NEAR(a.requests[i].first_token.value(), b.requests[i].first_token.value(), 1e-9);
    EXPECT_NEAR(a.requests[i].finish.value(), b.requests[i].finish.value(), 1e-9);
    EXPECT_EQ(a.requests[i].output_tokens, b.requests[i].output_tokens);
    EXPECT_EQ(a.requests[i].preemptions, b.requests[i].preemptions);
  }
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (std::size_t i = 0; i < a.iterations.size(); ++i) {
    EXPECT_NEAR(a.iterations[i].kv_usage, b.iterations[i].kv_usage, 1e-9);
    EXPECT_EQ(a.iterations[i].decode_seqs, b.iterations[i].decode_seqs);
  }
  EXPECT_EQ(a.preemptions, b.preemptions);
  EXPECT_NEAR(a.itl.count(), b.itl.count(), 1e-6);
  EXPECT_NEAR(a.itl.sum(), b.itl.sum(), 1e-9 * a.itl.sum());
}

TEST(ServingSimulator, DecodeStretchesPlayAtOnceAsStepByStep) {
  // Decode-only iterations (no arrival, finish or admission among them) cost a function of the
  // batch and the sum of its contexts, which grows by the batch each step; played at once they
  // give the same run as one iteration at a time: a staggered closed loop, a closed loop with
  // more clients than the batch holds (the queue waits on full slots), a sliding window, and an
  // overfull KV cache (a stretch stops where its growth would not fit: preemptions as before).
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl = fixed_workload(48, 300, 200);
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 16;
  expect_same_run(simulate(m, wl, make_requests(wl)), step_by_step(m, wl));
  wl.concurrency = 100;  // max_num_seqs 64
  wl.num_requests = 200;
  expect_same_run(simulate(m, wl, make_requests(wl)), step_by_step(m, wl));
  auto windowed = test_deployment();
  windowed.model.sliding_window = 128;
  const IterationModel w(windowed, no_comm());
  expect_same_run(simulate(w, wl, make_requests(wl)), step_by_step(w, wl));
  const IterationModel tight(overfull_kv_deployment(), no_comm());
  const auto over = overfull_kv_workload();
  const auto fast = simulate(tight, over, make_requests(over));
  EXPECT_GT(fast.preemptions, 0);
  expect_same_run(fast, step_by_step(tight, over));
}

// Mean and standard deviation of each request's TTFT less `prefill`: its request path time.
std::pair<double, double> path_mean_and_sd(const ServeResult& r, double prefill) {
  double mean = 0, var = 0;
  const auto n = static_cast<double>(r.requests.size());
  for (const auto& q : r.requests) mean += (q.ttft().value() - prefill) / n;
  for (const auto& q : r.requests) var += std::pow(q.ttft().value() - prefill - mean, 2) / n;
  return {mean, std::sqrt(var)};
}

// One client over the server path (request_overhead 50 ms), 400 requests of 256 + 4 tokens.
WorkloadSpec one_client_over_the_server() {
  WorkloadSpec wl = fixed_workload(400, 256, 4);
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.path = RequestPath::Server;
  return wl;
}

Deployment fifty_ms_request_path() {
  auto d = test_deployment();
  d.engine.request_overhead = core::Seconds(0.05);
  return d;
}

TEST(ServingSimulator, RandomRequestPathKeepsItsMeanAndSpreadsTheClients) {
  // One client: no queue, so TTFT = request path + prefill. A fixed path gives every request the
  // same TTFT; a random one (exponential of mean request_overhead) keeps the mean and has the
  // exponential's spread (standard deviation = mean), the same draws for the same seed.
  const IterationModel m(fifty_ms_request_path(), no_comm());
  WorkloadSpec wl = one_client_over_the_server();
  const auto fixed = simulate(m, wl, make_requests(wl));
  wl.random_path_time = true;
  const auto random = simulate(m, wl, make_requests(wl));
  const auto [mean, sd] = path_mean_and_sd(random, fixed.requests[1].ttft().value() - 0.05);
  EXPECT_NEAR(mean, 0.05, 0.1 * 0.05);
  EXPECT_NEAR(sd, 0.05, 0.15 * 0.05);
  EXPECT_NEAR(fixed.requests[7].ttft().value(), fixed.requests[300].ttft().value(), 1e-12);
  const auto again = simulate(m, wl, make_requests(wl));
  EXPECT_EQ(again.requests[5].ttft().value(), random.requests[5].ttft().value());
}

TEST(ServingDisaggregated, RandomRequestPathKeepsItsMeanAndSpreadsTheClients) {
  // The same through a prefill and a decode instance: the sends reach the prefill pool at send
  // time + the request's own path time, and TTFT counts from the send.
  const IterationModel m(fifty_ms_request_path(), no_comm());
  WorkloadSpec wl = one_client_over_the_server();
  const Disaggregation dis;
  const auto fixed = simulate_disaggregated(m, m, dis, wl, make_requests(wl));
  wl.random_path_time = true;
  const auto random = simulate_disaggregated(m, m, dis, wl, make_requests(wl));
  const auto [mean, sd] = path_mean_and_sd(random, fixed.requests[1].ttft().value() - 0.05);
  EXPECT_NEAR(mean, 0.05, 0.1 * 0.05);
  EXPECT_NEAR(sd, 0.05, 0.15 * 0.05);
}

TEST(ServingSimulator, KvOffloadTierReplacesRecomputeWithTwoCopies) {
  // The same overfull KV cache as below; with an offload tier of ample capacity every preemption
  // moves the sequence's KV out and back (2 x bytes / (rate x GPUs)) instead of recomputing its
  // prompt and output, so the run finishes sooner.
  auto d = overfull_kv_deployment();
  const WorkloadSpec wl = overfull_kv_workload();
  const auto recompute = simulate(IterationModel(d, no_comm()), wl, make_requests(wl));
  d.kv_offload = {KvTier::Host, core::Bytes(1e12), core::gb_per_s(55)};
  const auto offload = simulate(IterationModel(d, no_comm()), wl, make_requests(wl));
  EXPECT_GT(offload.preemptions, 0);
  EXPECT_EQ(offload.offloads, offload.preemptions);
  EXPECT_EQ(recompute.offloads, 0);
  EXPECT_EQ(summarize(offload, {}, 0).completed, 64);
  EXPECT_LT(offload.duration, recompute.duration);
  // No room in the tier: back to the engine's recompute.
  d.kv_offload.capacity = core::Bytes(1.0);
  const auto full = simulate(IterationModel(d, no_comm()), wl, make_requests(wl));
  EXPECT_EQ(full.offloads, 0);
  EXPECT_GT(full.preemptions, 0);
}

TEST(ServingSimulator, OnDemandKvPreemptsWhenFullAndReserveFullNeverDoes) {
  // A KV cache of ~40k tokens, 64 requests of 1,000 + 1,000 tokens: on-demand admission fills it
  // and preempts; reserving prompt + max output at admission never preempts.
  auto d = overfull_kv_deployment();
  const WorkloadSpec wl = overfull_kv_workload();
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

// A mixture-of-experts variant of the test model: 64 experts, top 8, on 8 GPUs with attention DP.
Deployment moe_dep_deployment(int ranks) {
  auto d = test_deployment();
  d.model.moe.num_experts = 64;
  d.model.moe.top_k = 8;
  d.model.moe.expert_ffn = 1024;
  d.cluster = testing::test_cluster(1);
  d.tp = ranks;
  d.ep = ranks;
  d.attention_dp = ranks;
  return d;
}

TEST(ServingMoe, ExpectedMaximumOfNormalsFollowsTheOrderStatistics) {
  // E[max of n standard normals]: 0.5642 for n = 2, 1.0294 for 4, 1.4236 for 8, 2.0427 for 32
  // (tabulated order statistics); Blom's approximation is within 5%.
  EXPECT_NEAR(expected_max_standard_normal(2), 0.5642, 0.05 * 0.5642);
  EXPECT_NEAR(expected_max_standard_normal(4), 1.0294, 0.03 * 1.0294);
  EXPECT_NEAR(expected_max_standard_normal(8), 1.4236, 0.02 * 1.4236);
  EXPECT_NEAR(expected_max_standard_normal(32), 2.0427, 0.02 * 2.0427);
  EXPECT_DOUBLE_EQ(expected_max_standard_normal(1), 0.0);
}

TEST(ServingMoe, BusiestExpertRankCarriesSamplingPlusPopularitySpread) {
  // ep = 8 ranks, 64 experts (8 per rank), top 8. T tokens put mean = T k / ep pairs on a rank;
  // variance mean (1 - 1/ep) from multinomial routing plus (mean c / sqrt(E/ep))^2 from expert
  // popularity; the busiest rank carries z_8 sqrt(var) / mean more than the mean.
  auto d = moe_dep_deployment(8);
  d.moe_cal.expert_load_cv = 0.0;
  const IterationModel uniform(d, no_comm());
  const double z8 = expected_max_standard_normal(8);
  const double mean = 1000.0 * 8 / 8;
  EXPECT_NEAR(uniform.ep_imbalance(1000), z8 * std::sqrt(mean * 7.0 / 8.0) / mean, 1e-12);
  // More tokens: the sampling spread shrinks as 1 / sqrt(T).
  EXPECT_LT(uniform.ep_imbalance(100000), uniform.ep_imbalance(1000) / 9.0);
  d.moe_cal.expert_load_cv = 1.0;
  const IterationModel skewed(d, no_comm());
  const double pop = 1.0 / std::sqrt(64.0 / 8.0);
  EXPECT_NEAR(skewed.ep_imbalance(1000), z8 * std::sqrt(mean * 7.0 / 8.0 + mean * mean * pop * pop) / mean, 1e-12);
  // One token cannot put more than min(k, E/ep) of its copies on one rank: at most ep x the mean.
  EXPECT_LE(skewed.ep_imbalance(1), 8.0 - 1.0);
  // No expert parallelism, no imbalance.
  EXPECT_DOUBLE_EQ(IterationModel(test_deployment(), no_comm()).ep_imbalance(1000), 0.0);
}

TEST(ServingMoe, ImbalancedRoutingSlowsTheExpertGemms) {
  auto d = moe_dep_deployment(8);
  d.moe_cal.expert_load_cv = 0.0;
  const IterationModel even(d, no_comm());
  d.moe_cal.expert_load_cv = 2.0;
  const IterationModel skewed(d, no_comm());
  BatchWork w;
  w.prefill_tokens = 8192;
  w.prefill_seqs = 8;
  w.prefill_attn_full = w.prefill_attn_window = 8 * 1024.0 * 512;
  w.sampled = 8;
  EXPECT_GT(skewed.iteration(w).experts, 1.2 * even.iteration(w).experts);
}

TEST(ServingMoe, AttentionDpBusiestRankSetsThePace) {
  // Two ranks; one prefill chunk of 2,048 tokens. On one rank it takes that rank's full dense and
  // attention time; taken as evenly spread it would take half. The routed experts see the same
  // 2,048 tokens either way.
  const auto d = moe_dep_deployment(2);
  const IterationModel m(d, no_comm());
  BatchWork w;
  w.prefill_tokens = 2048;
  w.prefill_seqs = 1;
  w.prefill_attn_full = w.prefill_attn_window = 2048.0 * 1024;
  w.sampled = 1;
  std::vector<BatchWork> ranks(2);
  ranks[0] = w;
  const auto spread = m.iteration(w);
  const auto busiest = m.iteration(w, ranks);
  EXPECT_GT(busiest.attention, 1.9 * spread.attention);
  EXPECT_GT(busiest.linear, 1.5 * spread.linear);
  EXPECT_NEAR(busiest.experts.value(), spread.experts.value(), 1e-9);
}

TEST(ServingMoe, AttentionDpLimitsApplyPerRank) {
  // max_num_seqs 4 per rank on 2 ranks: 8 requests run at once (TensorRT-LLM's max_batch_size is
  // per rank under attention DP).
  auto d = moe_dep_deployment(2);
  d.engine.max_num_seqs = 4;
  const IterationModel m(d, no_comm());
  WorkloadSpec wl;
  wl.input.mean = 64;
  wl.output.mean = 32;
  wl.num_requests = 16;
  const auto r = simulate(m, wl, make_requests(wl));
  int most = 0;
  for (const auto& it : r.iterations) most = std::max(most, it.running);
  EXPECT_EQ(most, 8);
}

TEST(ServingIteration, DecodeBatchPadsToTheEnginesCapturedGraphSizes) {
  // TensorRT-LLM perf-overview runs capture 1, 2, 4, ..., 256, 384, 512, 1024: 600 pads to 1024.
  auto d = test_deployment();
  d.engine.cuda_graph_batch_sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024};
  const IterationModel m(d, no_comm());
  EXPECT_EQ(m.graph_batch(600), 1024);
  EXPECT_EQ(m.graph_batch(384), 384);
  EXPECT_EQ(m.graph_batch(3), 4);
  // Without a list: vLLM's 1, 2, 4, then multiples of 8.
  EXPECT_EQ(IterationModel(test_deployment(), no_comm()).graph_batch(601), 608);
}

TEST(ServingFleet, RoundRobinOfIdenticalRequestsSplitsThemEvenly) {
  // Offline, 2 replicas, 16 identical requests: round-robin gives each replica 8, so the fleet
  // finishes when one replica finishes 8 requests and produces twice its tokens per second.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.num_requests = 16;
  wl.input.mean = 256;
  wl.output.mean = 32;
  const auto fleet = simulate_fleet(m, wl, make_requests(wl), 2, RoutingPolicy::RoundRobin);
  WorkloadSpec half = wl;
  half.num_requests = 8;
  const auto one = simulate(m, half, make_requests(half));
  EXPECT_EQ(fleet.requests.size(), 16u);
  EXPECT_EQ(fleet.gpus, 2 * one.gpus);
  EXPECT_NEAR(fleet.duration.value(), one.duration.value(), 1e-9);
  EXPECT_NEAR(summarize(fleet, {}, 0).output_tokens_per_s.value(),
              2 * summarize(one, {}, 0).output_tokens_per_s.value(), 1e-6);
}

TEST(ServingFleet, JoinTheShortestQueueCutsTheTtftTailOfUnevenRequests) {
  // Heavy-tailed lengths at a moderate rate: round-robin can stack long requests on one replica,
  // join-the-shortest-queue sends each request to the replica with the fewest outstanding.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.arrival = ArrivalKind::Poisson;
  wl.num_requests = 600;
  wl.input = {LengthKind::LogNormal, 1024, 1.0, 16384};
  wl.output = {LengthKind::LogNormal, 256, 1.0, 4096};
  // Rate: about half of what 4 replicas sustain.
  const double step = m.decode_step_time(64, 1500).value();
  wl.rate = 0.5 * 4 * 64 / (step * 400);
  const auto reqs2 = make_requests(wl);
  const auto rr = summarize(simulate_fleet(m, wl, reqs2, 4, RoutingPolicy::RoundRobin), {}, 0);
  const auto jsq = summarize(simulate_fleet(m, wl, reqs2, 4, RoutingPolicy::LeastOutstanding), {}, 0);
  EXPECT_EQ(rr.completed, 600);
  EXPECT_EQ(jsq.completed, 600);
  EXPECT_LE(jsq.ttft.p99, rr.ttft.p99);
}

// `cut` (run with stop_after = k) against `full` (run to the end): requests below k have the
// same arrival, first token and finish; later ones are unsent, unfinished or as in `full`.
void expect_same_times_below(const ServeResult& full, const ServeResult& cut, int k) {
  int compared = 0, unfinished = static_cast<int>(full.requests.size() - cut.requests.size());  // never sent
  for (const auto& b : cut.requests) {
    const auto& a = *std::find_if(full.requests.begin(), full.requests.end(),
                                  [&](const RequestResult& q) { return q.request == b.request; });
    if (b.request >= k && !b.completed()) {
      unfinished++;
      continue;
    }
    EXPECT_EQ(a.arrival.value(), b.arrival.value()) << a.request;
    EXPECT_EQ(a.first_token.value(), b.first_token.value()) << a.request;
    EXPECT_EQ(a.finish.value(), b.finish.value()) << a.request;
    compared++;
  }
  EXPECT_GE(compared, k);
  EXPECT_GT(unfinished, 0);
}

// Four closed-loop clients, 12 requests of 512 + 64 tokens.
WorkloadSpec four_clients_three_rounds() {
  WorkloadSpec wl = fixed_workload(12, 512, 64);
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 4;
  return wl;
}

TEST(ServingClosedLoop, StopAfterKeepsTheTimesOfTheRequestsBeforeIt) {
  // Stopping once requests 0-7 have ended (stop_after = 8) leaves their arrival, first token and
  // finish exactly as in the run to the end: the simulation runs forward in time and stops after
  // the step in which the last of them ended.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl = four_clients_three_rounds();
  const auto reqs = make_requests(wl);
  const auto full = simulate(m, wl, reqs);
  wl.stop_after = 8;
  expect_same_times_below(full, simulate(m, wl, reqs), 8);
}

TEST(ServingDisaggregated, StopAfterKeepsTheTimesOfTheRequestsBeforeIt) {
  // The same over 1 prefill + 2 decode instances: the pools run on while an event before the
  // moment the last of requests 0-7 ended is left, then stop.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl = four_clients_three_rounds();
  const auto reqs = make_requests(wl);
  Disaggregation dis;
  dis.decode_replicas = 2;
  const auto full = simulate_disaggregated(m, m, dis, wl, reqs);
  wl.stop_after = 8;
  expect_same_times_below(full, simulate_disaggregated(m, m, dis, wl, reqs), 8);
}

// One request of 2,048 prompt and 16 output tokens.
WorkloadSpec one_long_prompt() { return fixed_workload(1, 2048, 16); }

// 1 prefill + 1 decode instance joined by a slow link (1 GB/s) so the transfer shows, sent whole.
Disaggregation over_slow_link() {
  Disaggregation dis;
  dis.link_bandwidth = core::gb_per_s(1);
  dis.transfer = KvTransfer::Request;
  return dis;
}

TEST(ServingDisaggregated, KvTransferAddsToTheFirstDecodeNotToTtft) {
  // One request, 1 prefill + 1 decode instance. TTFT is the prefill instance's iteration; the KV
  // then moves: whole request = bytes / bandwidth after the prefill; layer by layer = only
  // max(bytes / bandwidth / layers, bytes / bandwidth - prefill time) shows. The difference of the
  // two end-to-end latencies is the difference of the exposed transfers.
  const IterationModel m(test_deployment(), no_comm());
  const WorkloadSpec wl = one_long_prompt();
  const auto reqs = make_requests(wl);
  Disaggregation dis = over_slow_link();
  const auto whole = simulate_disaggregated(m, m, dis, wl, reqs);
  dis.transfer = KvTransfer::Layer;
  const auto layered = simulate_disaggregated(m, m, dis, wl, reqs);
  ASSERT_EQ(whole.requests.size(), 1u);
  ASSERT_EQ(layered.requests.size(), 1u);
  EXPECT_EQ(whole.requests[0].output_tokens, 16);
  EXPECT_EQ(whole.gpus, 2);
  EXPECT_NEAR(whole.requests[0].ttft().value(), m.prefill_time(2048).value(), 1e-9);
  EXPECT_NEAR(layered.requests[0].ttft().value(), whole.requests[0].ttft().value(), 1e-12);
  const double t = m.kv_bytes(2048) / 1e9;
  const double exposed = std::max(t / 16.0, t - m.prefill_time(2048).value());
  EXPECT_NEAR((whole.requests[0].e2e() - layered.requests[0].e2e()).value(), t - exposed, 1e-9);
}

}  // namespace
}  // namespace fmsim::serving

namespace fmsim::serving {
namespace {

Deployment moe_single_gpu(int experts) {
  auto d = test_deployment();
  d.model.moe.num_experts = experts;
  d.model.moe.top_k = 8;
  d.model.moe.expert_ffn = 1024;
  return d;
}

TEST(ServingMoe, SmallDecodeBatchPaysOnlyForTheExpertsItRoutesTo) {
  // One token routed to 8 of 64 experts reads those 8 experts' weights and runs 8 one-row GEMMs:
  // exactly what one token costs in a layer of 8 experts that it all uses (rows per expert that
  // receives a token: T k / (E (1 - (1 - k/E)^T)) = 1 in both). Padding the MMA tiles of all 64
  // experts for 1/8 of a row each would cost 8x the compute.
  const IterationModel wide(moe_single_gpu(64), no_comm()), narrow(moe_single_gpu(8), no_comm());
  BatchWork w;
  w.decode_seqs = 1;
  w.decode_ctx_full = w.decode_ctx_window = 512;
  w.sampled = 1;
  EXPECT_NEAR(wide.iteration(w).experts.value(), narrow.iteration(w).experts.value(),
              1e-9 * narrow.iteration(w).experts.value());
  EXPECT_GT(wide.iteration(w).experts.value(), 0.0);
}

TEST(ServingRequestPath, ServerPathAddsTheEnginesRequestOverheadToTtft) {
  // A request served over HTTP reaches the engine request_overhead after it is sent; nothing else
  // changes, so its TTFT and E2E grow by exactly that and its TPOT not at all.
  auto d = test_deployment();
  d.engine.request_overhead = core::ms(50);
  const IterationModel m(d, no_comm());
  WorkloadSpec wl;
  wl.num_requests = 1;
  wl.input.mean = 512;
  wl.output.mean = 16;
  wl.path = RequestPath::InProcess;
  const auto local = simulate(m, wl, make_requests(wl));
  wl.path = RequestPath::Server;
  const auto served = simulate(m, wl, make_requests(wl));
  ASSERT_EQ(local.requests.size(), 1u);
  ASSERT_EQ(served.requests.size(), 1u);
  EXPECT_NEAR((served.requests[0].ttft() - local.requests[0].ttft()).value(), 0.050, 1e-12);
  EXPECT_NEAR((served.requests[0].e2e() - local.requests[0].e2e()).value(), 0.050, 1e-12);
  EXPECT_NEAR(served.requests[0].tpot().value(), local.requests[0].tpot().value(), 1e-15);
}

TEST(ServingIteration, SequenceOverheadIsPerSequencePerAttentionDpRank) {
  // Host time of a step = iteration_overhead + sequence_overhead x sequences on a rank.
  auto d = test_deployment();
  d.engine.iteration_overhead = core::ms(2);
  d.engine.sequence_overhead = core::us(10);
  const IterationModel m(d, no_comm());
  BatchWork w;
  w.decode_seqs = 40;
  w.decode_ctx_full = w.decode_ctx_window = 40 * 512.0;
  w.sampled = 40;
  EXPECT_NEAR(m.iteration(w).overhead.value(), 2e-3 + 40 * 10e-6, 1e-12);
}

TEST(ServingSimulator, ClosedLoopClientsStartTogetherOrSpread) {
  // Together: every client's first request arrives at 0. Spread: client i's at i/c of one
  // request's expected duration, so the first requests arrive at distinct times.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 4;
  wl.num_requests = 12;
  wl.input.mean = 256;
  wl.output.mean = 32;
  const auto together = simulate(m, wl, make_requests(wl));
  wl.client_start = ClientStart::Spread;
  const auto spread = simulate(m, wl, make_requests(wl));
  auto first_arrivals = [](const ServeResult& r) {
    std::vector<double> t;
    for (const auto& q : r.requests) {
      if (q.request < 4) t.push_back(q.arrival.value());
    }
    std::sort(t.begin(), t.end());
    return t;
  };
  EXPECT_EQ(first_arrivals(together), std::vector<double>(4, 0.0));
  const auto s = first_arrivals(spread);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], 0.0);
  for (std::size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i], s[i - 1]);
  EXPECT_EQ(summarize(together, {}, 0.0).completed, 12);
  EXPECT_EQ(summarize(spread, {}, 0.0).completed, 12);
}

TEST(ServingDisaggregated, ClosedLoopKeepsAtMostItsClientsInFlight) {
  // Two clients over a 1 prefill + 1 decode deployment: each sends its next request when the
  // decode pool finishes the last, so no request is sent before one of the two earlier ones ends,
  // and all of them complete.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 2;
  wl.num_requests = 6;
  wl.input.mean = 512;
  wl.output.mean = 16;
  Disaggregation dis;
  const auto r = simulate_disaggregated(m, m, dis, wl, make_requests(wl));
  ASSERT_EQ(r.requests.size(), 6u);
  for (const auto& q : r.requests) {
    EXPECT_TRUE(q.completed());
    int in_flight = 0;  // requests sent before q and still running when q was sent
    for (const auto& o : r.requests) {
      if (&o != &q && o.arrival <= q.arrival && o.finish > q.arrival) in_flight++;
    }
    EXPECT_LE(in_flight, 1) << "request " << q.request;
  }
}

TEST(ServingDisaggregated, FirstTokenFromTheDecodeInstanceWaitsForItsFirstStep) {
  // One request, 1 prefill + 1 decode instance, the whole KV sent after the prefill over a slow
  // link. From the prefill pool (FirstTokenFrom::Prefill) TTFT = prefill time P. Streamed by the
  // decode instance (FirstTokenFrom::Decode, Dynamo's frontend) the first token leaves as the
  // decode instance's first step holding the request starts: TTFT = P + transfer T (nothing else
  // runs), and E2E is unchanged, so TPOT = (E2E - P - T) / (output - 1) = one decode step.
  const IterationModel m(test_deployment(), no_comm());
  auto played = [&](FirstTokenFrom from) {
    Disaggregation dis = over_slow_link();
    dis.first_token = from;
    const auto r = simulate_disaggregated(m, m, dis, one_long_prompt(), make_requests(one_long_prompt()));
    EXPECT_EQ(r.requests.size(), 1u);
    return r.requests.at(0);
  };
  const RequestResult pre = played(FirstTokenFrom::Prefill), dec = played(FirstTokenFrom::Decode);
  const double p = m.prefill_time(2048).value(), t = m.kv_bytes(2048) / 1e9;
  EXPECT_NEAR(pre.ttft().value(), p, 1e-9);
  EXPECT_NEAR(dec.ttft().value(), p + t, 1e-9);
  EXPECT_NEAR(dec.e2e().value(), pre.e2e().value(), 1e-12);
  EXPECT_NEAR(dec.tpot().value(), (dec.e2e().value() - p - t) / 15.0, 1e-12);
}

TEST(ServingDisaggregated, ClosedLoopClientsComeBackAfterFirstTokenOnlyRequests) {
  // A request of one output token ends at its first token, in the prefill pool's hand-off, never
  // decoding: its client must still send its next request, so all six complete.
  const IterationModel m(test_deployment(), no_comm());
  WorkloadSpec wl;
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 2;
  wl.num_requests = 6;
  wl.input.mean = 256;
  wl.output.mean = 1;
  const auto r = simulate_disaggregated(m, m, Disaggregation{}, wl, make_requests(wl));
  ASSERT_EQ(r.requests.size(), 6u);
  for (const auto& q : r.requests) EXPECT_TRUE(q.completed()) << "request " << q.request;
}

}  // namespace
}  // namespace fmsim::serving

namespace fmsim::serving {
namespace {

// Steady state of an open loop: requests arriving every 1/rate s, each lasting D s with n output
// tokens evenly spread over it, produce rate x n tokens/s once the first ones have left, whatever
// the request count; the whole run's average (ramp-up and drain included) depends on it.
ServeResult uniform_run(int requests, double rate, double duration_s, std::int64_t tokens) {
  ServeResult r;
  r.gpus = 1;
  for (int i = 0; i < requests; ++i) {
    RequestResult q;
    q.request = i;
    q.arrival = core::Seconds(i / rate);
    q.first_token = core::Seconds(i / rate + 0.01);
    q.finish = core::Seconds(i / rate + duration_s);
    q.output_tokens = tokens;
    r.requests.push_back(q);
  }
  r.duration = core::Seconds((requests - 1) / rate + duration_s);
  return r;
}

TEST(ServingSteadyState, OpenLoopRateTimesOutputTokensForAnyRequestCount) {
  for (const int n : {2000, 8000}) {
    const auto r = uniform_run(n, 20.0, 30.0, 1024);
    const auto s = steady_state(r);
    ASSERT_TRUE(s.valid) << n;
    EXPECT_TRUE(s.converged) << n;
    EXPECT_TRUE(s.ends_at_last_arrival) << n;
    EXPECT_NEAR(s.output_tokens_per_s, 20.0 * 1024, 0.01 * 20.0 * 1024) << n;
    // The later of two request lifetimes after the first arrival and the 10%-th completion (request
    // n/10 - 1 ends at (n/10 - 1)/20 + 30 s).
    EXPECT_NEAR(s.start_s, std::max(60.0, (n / 10 - 1) / 20.0 + 30.0), 1e-6) << n;
    EXPECT_NEAR(s.end_s, (n - 1) / 20.0, 1e-6) << n;
  }
  // The whole run's average is below it by the ramp-up and drain: n x 1024 / (n/20 + 30 s).
  const auto m = summarize(uniform_run(2000, 20.0, 30.0, 1024), {}, 0.0);
  EXPECT_LT(m.output_tokens_per_s.value(), 0.8 * 20.0 * 1024);
}

TEST(ServingSteadyState, NoWindowWhenTheLastArrivalComesBeforeTheWarmUpEnds) {
  // 100 requests at 20/s arrive within 5 s; each lasts 30 s: the load never reaches steady state.
  EXPECT_FALSE(steady_state(uniform_run(100, 20.0, 30.0, 1024)).valid);
}

TEST(ServingSimulator, CohortPlaysAsStepByStep) {
  // Steady decoders advance together (the decode cohort: per iteration their count and summed
  // context, their KV growth by block offset, one ITL gap), leaving it when they finish or when
  // memory could run short: the run is the one played sequence by sequence (a trace turns the
  // cohort off), for a closed loop whose clients drift apart, a 1-token KV block (SGLang's page),
  // reserve-full admission, attention DP, an overfull KV cache (preemptions), a sliding window,
  // a two-replica fleet and disaggregated pools.
  WorkloadSpec wl = fixed_workload(240, 300, 200);
  wl.arrival = ArrivalKind::ClosedLoop;
  wl.concurrency = 40;
  wl.random_path_time = true;
  auto d = fifty_ms_request_path();
  const IterationModel m(d, no_comm());
  expect_same_run(simulate(m, wl, make_requests(wl)), step_by_step(m, wl));
  auto page = d;
  page.engine.block_size = 1;
  const IterationModel p(page, no_comm());
  expect_same_run(simulate(p, wl, make_requests(wl)), step_by_step(p, wl));
  auto reserve = d;
  reserve.engine.admission = KvAdmission::ReserveFull;
  const IterationModel r(reserve, no_comm());
  expect_same_run(simulate(r, wl, make_requests(wl)), step_by_step(r, wl));
  const IterationModel dep(moe_dep_deployment(4), no_comm());
  expect_same_run(simulate(dep, wl, make_requests(wl)), step_by_step(dep, wl));
  auto windowed = d;
  windowed.model.sliding_window = 128;
  const IterationModel w(windowed, no_comm());
  expect_same_run(simulate(w, wl, make_requests(wl)), step_by_step(w, wl));
  const IterationModel tight(overfull_kv_deployment(), no_comm());
  WorkloadSpec over = overfull_kv_workload();
  over.arrival = ArrivalKind::ClosedLoop;
  over.concurrency = 48;
  const auto fast = simulate(tight, over, make_requests(over));
  EXPECT_GT(fast.preemptions, 0);
  expect_same_run(fast, step_by_step(tight, over));
  WorkloadSpec open = fixed_workload(300, 300, 200);
  open.arrival = ArrivalKind::Poisson;
  open.rate = 40;
  engine::TraceBuffer trace;
  expect_same_run(simulate_fleet(m, open, make_requests(open), 2, RoutingPolicy::LeastOutstanding),
                  simulate_fleet(m, open, make_requests(open), 2, RoutingPolicy::LeastOutstanding, &trace));
  Disaggregation dis;
  dis.decode_replicas = 2;
  engine::TraceBuffer trace2;
  expect_same_run(simulate_disaggregated(m, m, dis, wl, make_requests(wl)),
                  simulate_disaggregated(m, m, dis, wl, make_requests(wl), &trace2));
}
}  // namespace
}  // namespace fmsim::serving
