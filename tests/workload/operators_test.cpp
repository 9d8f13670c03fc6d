// workload::layer_operators: each operator carries the block of the layer it was built in
// (Megatron-Core's recompute_modules: mla_up_proj, mlp, moe_act, shared_experts, moe, layernorm).
#include "workload/operators.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_models.hpp"

namespace fmsim::workload {
namespace {

// Every operator of a layer, name -> block.
std::map<std::string, OpBlock> blocks(const ModelSpec& m, int layer) {
  std::map<std::string, OpBlock> out;
  for (const auto& op : layer_operators(m, layer, ShardContext{})) out[std::string(op.name)] = op.block;
  return out;
}

// A dense layer: fc1, the activation and fc2 are the MLP; the norms/residuals pass is the
// layernorm module's; the attention projections are in no module (core_attn is the attention
// kernel, told by its kind).
TEST(LayerOperators, DenseLayerBlocks) {
  const auto b = blocks(testing::llama31_8b(), 0);
  EXPECT_EQ(b.at("fc1"), OpBlock::Mlp);
  EXPECT_EQ(b.at("activation"), OpBlock::Mlp);
  EXPECT_EQ(b.at("fc2"), OpBlock::Mlp);
  EXPECT_EQ(b.at("norms_residuals"), OpBlock::Norms);
  EXPECT_EQ(b.at("qkv_proj"), OpBlock::Other);
  EXPECT_EQ(b.at("o_proj"), OpBlock::Other);
  EXPECT_EQ(b.at("attention"), OpBlock::Other);
}

// DeepSeek-V3's MoE layer (after its 3 dense layers): MLA's up-projections are mla_up_proj; the
// router, expert GEMMs and permutation are moe; the experts' activation is moe_act; the shared
// expert is shared_experts; the down-projections stay outside any module.
TEST(LayerOperators, MlaMoeLayerBlocks) {
  const auto b = blocks(testing::deepseek_v3(), 3);
  EXPECT_EQ(b.at("q_up"), OpBlock::MlaUpProj);
  EXPECT_EQ(b.at("kv_up"), OpBlock::MlaUpProj);
  EXPECT_EQ(b.at("q_down"), OpBlock::Other);
  EXPECT_EQ(b.at("kv_down"), OpBlock::Other);
  EXPECT_EQ(b.at("router"), OpBlock::Moe);
  EXPECT_EQ(b.at("expert_fc1"), OpBlock::Moe);
  EXPECT_EQ(b.at("expert_fc2"), OpBlock::Moe);
  EXPECT_EQ(b.at("permute_unpermute"), OpBlock::Moe);
  EXPECT_EQ(b.at("expert_act"), OpBlock::MoeAct);
  EXPECT_EQ(b.at("shared_fc1"), OpBlock::SharedExperts);
  EXPECT_EQ(b.at("shared_act"), OpBlock::SharedExperts);
  EXPECT_EQ(b.at("shared_fc2"), OpBlock::SharedExperts);
  EXPECT_EQ(b.count("fc1"), 0u);
}

// The attention core's FLOPs are 2 * tokens * keys * heads * (qk + v) per GPU, keys the mean keys a
// query attends to: s/2 for causal attention over s tokens; with documents of d tokens packed into
// the sequence (block-diagonal causal mask), d/2. A document as long as the sequence is unpacked.
TEST(LayerOperators, PackedDocumentsBoundTheAttendedKeys) {
  const auto m = testing::llama31_8b();  // 32 heads of 128
  auto attention_flops = [&](std::int64_t document) {
    ShardContext ctx;
    ctx.seq_len = 4096;
    ctx.document_tokens = document;
    for (const auto& op : layer_operators(m, 0, ctx))
      if (op.kind == OpKind::Attention) return op.flops;
    return 0.0;
  };
  const double tokens = 4096.0, heads = 32.0, dims = 128.0 + 128.0;
  EXPECT_DOUBLE_EQ(attention_flops(0), 2.0 * tokens * (4096.0 / 2.0) * heads * dims);
  EXPECT_DOUBLE_EQ(attention_flops(250), 2.0 * tokens * (250.0 / 2.0) * heads * dims);
  EXPECT_DOUBLE_EQ(attention_flops(4096), attention_flops(0));
  EXPECT_DOUBLE_EQ(attention_flops(1 << 20), attention_flops(0));
}

// GPT-OSS's Megatron-Core code paths outside the fused kernels, as memory passes (bytes of one
// forward; the step model charges twice again backward):
// - YaRN RoPE unfused: 12 bytes per element of q and k (36 forward and backward),
// - the activation clamp: 12 bytes of the expert width per token-expert row,
// - FC2's bias per local expert: 24 bytes of hidden per row, in 2 kernels per expert plus 2.
// A model without YaRN, clamp or biases (Qwen3-style) has none of them.
TEST(LayerOperators, GptOssUnfusedPassesFollowItsConfig) {
  ShardContext ctx;
  ctx.seq_len = 4096;
  ctx.ep = 8;
  std::map<std::string, Operator> ops;
  for (const auto& op : layer_operators(testing::gpt_oss(36, 128), 0, ctx)) ops[std::string(op.name)] = op;
  const double tokens = 4096.0, rows = tokens * 4.0;  // top-4 copies, all on this EP rank's share
  EXPECT_DOUBLE_EQ(ops.at("rope_unfused").bytes, 12.0 * tokens * (64.0 + 8.0) * 64.0);
  EXPECT_DOUBLE_EQ(ops.at("expert_clamp").bytes, 12.0 * rows * 2880.0);
  EXPECT_EQ(ops.at("expert_clamp").block, OpBlock::MoeAct);
  EXPECT_DOUBLE_EQ(ops.at("expert_bias").bytes, 24.0 * rows * 2880.0);
  EXPECT_EQ(ops.at("expert_bias").groups, 2 * (128 / 8) + 2);
  EXPECT_TRUE(ops.at("expert_bias").expert && ops.at("expert_clamp").expert && ops.at("expert_act").expert);

  const auto plain = blocks(testing::qwen3_moe(48, 2048, 768, 32, 4), 0);
  EXPECT_EQ(plain.count("rope_unfused") + plain.count("expert_clamp") + plain.count("expert_bias"), 0u);
  // MLA keeps Megatron-Core's fused RoPE although DeepSeek-V3 scales it with YaRN.
  EXPECT_EQ(blocks(testing::deepseek_v3(), 3).count("rope_unfused"), 0u);
}

}  // namespace
}  // namespace fmsim::workload
