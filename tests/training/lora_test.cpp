// LoRA and QLoRA in the training-step model: adapter targets, frozen-base storage and its
// dequantisation, and the QLoRA paper's memory fact.
#include <gtest/gtest.h>

#include "test_fixtures.hpp"
#include "training/step_model.hpp"

namespace fmsim::training {
namespace {

using testing::free_network;
using testing::test_calibration;
using testing::test_job;

parallelism::Layout lora_layout(std::int64_t gbs) {
  parallelism::Layout l;
  l.micro_batch = 1;
  l.global_batch = gbs;
  l.recompute = parallelism::Recompute::None;
  l.sharding = parallelism::Sharding::None;
  return l;
}

TrainingJob lora_job(int nodes, std::int64_t gbs) {
  auto j = test_job(nodes, lora_layout(gbs));
  j.task = Task::Lora;
  j.lora_rank = 16;
  return j;
}

// NF4 with double quantisation (Dettmers et al. 2023, §3): 4 bits + 8/64 + 32/(64·256) = 4.127
// bits per parameter.
TEST(Lora, Nf4StoresFourPointOneTwoSevenBitsPerWeight) {
  EXPECT_NEAR(lora_base_bytes(LoraBase::Nf4) * 8.0, 4.127, 0.001);
  EXPECT_EQ(lora_base_bytes(LoraBase::Fp8), 1.0);
  EXPECT_EQ(lora_base_bytes(LoraBase::Bf16), 2.0);
}

// Adapters sit only on the chosen modules: with q/k/v alone (PEFT q_proj,k_proj,v_proj; Megatron
// linear_qkv) each layer of the test model (h 4096, 32 heads and 8 KV heads of 128) has one
// r x (4096 + 6144) adapter pair: 16 layers x 16 x 10240 = 2,621,440 parameters, whose fp32
// gradients (4 bytes) are what DDP all-reduces.
TEST(Lora, TargetsChooseTheAdaptedModules) {
  const auto cal = test_calibration();
  auto j = lora_job(1, 8);
  j.lora_targets = static_cast<unsigned>(LoraModules::Qkv);
  const auto qkv = estimate_step(j, cal, free_network());
  EXPECT_DOUBLE_EQ(qkv.comm.dp.value(), 16.0 * 16.0 * 10240.0 * 4.0);
  j.lora_targets = static_cast<unsigned>(LoraModules::AllLinear);
  const auto all = estimate_step(j, cal, free_network());
  // All linear layers: + o_proj 16 x (4096 + 4096), FC1 16 x (4096 + 2 x 14336), FC2 16 x (14336 + 4096).
  EXPECT_DOUBLE_EQ(all.comm.dp.value(), 16.0 * 16.0 * (10240.0 + 8192.0 + 32768.0 + 18432.0) * 4.0);
  EXPECT_GT(all.breakdown.compute.value(), qkv.breakdown.compute.value());
}

// QLoRA dequantises each frozen NF4 weight for the forward GEMM and again for the backward's
// input-gradient GEMM: read 0.516 bytes, write 2, per weight and pass. On the test GPU (3 TB/s,
// memory efficiency 1, no launch cost) that adds 2 x W x 2.516 / 3e12 s per micro-batch, W the
// layers' GEMM weights (16 x 218,103,808); gbs 8 over dp 8 is one micro-batch.
TEST(Lora, QloraPaysTheDequantisationPasses) {
  const auto cal = test_calibration();
  auto j = lora_job(1, 8);
  const double bf16 = estimate_step(j, cal, free_network()).breakdown.compute.value();
  j.lora_base = LoraBase::Nf4;
  const auto q = estimate_step(j, cal, free_network());
  const double weights = 16.0 * (4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336);
  const double per_mb = 2.0 * weights * (lora_base_bytes(LoraBase::Nf4) + 2.0) / 3e12;
  EXPECT_NEAR(q.breakdown.compute.value() - bf16, per_mb, 1e-9);  // dp 8: one micro-batch per GPU
  // The frozen weights take 4.127 bits each instead of 16.
  j.lora_base = LoraBase::Bf16;
  const auto b = estimate_step(j, cal, free_network());
  EXPECT_LT(q.memory.weights.value(), 0.3 * b.memory.weights.value());
}

// QLoRA (Dettmers et al. 2023, abstract): "finetune a 65B parameter model on a single 48GB GPU".
// LLaMA-65B (Touvron et al. 2023, Table 2: 80 layers, hidden 8192, 64 heads, FFN 22016, vocab
// 32000), adapters of rank 64 on every linear layer (the paper's Guanaco setup), NF4 base,
// gradient checkpointing, one 512-token sequence per step: under 48 GiB; the 16-bit base alone
// (130 GB) does not fit.
TEST(Lora, QloraFitsA65BModelOnOne48GbGpu) {
  const auto cal = test_calibration();
  auto j = lora_job(1, 1);
  j.gpus = 1;
  j.layout = parallelism::with_dp(j.layout, 1);
  j.layout.recompute = parallelism::Recompute::Full;
  j.seq_len = 512;
  j.lora_rank = 64;
  j.lora_base = LoraBase::Nf4;
  auto& m = j.model;
  m.num_layers = 80;
  m.hidden = 8192;
  m.ffn_hidden = 22016;
  m.num_heads = 64;
  m.num_kv_heads = 64;
  m.head_dim = 128;
  m.vocab = 32000;
  const double gib = 1024.0 * 1024 * 1024;
  const auto q = estimate_step(j, cal, free_network());
  ASSERT_TRUE(q.feasible);
  EXPECT_LT(q.memory.total().value(), 48.0 * gib);
  j.lora_base = LoraBase::Bf16;
  EXPECT_GT(estimate_step(j, cal, free_network()).memory.total().value(), 48.0 * gib);
}

}  // namespace
}  // namespace fmsim::training
