// Layout validity rules and the memory model's formulas.
#include <gtest/gtest.h>

#include <vector>

#include "parallelism/layout.hpp"
#include "parallelism/memory.hpp"
#include "workload/operators.hpp"

namespace fmsim::parallelism {
namespace {

workload::ModelSpec model() {
  workload::ModelSpec m;
  m.name = "m";
  m.num_layers = 32;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab = 128256;
  return m;
}

Layout make(int tp, int pp, int dp_gpus, Sharding s = Sharding::DistributedOptimizer) {
  Layout l;
  l.tp = tp;
  l.pp = pp;
  l.sharding = s;
  l.global_batch = 1024;
  return with_dp(l, dp_gpus);
}

// The layer count of each stage's single chunk, checking that the stages hold consecutive layers
// from 0 to `layers`.
std::vector<int> stage_layer_counts(int layers, const Layout& l) {
  std::vector<int> counts;
  int next = 0;
  for (int s = 0; s < l.pp; ++s) {
    const LayerRange r = chunk_layers(layers, l, s, 0);
    EXPECT_EQ(r.first, next) << "stage " << s;
    next = r.last;
    counts.push_back(r.count());
  }
  EXPECT_EQ(next, layers);
  return counts;
}

// dp = gpus / (tp * pp * cp); micro-batches = gbs / (mbs * dp).
TEST(Layout, DerivesDataParallelism) {
  const Layout l = make(8, 4, 512);
  EXPECT_EQ(l.dp, 16);
  EXPECT_EQ(l.micro_batches(), 64);
}

TEST(Layout, RejectsWithReasons) {
  EXPECT_NE(why_invalid(model(), make(3, 1, 48), 48, 4096)->find("attention heads"), std::string::npos);
  EXPECT_NE(why_invalid(model(), make(8, 1, 60), 60, 4096)->find("does not divide 60 GPUs"), std::string::npos);
  Layout ep = make(1, 1, 8);
  ep.ep = 2;
  EXPECT_NE(why_invalid(model(), ep, 8, 4096)->find("mixture-of-experts"), std::string::npos);
  Layout cp = make(1, 1, 8);
  cp.cp = 3;
  EXPECT_TRUE(why_invalid(model(), with_dp(cp, 9), 9, 4096).has_value());
  EXPECT_FALSE(why_invalid(model(), make(8, 4, 512), 512, 4096).has_value());
}

// Megatron-Core counts the embedding and the loss as one layer slot each
// (account_for_embedding/loss_in_pipeline_split): Llama 3.1 405B's 126 layers + 2 = 128 slots fill
// pp 16 x vp 8 = 128 chunks, one slot each, so chunk 0 of stage 0 holds only the embedding and the
// last chunk of the last stage only the loss; chunks in order k = c*pp + s tile [0, 126).
// pp x vp past an int's range (a mutated CSV row, libFuzzer/UBSan: 1519362 x 4096) is compared
// in 64 bits: 6.2e9 chunks neither divide 126 nor 128 layer slots, so no slots are added.
TEST(Layout, PipelineSplitOfAHugeChunkCountStaysUnchanged) {
  Layout l = make(8, 16, 2048);
  l.pp = 1519362;
  l.vp = 4096;
  l = with_recipe_pipeline_split(l, 126);
  EXPECT_FALSE(l.embedding_slot);
  EXPECT_FALSE(l.loss_slot);
}

TEST(Layout, EmbeddingAndLossArePipelineSlots) {
  Layout l = make(8, 16, 2048);
  l.vp = 8;
  EXPECT_FALSE(l.embedding_slot);
  l = with_recipe_pipeline_split(l, 126);
  EXPECT_TRUE(l.embedding_slot);
  EXPECT_TRUE(l.loss_slot);
  int next = 0;
  for (int c = 0; c < 8; ++c)
    for (int s = 0; s < 16; ++s) {
      const LayerRange r = chunk_layers(126, l, s, c);
      EXPECT_EQ(r.first, next) << "stage " << s << " chunk " << c;
      const bool embedding_only = s == 0 && c == 0, loss_only = s == 15 && c == 7;
      EXPECT_EQ(r.count(), embedding_only || loss_only ? 0 : 1) << "stage " << s << " chunk " << c;
      next = r.last;
    }
  EXPECT_EQ(next, 126);
  // Recipes turn the slots on only where they make an uneven split even.
  EXPECT_FALSE(with_recipe_pipeline_split(make(8, 16, 2048), 128).embedding_slot);  // 128 / 16 already even
  EXPECT_FALSE(with_recipe_pipeline_split(make(8, 7, 56), 126).embedding_slot);     // 126 / 7 already even
  // BLOOM 176B (Megatron-DeepSpeed, --pp-partition-method type:transformer|embedding): 70 + 2 over pp 12.
  const Layout bloom = with_recipe_pipeline_split(make(4, 12, 384), 70);
  EXPECT_TRUE(bloom.embedding_slot);
  EXPECT_EQ(chunk_layers(70, bloom, 0, 0).count(), 5);   // embedding + 5 layers
  EXPECT_EQ(chunk_layers(70, bloom, 5, 0).count(), 6);   // 6 layers
  EXPECT_EQ(chunk_layers(70, bloom, 11, 0).count(), 5);  // 5 layers + loss
}

// decoder_first/last_pipeline_num_layers: the first and last stages take their counts, the middle
// stages share the rest evenly, each stage's layers split over its vp chunks. 30 layers, pp 4,
// first 6, last 6: middle stages 9 each; vp 3: chunks of 2 on the first stage, 3 in the middle.
TEST(Layout, FirstAndLastStageLayerCounts) {
  Layout l = make(1, 4, 4);
  l.vp = 3;
  l.first_stage_layers = 6;
  l.last_stage_layers = 6;
  ASSERT_FALSE(why_invalid(model(), l, 4, 4096).has_value());
  int next = 0;
  for (int c = 0; c < 3; ++c)
    for (int s = 0; s < 4; ++s) {
      const LayerRange r = chunk_layers(30, l, s, c);
      EXPECT_EQ(r.first, next);
      EXPECT_EQ(r.count(), s == 0 || s == 3 ? 2 : 3) << "stage " << s << " chunk " << c;
      next = r.last;
    }
  EXPECT_EQ(next, 30);
  // Only the first given: the three other stages share 30 - 3 = 27.
  l.vp = 1;
  l.last_stage_layers = 0;
  l.first_stage_layers = 3;
  EXPECT_EQ(chunk_layers(30, l, 0, 0).count(), 3);
  EXPECT_EQ(chunk_layers(30, l, 1, 0).count(), 9);
  EXPECT_EQ(chunk_layers(30, l, 3, 0), (LayerRange{21, 30}));
}

// nanotron's compute-balanced split (models/base.py build_model) for its 80B benchmark model (80
// layers, h 8192, f 28672, V 131072): a layer costs 4 h^2 + 3 f h, the head V h = 1.103 layers, and
// rank k keeps blocks until the running cost first exceeds (k + 1)/pp of the total, the crossing
// block included. pp 16: 6 layers on the first stage, 5 on the next 13, 6, then 3 and the head
// (what nanotron's loop assigns; an even split gives 5 each). pp 32: 3, 3, 2, 3, 2, ... on the first
// stages. Refused with interleaving, which nanotron does not run.
TEST(Layout, ComputeBalancedSplitAsNanotron) {
  workload::ModelSpec m = model();
  m.num_layers = 80;
  m.hidden = 8192;
  m.ffn_hidden = 28672;
  m.num_heads = 64;
  m.num_kv_heads = 64;
  m.vocab = 131072;
  Layout l = make(4, 16, 64);
  l.balanced_head_layers = compute_balanced_head_layers(m);
  EXPECT_NEAR(l.balanced_head_layers, 131072.0 / (4.0 * 8192 + 3.0 * 28672), 1e-12);
  ASSERT_FALSE(why_invalid(m, l, 64, 4096).has_value());
  EXPECT_EQ(stage_layer_counts(80, l), (std::vector<int>{6, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 3}));
  l = make(4, 32, 128);
  l.balanced_head_layers = compute_balanced_head_layers(m);
  EXPECT_EQ(chunk_layers(80, l, 0, 0).count(), 3);
  EXPECT_EQ(chunk_layers(80, l, 1, 0).count(), 3);
  EXPECT_EQ(chunk_layers(80, l, 2, 0).count(), 2);
  EXPECT_EQ(chunk_layers(80, l, 31, 0).count(), 1);
  l.vp = 2;
  const auto why = why_invalid(m, l, 128, 4096);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("virtual stages"), std::string::npos) << *why;
}

// DeepSpeed's partition_balanced over unit weights (Layout::greedy_split): B = ceil(slots / pp)
// slots per stage in order, the last stage the rest. 78 layers over 12 stages: 7 on each of the
// first 11 and 1 on the last (BigScience tr11 chronicles: "78/12=6.5 - so the last stage has 1
// block, while the rest have 7"); 70 layers + the 2 tied-embedding slots ('type:transformer|embedding')
// over 12: 6 slots each, 5 layers on the first and the last stage. Refused where a stage would hold
// no transformer layer (70 + 2 over 16: B = 5 fills 15 stages with 75 > 72 slots), and with vp.
TEST(Layout, GreedySplitAsDeepSpeed) {
  workload::ModelSpec m = model();
  m.num_layers = 78;
  m.num_heads = 64;
  m.num_kv_heads = 64;
  Layout l = make(4, 12, 96);
  l.greedy_split = true;
  ASSERT_FALSE(why_invalid(m, l, 96, 2048).has_value());
  EXPECT_EQ(stage_layer_counts(78, l), (std::vector<int>{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 1}));
  m.num_layers = 70;
  l.embedding_slot = l.loss_slot = true;
  EXPECT_EQ(stage_layer_counts(70, l), (std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5}));
  Layout deep = make(4, 16, 128);
  deep.greedy_split = true;
  deep.embedding_slot = deep.loss_slot = true;
  const auto why = why_invalid(m, deep, 128, 2048);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("leaves stage 15 no transformer layer"), std::string::npos) << *why;
  l.vp = 2;
  const auto interleaved = why_invalid(m, l, 96, 2048);
  ASSERT_TRUE(interleaved.has_value());
  EXPECT_NE(interleaved->find("no virtual stages"), std::string::npos) << *interleaved;
}

// Refused only what no framework runs, saying why: counts with slots (Megatron-Core raises), counts
// that exceed the layers, and more chunks than slots (with the hint that the slots add two).
TEST(Layout, PipelineSplitRefusalsSayWhy) {
  Layout both = make(1, 4, 4);
  both.first_stage_layers = 4;
  both.embedding_slot = true;
  EXPECT_NE(why_invalid(model(), both, 4, 4096)->find("Megatron-Core refuses"), std::string::npos);
  Layout over = make(1, 2, 2);
  over.first_stage_layers = 20;
  over.last_stage_layers = 20;
  EXPECT_NE(why_invalid(model(), over, 2, 4096)->find("take 40 of the 32 layers"), std::string::npos);
  Layout chunks = make(1, 17, 17);
  chunks.vp = 2;  // 34 chunks for 32 layers: the slots make it 34
  EXPECT_NE(why_invalid(model(), chunks, 17, 4096)->find("gives two more"), std::string::npos);
  EXPECT_FALSE(why_invalid(model(), with_recipe_pipeline_split(chunks, 32), 17, 4096).has_value());
}

// One micro-batch per pipeline stage (torchtitan's default): the rank's batch global / dp over
// pp x vp; 0 without pipelining or when it does not divide. 8 GPUs at pp 4 give dp 2, so 64
// sequences are 32 per rank: 8 per micro-batch with vp 1, 4 with vp 2.
TEST(Layout, MicroBatchPerStageSplitsTheRankBatch) {
  Layout l = make(1, 4, 8);
  l.global_batch = 64;
  EXPECT_EQ(micro_batch_per_stage(l), 8);
  l.vp = 2;
  EXPECT_EQ(micro_batch_per_stage(l), 4);
  l.global_batch = 60;  // 30 per rank over 8 chunks
  EXPECT_EQ(micro_batch_per_stage(l), 0);
  Layout flat = make(1, 1, 8);
  EXPECT_EQ(micro_batch_per_stage(flat), 0);
}

// Mixed-precision Adam: ZeRO-1 keeps 2 B weights + 4 B gradients per parameter and shards the
// 12 B optimizer states over dp; ZeRO-3 also shards weights and gradients.
TEST(Memory, ShardingDividesStatesByDp) {
  const auto one = estimate_memory(model(), make(1, 1, 1), 4096);
  const auto dist = estimate_memory(model(), make(1, 1, 8), 4096);
  const auto fsdp = estimate_memory(model(), make(1, 1, 8, Sharding::Zero3), 4096);
  const double p = one.params_on_gpu;
  EXPECT_NEAR(one.weights.value(), 2.0 * p, 1.0);
  EXPECT_NEAR(one.optimizer.value(), 12.0 * p, 1.0);
  EXPECT_NEAR(dist.optimizer.value(), 12.0 * p / 8.0, 1.0);
  EXPECT_NEAR(dist.gradients.value(), 4.0 * p, 1.0);
  EXPECT_NEAR(fsdp.weights.value(), 2.0 * p / 8.0, 1.0);
  EXPECT_NEAR(fsdp.gradients.value(), 4.0 * p / 8.0, 1.0);
}

// Full recompute keeps only each layer's input (2 bytes x tokens x hidden / tp with SP) and is
// far smaller than keeping everything.
TEST(Memory, RecomputeShrinksActivations) {
  Layout none = make(1, 1, 8);
  none.recompute = Recompute::None;
  Layout full = none;
  full.recompute = Recompute::Full;
  const auto a = estimate_memory(model(), none, 4096);
  const auto b = estimate_memory(model(), full, 4096);
  EXPECT_LT(b.activations.value(), a.activations.value() / 5.0);
  EXPECT_GE(b.activations.value(), 32 * 2.0 * 4096 * 4096);
}

// Pipeline stage 0 of 1F1B holds pp micro-batches of its layers: the same per-GPU activation
// total as pp = 1 with all layers (pp x layers/pp).
TEST(Memory, PipelineInFlightMicroBatches) {
  Layout flat = make(1, 1, 8);
  flat.recompute = Recompute::Selective;
  Layout piped = make(1, 4, 8);
  piped.recompute = Recompute::Selective;
  const auto a = estimate_memory(model(), flat, 4096);
  const auto b = estimate_memory(model(), piped, 4096);
  EXPECT_NEAR(b.activations.value(), a.activations.value(), 0.01 * a.activations.value());
}

// DTensor TP (torchtitan) keeps the all-gathered inputs of the QKV and FC1 GEMMs: per token 2 x 2h
// bytes (16-bit) whole on each of the tp ranks instead of 1/tp of them, (1 - 1/tp) x 4h more. On
// the last stage the LM head's gathered input adds (1 - 1/tp) x 2h more per token.
TEST(Memory, GatheredTensorParallelInputsAreKeptWhole) {
  const workload::ShardContext ctx{1, 4096, 8, 1, 1, 1, true};
  workload::ActivationOptions gathered;
  gathered.gathered_tp_inputs = true;
  const double h = 4096.0, tokens = 4096.0;
  const auto split = workload::layer_activation_bytes(model(), 0, ctx);
  const auto whole = workload::layer_activation_bytes(model(), 0, ctx, gathered);
  EXPECT_NEAR(whole.selective - split.selective, tokens * 4.0 * h * (1.0 - 1.0 / 8.0), 1.0);
  EXPECT_NEAR(whole.none - split.none, tokens * 4.0 * h * (1.0 - 1.0 / 8.0), 1.0);
  EXPECT_DOUBLE_EQ(whole.full, split.full);  // full recompute keeps the sequence-split layer input

  Layout l = make(8, 1, 64);
  l.recompute = Recompute::Selective;
  MemoryOptions dtensor;
  dtensor.gathered_tp_inputs = true;
  const auto a = estimate_memory(model(), l, 4096, MemoryOptions{});
  const auto b = estimate_memory(model(), l, 4096, dtensor);
  const double per_layer = tokens * 4.0 * h * (1.0 - 1.0 / 8.0);
  EXPECT_NEAR(b.activations.value() - a.activations.value(), 32 * per_layer, 32.0);
  EXPECT_NEAR(b.buffers.value() - a.buffers.value(), tokens * 2.0 * h * (1.0 - 1.0 / 8.0), 1.0);
}

// A reading of the first stages only (MemoryOptions::stages_read = 1, the first node's GPUs under
// pipeline-outermost rank order): stage 0's footprint, with pp = 4 micro-batches in flight under 1F1B.
// The job's peak (stages_read = 0) is the larger of the first and the last stage, so never below it.
TEST(Memory, StagesReadLimitsThePeakToTheFirstStages) {
  Layout l = make(1, 4, 8);
  l.recompute = Recompute::Selective;
  MemoryOptions first;
  first.stages_read = 1;
  const auto a = estimate_memory(model(), l, 4096, first);
  const auto peak = estimate_memory(model(), l, 4096, MemoryOptions{});
  EXPECT_EQ(a.peak_stage, 0);
  EXPECT_DOUBLE_EQ(a.in_flight, 4.0);
  EXPECT_GE(peak.total().value(), a.total().value());
  // Reading more stages than the pipeline has is the whole pipeline.
  MemoryOptions all;
  all.stages_read = 99;
  EXPECT_DOUBLE_EQ(estimate_memory(model(), l, 4096, all).total().value(), peak.total().value());
}

// The input embedding's backward, the last of a micro-batch's backward on stage 0, allocates the
// table's gradient anew (16-bit, V h / tp) before adding it into the accumulated one, when that
// micro-batch's activations are gone: the stage's peak is max(n a + F, (n - 1) a + 2 V h / tp) for n
// micro-batches in flight of a bytes each and F the recomputed layer's working set (full recompute).
// Here n = 4, V h = 128256 x 4096 (1.05 GB in 16 bits) and a = 8 layer inputs of 4096 x 4096 x 2 B
// (268 MB): the gradient wins. No such copy without gradient accumulation when the gradient is the
// 16-bit .grad itself (one micro-batch: AccumulateGrad keeps the new tensor).
TEST(Memory, EmbeddingGradientIsAllocatedBesideTheOtherMicroBatches) {
  Layout l = make(1, 4, 8);
  l.recompute = Recompute::Full;
  MemoryOptions none, fresh;  // stage 0 only: the last stage's logits are larger still
  none.stages_read = fresh.stages_read = 1;
  none.embedding_grad_bytes = 0.0;
  const auto a = estimate_memory(model(), l, 4096, none);
  const auto b = estimate_memory(model(), l, 4096, fresh);
  ASSERT_EQ(a.peak_stage, 0);
  ASSERT_EQ(b.peak_stage, 0);
  const double table = 128256.0 * 4096.0;
  const workload::ShardContext ctx{1, 4096, 1, 1, 1, 1, false};
  const double working = workload::layer_activation_bytes(model(), 0, ctx).none;
  EXPECT_NEAR(b.embedding_grad.value(), 2.0 * table, 1.0);
  EXPECT_NEAR(b.gradients.value() - a.gradients.value(), 2.0 * table, 1.0);
  EXPECT_NEAR(b.activations.value(), 3.0 / 4.0 * (a.activations.value() - working), 1.0);
  EXPECT_GT(b.total().value(), a.total().value());
  EXPECT_DOUBLE_EQ(b.in_flight, 3.0);  // the micro-batches held beside it
  // One micro-batch per step and a 16-bit .grad: no second gradient to add into.
  Layout once = make(1, 1, 8);
  once.global_batch = 8;
  MemoryOptions grads16;
  grads16.state = StateBytes{2.0, 2.0, 12.0, 0.0, 4.0};
  EXPECT_DOUBLE_EQ(estimate_memory(model(), once, 4096, grads16).embedding_grad.value(), 0.0);
  // A frozen embedding (LoRA's base: no gradients) has none either.
  MemoryOptions frozen = fresh;
  frozen.state = StateBytes{2.0, 0.0, 0.0, 0.0};
  EXPECT_DOUBLE_EQ(estimate_memory(model(), l, 4096, frozen).embedding_grad.value(), 0.0);
  // On a single stage the head's and the loss's tensors (the logits) are freed before the
  // embedding's backward too: at 1024 tokens the gradient (1.05 GB) is less than the logits'
  // 10 B x 1024 x 128256 (1.31 GB) alone, so it is not the peak; at 64 tokens it is, and only the
  // gradient bucket (256 MiB) is left of the buffers beside it.
  Layout flat = make(1, 1, 8);
  flat.recompute = Recompute::Full;
  EXPECT_DOUBLE_EQ(estimate_memory(model(), flat, 1024, fresh).embedding_grad.value(), 0.0);
  const auto small = estimate_memory(model(), flat, 64, fresh);
  EXPECT_NEAR(small.embedding_grad.value(), 2.0 * table, 1.0);
  EXPECT_DOUBLE_EQ(small.buffers.value(), fresh.grad_bucket_bytes);
}

// Gradients that backward allocates (MemoryOptions::lazy_gradients: zero_grad(set_to_none=True),
// no gradient buffer) with one micro-batch per step: none but the LM head's (2 B x V h, which the
// head's backward creates first) exist at the start of backward, when the activations and the
// logits peak, so above the weights and optimizer states the peak is max(activations + buffers +
// head gradient, gradients), not their sum. Pure bf16 Adam (2 + 2 + 4 B per parameter) on one GPU:
// at 4096 tokens the activations win and the peak holds only the head's gradient; at 64 the
// gradients win and the peak holds no activation ("end of backward").
TEST(Memory, LazyGradientsCompeteWithTheActivations) {
  Layout one = make(1, 1, 1, Sharding::None);
  one.global_batch = 1;
  one.recompute = Recompute::None;
  MemoryOptions eager, lazy;
  eager.state = lazy.state = StateBytes{2.0, 2.0, 4.0, 0.0};
  lazy.lazy_gradients = true;
  const auto a = estimate_memory(model(), one, 4096, eager);
  const auto b = estimate_memory(model(), one, 4096, lazy);
  ASSERT_GT(a.activations.value() + a.buffers.value(), a.gradients.value());
  const double head = 2.0 * 128256.0 * 4096.0;
  EXPECT_NEAR(b.gradients.value(), head, 1.0);
  EXPECT_TRUE(b.lazy_gradients_pending);
  EXPECT_NEAR(a.allocated().value() - b.allocated().value(), a.gradients.value() - head, 1.0);
  const auto c = estimate_memory(model(), one, 64, lazy);
  EXPECT_NEAR(c.gradients.value(), a.gradients.value(), 1.0);
  EXPECT_DOUBLE_EQ(c.activations.value(), 0.0);
  EXPECT_TRUE(c.optimizer_step_peak);
  EXPECT_DOUBLE_EQ(c.step_grad.value(), 0.0);  // no transient: the end of backward
  // With gradient accumulation they persist between micro-batches: no change.
  Layout accum = one;
  accum.global_batch = 4;
  EXPECT_DOUBLE_EQ(estimate_memory(model(), accum, 4096, lazy).total().value(),
                   estimate_memory(model(), accum, 4096, eager).total().value());
}

// With the embedding and the loss as pipeline slots a middle stage can hold the most layers, and
// every stage is evaluated: 32 layers + 2 slots over 4 stages (slot ends 8, 17, 25, 34) give 7, 9, 8
// and 8 layers; with a 32k vocabulary and no recompute stage 1 (9 layers, 3 micro-batches in flight)
// outweighs stage 0 (7 layers and the embedding, 4 in flight).
TEST(Memory, PipelineSlotsEvaluateTheMiddleStages) {
  workload::ModelSpec m = model();
  m.vocab = 32000;
  Layout l = make(1, 4, 32);
  l.recompute = Recompute::None;
  l.embedding_slot = l.loss_slot = true;
  ASSERT_EQ(chunk_layers(32, l, 1, 0).count(), 9);
  const auto peak = estimate_memory(m, l, 4096, MemoryOptions{});
  EXPECT_EQ(peak.peak_stage, 1);
  EXPECT_DOUBLE_EQ(peak.in_flight, 3.0);
  MemoryOptions first;
  first.stages_read = 1;
  EXPECT_GT(peak.total().value(), estimate_memory(m, l, 4096, first).total().value());
}

// One more routed copy (top_k 2 -> 3) keeps, per token: the permuted input (FC1's GEMM input,
// 2h in 16 bits), the h-wide 16-bit tensor the routing-probability product keeps for its backward
// (2h), the two SwiGLU FC1 outputs (2 x 2 x ffn) and FC2's GEMM input (2 ffn).
TEST(Memory, MoeActivationsPerRoutedCopy) {
  workload::ModelSpec m = model();
  m.moe = {.num_experts = 8, .top_k = 2, .expert_ffn = 1024};
  const workload::ShardContext ctx{.micro_batch = 1, .seq_len = 4096, .tp = 1};
  const double two = workload::layer_activation_bytes(m, 0, ctx).selective;
  m.moe.top_k = 3;
  const double three = workload::layer_activation_bytes(m, 0, ctx).selective;
  EXPECT_DOUBLE_EQ(three - two, 4096.0 * (2.0 * 4096 + 2.0 * 4096 + 2.0 * 2.0 * 1024 + 2.0 * 1024));
}

// MLA (DeepSeek-V3 dimensions, no TP): Q and K of heads x (nope + rope) = 192, V and the output of
// heads x 128, in 16 bits; the latents (q_lora 1536 + kv_lora 512) as up-projection GEMM inputs
// and, with the 64-wide RoPE key, as RMSNorm inputs; the norm/residual terms (4h + 2 x 2h) and a
// SwiGLU MLP (3 x 2 x ffn) as for any layer.
TEST(Memory, MlaActivations) {
  workload::ModelSpec m = model();
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.ffn_hidden = 1024;
  m.mla = workload::MlaSpec{
      .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64, .v_head_dim = 128};
  const workload::ShardContext ctx{.micro_batch = 1, .seq_len = 1024, .tp = 1};
  const double h = 4096;
  const double per_token = 4 * h + 2 * 2 * h + 2 * (1536 + 512 + 64)    // norms, residuals, latent norms
                           + 2 * 128 * (2 * 192 + 128) + 2 * 128 * 128  // Q, K, V, attention output
                           + 2 * (1536 + 512)                           // latents into the up-projections
                           + 2 * 2 * 1024 + 2 * 1024;                   // SwiGLU FC1 outputs, FC2 input
  EXPECT_DOUBLE_EQ(workload::layer_activation_bytes(m, 0, ctx).selective, 1024 * per_token);
}

// A fused cross-entropy (Transformer Engine, NeMo/Megatron-Bridge recipes) keeps the 16-bit logits
// only (2 B each, the gradient written over them) instead of 10 B: 8 x tokens x vocab / tp less on
// the last stage.
TEST(Memory, FusedCrossEntropyKeepsSixteenBitLogits) {
  const Layout l = make(2, 1, 8);
  MemoryOptions unfused;
  MemoryOptions fused;
  fused.fused_cross_entropy = true;
  const double diff = estimate_memory(model(), l, 4096, unfused).buffers.value() -
                      estimate_memory(model(), l, 4096, fused).buffers.value();
  EXPECT_DOUBLE_EQ(diff, 8.0 * 4096 * 128256 / 2);
  EXPECT_TRUE(stack_memory_options("megatron").fused_cross_entropy);
  EXPECT_FALSE(stack_memory_options("torchtitan").fused_cross_entropy);
}

// DeepSpeed's pipeline engine keeps each in-flight micro-batch's stage output (16-bit b s h, split
// by SP) until its backward: on stage 0 of pp 4 (1F1B), 4 x 4096 tokens x 4096 x 2 B / tp 2 more.
TEST(Memory, DeepSpeedPipelineKeepsStageOutputs) {
  Layout l = make(2, 4, 64);
  l.recompute = Recompute::Full;
  MemoryOptions megatron;
  MemoryOptions deepspeed;
  deepspeed.keeps_pipeline_outputs = true;
  workload::ModelSpec m = model();
  m.vocab = 1000;  // small logits: stage 0 (embedding, most micro-batches in flight) peaks
  const auto a = estimate_memory(m, l, 4096, megatron);
  const auto b = estimate_memory(m, l, 4096, deepspeed);
  ASSERT_EQ(b.peak_stage, 0);
  EXPECT_DOUBLE_EQ(b.activations.value() - a.activations.value(), 4.0 * 4096 * 4096 * 2.0 / 2);
}

// recompute_modules free what each repeated submodule kept: "mlp" frees a dense layer's FFN
// intermediates (SwiGLU: 2 x 2 x ffn + 2 x ffn bytes per token), "core_attn" the attention core
// (selective's default); never below the layer input (full).
TEST(Memory, RecomputeModulesFreeTheirTensors) {
  Layout none = make(1, 1, 8);
  none.recompute = Recompute::None;
  Layout mlp = none;
  mlp.recompute = Recompute::Selective;
  mlp.recompute_modules = module_bit(RecomputeModule::Mlp);
  const double tokens = 4096.0;
  const double freed = 32 * tokens * (2.0 * 2.0 * 14336 + 2.0 * 14336);  // 32 layers, no FP8 inputs
  const auto a = estimate_memory(model(), none, 4096);
  const auto b = estimate_memory(model(), mlp, 4096);
  EXPECT_NEAR(a.activations.value() - b.activations.value(), freed, 1e-6 * freed);
  Layout core = mlp;
  core.recompute_modules = module_bit(RecomputeModule::CoreAttn);
  Layout selective = mlp;
  selective.recompute_modules = 0;
  EXPECT_DOUBLE_EQ(estimate_memory(model(), core, 4096).activations.value(),
                   estimate_memory(model(), selective, 4096).activations.value());
  EXPECT_EQ(kRecomputeModuleWords.parse("moe_act"), RecomputeModule::MoeAct);
}

// The distributed optimizer's fp32 copy of its 16-bit gradient shard (4 B / dp per parameter,
// Megatron-LM distrib_optimizer.md's "4 + 16/d" less the 12/d it keeps) exists only during the
// optimizer step, when the activations are freed: the peak of live tensors is
// states + max(activations + transient buffers, 4P/dp), not their sum. The allocator keeps the
// step's segment cached (reserved), so max_memory_reserved still counts it.
TEST(Memory, OptimizerStepCopyCompetesWithActivations) {
  MemoryOptions o = stack_memory_options("megatron");
  EXPECT_DOUBLE_EQ(o.state.optimizer, 12.0);
  EXPECT_DOUBLE_EQ(o.state.step_grad, 4.0);
  Layout big = make(1, 1, 1);  // dp 1: the step copy (4 B x P) is larger than 1 sequence's activations
  big.recompute = Recompute::Full;
  const auto m = estimate_memory(model(), big, 4096, o);
  const double p = m.params_on_gpu;
  ASSERT_TRUE(m.optimizer_step_peak);
  EXPECT_NEAR(m.optimizer.value(), 16.0 * p, 1.0);
  EXPECT_DOUBLE_EQ(m.activations.value(), 0.0);
  // What the activations were at the backward's peak is kept beside the 0 (issue 42: an
  // out-of-memory row read "0.00 GiB of activations"): the same as the backward's peak of the
  // same layout when the step copy is made small enough not to win.
  MemoryOptions no_copy = o;
  no_copy.state.step_grad = 0.0;
  const auto b = estimate_memory(model(), big, 4096, no_copy);
  ASSERT_FALSE(b.optimizer_step_peak);
  EXPECT_GT(m.backward_activations.value(), 0.0);
  EXPECT_DOUBLE_EQ(m.backward_activations.value(), b.activations.value());
  EXPECT_DOUBLE_EQ(b.backward_activations.value(), b.activations.value());
  Layout small = make(1, 1, 64);  // dp 64: the step copy is 4P/64, the backward peaks
  small.recompute = Recompute::None;
  const auto n = estimate_memory(model(), small, 4096, o);
  ASSERT_FALSE(n.optimizer_step_peak);
  EXPECT_NEAR(n.optimizer.value(), 12.0 * p / 64, 1.0);
  EXPECT_NEAR(n.cache.value() - o.cache_reserve * (n.allocated().value() + 4.0 * p / 64), 4.0 * p / 64, 1.0);
}

// DeepSpeed's pipeline engine with bf16 all-reduces BF16_Optimizer's unsharded fp32 gradient groups
// through a bf16 copy of them (2 B per parameter) after the last backward, when the activations are
// freed: gradients peak at 6 + 2 = 8 B per parameter instead of adding 2 B to the backward's peak.
TEST(Memory, GradientReductionCastCopyCompetesWithActivations) {
  MemoryOptions o;
  o.state = StateBytes{2.0, 6.0, 12.0, 0.0, 0.0, 2.0};
  Layout l = make(1, 1, 64);
  l.recompute = Recompute::Full;  // 1 GiB of layer inputs: the copy (2 B x 8 B parameters) peaks
  const auto with = estimate_memory(model(), l, 4096, o);
  const double p = with.params_on_gpu;
  ASSERT_TRUE(with.optimizer_step_peak);
  EXPECT_NEAR(with.reduce_copy.value(), 2.0 * p, 1.0);
  EXPECT_NEAR(with.gradients.value(), 8.0 * p, 1.0);
  EXPECT_DOUBLE_EQ(with.activations.value(), 0.0);
  o.state.reduce_copy = 0.0;
  const auto without = estimate_memory(model(), l, 4096, o);
  EXPECT_FALSE(without.optimizer_step_peak);
  EXPECT_NEAR(without.gradients.value(), 6.0 * p, 1.0);
}

// Tied embeddings with pp > 1: the last stage keeps its own vocab x hidden copy for the output
// layer (Megatron-Core setup_embeddings_and_output_layer), so it holds as many parameters as with
// untied embeddings; with pp 1 the one matrix serves both, vocab x hidden fewer.
TEST(Memory, TiedEmbeddingsKeepACopyOnTheLastStage) {
  Layout l = make(1, 2, 2);
  l.first_stage_layers = 2;  // the last stage (30 layers and the head) peaks
  l.last_stage_layers = 30;
  workload::ModelSpec tied = model();
  tied.tied_embeddings = true;
  const auto t = estimate_memory(tied, l, 4096);
  const auto u = estimate_memory(model(), l, 4096);
  ASSERT_EQ(t.peak_stage, 1);
  ASSERT_EQ(u.peak_stage, 1);
  EXPECT_NEAR(t.params_on_gpu, u.params_on_gpu, 1.0);
  const Layout one = make(1, 1, 1);
  EXPECT_NEAR(estimate_memory(model(), one, 4096).params_on_gpu - estimate_memory(tied, one, 4096).params_on_gpu,
              4096.0 * 128256, 1.0);
}

// FSDP under pipeline parallelism keeps the stage's 16-bit parameters gathered between micro-batches
// and accumulates its unsharded gradients in the reduce dtype (FSDP2's
// FSDPParam.to_accumulated_grad_if_needed upcasts them while gradient sync is off): 2 + 4 B per
// stage parameter with the default fp32 reduce, 2 + 2 when gradients are reduced in 16 bits.
TEST(Memory, FsdpUnderPipelineAccumulatesUnshardedGradientsInTheReduceType) {
  Layout fp32 = make(1, 2, 16, Sharding::Zero3);
  Layout bf16 = fp32;
  bf16.bf16_grad_reduce = true;
  const auto a = estimate_memory(model(), fp32, 4096);
  const auto b = estimate_memory(model(), bf16, 4096);
  EXPECT_EQ(a.peak_stage, b.peak_stage);
  EXPECT_NEAR(a.buffers.value() - b.buffers.value(), 2.0 * a.params_on_gpu, 1.0);
}

// torchtitan's ChunkedLossWrapper (RecipeSwitches::loss_chunks N) runs each chunk's head, loss and
// backward before the next: an eager loss's 10 B per logit for one chunk of tokens / N only, plus
// the fp32 [tokens, h] buffer the chunks' hidden-state gradients are assembled in (GradAccumulator,
// dtype=torch.float32).
TEST(Memory, ChunkedLossKeepsOneChunksLogits) {
  const Layout whole = make(2, 1, 8);
  Layout chunked = whole;
  chunked.recipe.loss_chunks = 8;
  const double tokens = 4096, vocab = 128256, hidden = 4096, tp = 2;
  const double diff =
      estimate_memory(model(), whole, 4096).buffers.value() - estimate_memory(model(), chunked, 4096).buffers.value();
  EXPECT_DOUBLE_EQ(diff, 10.0 * tokens * vocab / tp * (1.0 - 1.0 / 8.0) - 4.0 * tokens * hidden);
}

// llm-foundry's MPT loss (loss_fn 'fused_crossentropy', flash-attn's xentropy kernel,
// inplace_backward=False): 16-bit logits plus a 16-bit gradient, 4 B per logit instead of 10.
TEST(Memory, LlmFoundryFusedLossKeepsTwoSixteenBitCopies) {
  const Layout l = make(1, 1, 8, Sharding::Zero3);
  const MemoryOptions foundry = stack_memory_options("llm-foundry");
  EXPECT_TRUE(foundry.fused_cross_entropy);
  EXPECT_FALSE(foundry.fused_loss_in_place);
  MemoryOptions unfused = foundry;
  unfused.fused_cross_entropy = false;
  const double diff = estimate_memory(model(), l, 4096, unfused).buffers.value() -
                      estimate_memory(model(), l, 4096, foundry).buffers.value();
  EXPECT_DOUBLE_EQ(diff, (10.0 - 4.0) * 4096 * 128256);
}

// Activation offloading (Megatron-Core cpu_offloading_num_layers): N of the stage's L layers move
// their activations to host memory; one layer's copy in transit stays on the GPU. With pp 1:
// activations = (L - N + 1) / L of all, host = N / L of them; allowed with pp 1 only.
TEST(Memory, ActivationOffloadMovesLayersToHost) {
  Layout l = make(1, 1, 8);
  l.recompute = Recompute::None;
  const auto all = estimate_memory(model(), l, 4096);
  l.offload_layers = 24;  // of 32
  const auto off = estimate_memory(model(), l, 4096);
  const double per_layer = all.activations.value() / 32.0;
  EXPECT_NEAR(off.activations.value(), (32 - 24 + 1) * per_layer, 1e-6 * per_layer);
  EXPECT_NEAR(off.host.value(), 24 * per_layer, 1e-6 * per_layer);
  EXPECT_NEAR(off.offload_bytes_per_mb, 24 * per_layer, 1e-6 * per_layer);
  EXPECT_DOUBLE_EQ(off.offload_share, 24.0 / 32.0);
  Layout piped = make(1, 2, 8);
  piped.offload_layers = 4;
  EXPECT_NE(why_invalid(model(), piped, 8, 4096)->find("pp 1 only"), std::string::npos);
  l.offload_layers = 32;
  EXPECT_NE(why_invalid(model(), l, 8, 4096)->find("fewer than the model's layers"), std::string::npos);
}

// NCCL's buffers (src/init.cc defaults: Simple 4 MiB, LL128 4,915,200 B, LL 512 KiB per channel and
// connection): tp 8 x pp 4 x dp 2 holds three rings (tp, dp, world) of 16 channels and two
// pipeline peers of 2 p2p channels with a 4 MiB send and receive buffer each; an MoE layer's
// ep 8 adds 7 all-to-all peers and the expert-data-parallel ring. They are outside the caching
// allocator: in `context`, beside the CUDA context.
TEST(Memory, NcclBuffersPerCommunicator) {
  const double conn = 4194304.0 + 4915200.0 + 524288.0;
  const Layout l = make(8, 4, 64);
  EXPECT_DOUBLE_EQ(nccl_buffer_bytes(l, false), 3 * 16 * conn + 2 * 2 * 2 * 4194304.0);
  Layout e = make(1, 1, 64);  // dp 64, ep 8: expert-dp 8
  e.ep = 8;
  EXPECT_DOUBLE_EQ(nccl_buffer_bytes(e, true), 3 * 16 * conn + 7 * 2 * 2 * 4194304.0);
  EXPECT_DOUBLE_EQ(nccl_buffer_bytes(make(1, 1, 1), false), 0.0);
  const MemoryOptions o;
  const auto m = estimate_memory(model(), l, 4096, o);
  EXPECT_DOUBLE_EQ(m.nccl.value(), nccl_buffer_bytes(l, false));
  EXPECT_DOUBLE_EQ(m.context.value(), o.context_gib * 1024.0 * 1024 * 1024 + m.nccl.value());
}

// FP8 parameters (NeMo fp8_params): 1 B per weight and no FP8 cache; 16-bit optimizer states (Apex
// DistributedFusedAdam dtype bf16): master weights, m and v in 2 B each, 6 B, with no fp32 step copy.
TEST(Memory, Fp8ParametersAndSixteenBitOptimizerStates) {
  Layout l = make(1, 1, 1);
  l.precision = core::Precision::FP8;
  const MemoryOptions o = stack_memory_options("megatron");
  const auto base = estimate_memory(model(), l, 4096, o);
  const double p = base.params_on_gpu;
  EXPECT_NEAR(base.weights.value(), 3.0 * p, 1.0);  // bf16 weights + FP8 cache
  l.fp8_param_storage = true;
  l.bf16_optimizer_states = true;
  const auto m = estimate_memory(model(), l, 4096, o);
  EXPECT_NEAR(m.weights.value(), 1.0 * p, 1.0);
  EXPECT_FALSE(m.optimizer_step_peak);
  EXPECT_NEAR(m.optimizer.value(), 6.0 * p, 1.0);
  EXPECT_DOUBLE_EQ(m.step_grad.value(), 0.0);
}

// --optimizer-offload-fraction f: f of the optimizer states (and of the step's fp32 gradient copy)
// live in host memory.
TEST(Memory, OptimizerOffloadFractionMovesStatesToHost) {
  Layout l = make(1, 1, 8);
  const MemoryOptions o = stack_memory_options("megatron");
  const auto all = estimate_memory(model(), l, 4096, o);
  l.optimizer_offload_fraction = 0.25;
  const auto off = estimate_memory(model(), l, 4096, o);
  const double p = all.params_on_gpu;
  ASSERT_FALSE(off.optimizer_step_peak);
  EXPECT_NEAR(off.optimizer.value(), 0.75 * 12.0 * p / 8, 1.0);
  EXPECT_NEAR(off.host.value(), 0.25 * (12.0 + 4.0) * p / 8, 1.0);
}

// Padding to capacity (--moe-expert-capacity-factor c --moe-pad-expert-input-to-capacity): the
// routed copies' activations (the MoE block less its shared experts) and the dispatch buffers
// (2 x top_k x tokens x h x 2 B) scale by c.
TEST(Memory, MoeCapacityFactorScalesRoutedTensors) {
  workload::ModelSpec m = model();
  m.num_layers = 4;
  m.moe = {.num_experts = 8, .top_k = 2, .expert_ffn = 1024};
  Layout l = make(1, 1, 8);
  l.recompute = Recompute::None;
  const auto dropless = estimate_memory(m, l, 4096);
  l.moe_capacity_factor = 1.5;
  const auto padded = estimate_memory(m, l, 4096);
  const workload::ShardContext ctx{.micro_batch = 1, .seq_len = 4096, .tp = 1};
  const auto act = workload::layer_activation_bytes(m, 0, ctx);
  const double routed = act.modules.moe - act.modules.shared_experts;
  ASSERT_GT(routed, 0.0);
  EXPECT_NEAR(padded.activations.value() - dropless.activations.value(), 4 * 0.5 * routed, 1.0);
  EXPECT_NEAR(padded.buffers.value() - dropless.buffers.value(), 0.5 * 2.0 * 2 * 4096 * 4096 * 2.0, 1.0);
}

// CUDA graphs over the layers: one graph per layer per micro-batch of the step, each with static
// 16-bit input, output and their two gradients (4 x tokens x h x 2 B, sequence-split with SP).
TEST(Memory, CudaGraphsKeepStaticBuffersPerLayerAndMicroBatch) {
  Layout l = make(2, 1, 8);  // 32 layers, gbs 1024 / dp 4 = 256 micro-batches
  l.global_batch = 32;       // 8 micro-batches
  const auto plain = estimate_memory(model(), l, 4096);
  l.cuda_graphs = true;
  const auto graphed = estimate_memory(model(), l, 4096);
  const double expected = 32.0 * 8 * 4 * 4096 * 4096 * 2.0 / 2;
  EXPECT_DOUBLE_EQ(graphed.cuda_graphs.value(), expected);
  EXPECT_NEAR(graphed.buffers.value() - plain.buffers.value(), expected, 1.0);
}

// A trained MTP module (DeepSeek-V3 mtp_num_layers 1) on the last stage: one more block of the last
// layer's kind (its weights and activations), its 2h x h projection, and a second logits tensor.
TEST(Memory, MtpModuleOnTheLastStage) {
  const Layout l = make(1, 1, 8);
  MemoryOptions o;
  const auto base = estimate_memory(model(), l, 4096, o);
  o.mtp_layers = 1;
  const auto mtp = estimate_memory(model(), l, 4096, o);
  const workload::ShardContext ctx{.micro_batch = 1, .seq_len = 4096, .tp = 1};
  double layer = 0.0;
  for (const auto& op : workload::layer_operators(model(), 31, ctx)) layer += op.weights;
  EXPECT_NEAR(mtp.params_on_gpu - base.params_on_gpu, layer + 2.0 * 4096 * 4096, 1.0);
  EXPECT_NEAR(mtp.buffers.value() - base.buffers.value(), 4096.0 * 128256 * 10.0, 1.0);
  EXPECT_NEAR(mtp.activations.value() - base.activations.value(),
              workload::layer_activation_bytes(model(), 31, ctx).selective, 1.0);
}

}  // namespace
}  // namespace fmsim::parallelism
