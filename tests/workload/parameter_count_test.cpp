// Parameter counts against the totals their authors publish.
#include "workload/parameter_count.hpp"

#include <gtest/gtest.h>

#include "test_models.hpp"

namespace fmsim::workload {
namespace {

using namespace fmsim::workload::testing;

// |actual / expected - 1| <= tolerance.
void expect_near_rel(double actual, double expected, double tolerance) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << "actual " << actual << ", expected " << expected;
}

TEST(ParameterCount, Llama31DenseTotals) {
  // Meta Llama 3.1 model card: 8.03B, 70.6B and 405.9B parameters (HF safetensors totals
  // 8,030,261,248 / 70,553,706,496 / 405,853,388,800).
  EXPECT_EQ(count_parameters(llama31_8b()).total, 8030261248);
  EXPECT_EQ(count_parameters(llama31_70b()).total, 70553706496);
  EXPECT_EQ(count_parameters(llama31_405b()).total, 405853388800);
}

TEST(ParameterCount, LlamaComponentsAddUp) {
  // Per layer: attention h·(n·d) + 2·h·(kv·d) + (n·d)·h, SwiGLU 3·h·f, two RMSNorms 2h.
  const ParameterCount p = count_parameters(llama31_8b());
  EXPECT_EQ(p.attention_per_layer, 4096LL * 4096 * 2 + 2LL * 4096 * 1024);
  EXPECT_EQ(p.dense_mlp_per_layer, 3LL * 4096 * 14336);
  EXPECT_EQ(p.norms_per_layer, 2 * 4096);
  EXPECT_EQ(p.embedding, 128256LL * 4096);
  EXPECT_EQ(p.lm_head, 128256LL * 4096);
  EXPECT_EQ(p.total,
            p.embedding + p.lm_head + 32 * (p.attention_per_layer + p.dense_mlp_per_layer + p.norms_per_layer) + 4096);
  // Dense untied model: active = total - input embedding table.
  EXPECT_EQ(p.active, p.total - p.embedding);
  EXPECT_EQ(p.dense_layers, 32);
  EXPECT_EQ(p.moe_layers, 0);
}

TEST(ParameterCount, MixtralTotalAndActive) {
  // Mistral AI: Mixtral 8x7B has 46.7B total and 12.9B active parameters per token;
  // Mixtral 8x22B 141B total and 39B active (Mistral counts the embedding table as active).
  const ParameterCount small = count_parameters(mixtral_8x7b());
  expect_near_rel(static_cast<double>(small.total), 46.7e9, 0.005);
  expect_near_rel(static_cast<double>(small.active_with_embedding()), 12.9e9, 0.005);
  const ParameterCount large = count_parameters(mixtral_8x22b());
  expect_near_rel(static_cast<double>(large.total), 141e9, 0.005);
  expect_near_rel(static_cast<double>(large.active_with_embedding()), 39e9, 0.01);
  // Each token reaches 2 of 8 experts: active = total - 6 experts per layer - embedding table.
  EXPECT_EQ(small.active, small.total - 32 * 6 * small.expert - small.embedding);
}

TEST(ParameterCount, DeepSeekV3TotalActiveAndMtp) {
  // DeepSeek-V3 technical report (arXiv:2412.19437): 671B total, 37B activated per token; the HF
  // checkpoint holds 685B = 671B main model + 14B MTP module (which stores its own copies of the
  // embedding and output head, 2·V·h).
  const ModelSpec m = deepseek_v3();
  const ParameterCount p = count_parameters(m);
  expect_near_rel(static_cast<double>(p.total), 671e9, 0.005);
  expect_near_rel(static_cast<double>(p.active_with_embedding()), 37e9, 0.02);
  expect_near_rel(static_cast<double>(p.total + p.mtp + 2 * m.vocab * m.hidden), 685e9, 0.01);
  EXPECT_EQ(p.dense_layers, 3);
  EXPECT_EQ(p.moe_layers, 58);
  // One routed expert: 3·h·f_e = 3·7168·2048.
  EXPECT_EQ(p.expert, 3LL * 7168 * 2048);
  EXPECT_EQ(p.shared_expert_per_layer, 3LL * 7168 * 2048);
}

TEST(ParameterCount, Qwen3Totals) {
  // Qwen3 model cards: 8B -> 8.2B (6.95B non-embedding); 32B -> 32.8B (31.2B non-embedding);
  // 30B-A3B -> 30.5B total, 3.3B activated; 235B-A22B -> 235B total, 22B activated (Qwen counts
  // the embedding table as activated).
  const ParameterCount q8 = count_parameters(qwen3(36, 4096, 12288, 32, 8));
  expect_near_rel(static_cast<double>(q8.total), 8.2e9, 0.01);
  expect_near_rel(static_cast<double>(q8.non_embedding()), 6.95e9, 0.01);
  const ParameterCount q32 = count_parameters(qwen3(64, 5120, 25600, 64, 8));
  expect_near_rel(static_cast<double>(q32.total), 32.8e9, 0.01);
  expect_near_rel(static_cast<double>(q32.non_embedding()), 31.2e9, 0.01);
  const ParameterCount a3b = count_parameters(qwen3_moe(48, 2048, 768, 32, 4));
  expect_near_rel(static_cast<double>(a3b.total), 30.5e9, 0.01);
  expect_near_rel(static_cast<double>(a3b.active_with_embedding()), 3.3e9, 0.02);
  const ParameterCount a22b = count_parameters(qwen3_moe(94, 4096, 1536, 64, 4));
  expect_near_rel(static_cast<double>(a22b.total), 235e9, 0.01);
  expect_near_rel(static_cast<double>(a22b.active_with_embedding()), 22e9, 0.01);
}

TEST(ParameterCount, GptOssTotalsAndActive) {
  // OpenAI gpt-oss model card, Table 1: gpt-oss-120b 116.83B total, 5.13B active per token;
  // gpt-oss-20b 20.91B total, 3.61B active (active excludes the embedding lookup, includes unembedding).
  const ParameterCount big = count_parameters(gpt_oss(36, 128));
  expect_near_rel(static_cast<double>(big.total), 116.83e9, 0.005);
  expect_near_rel(static_cast<double>(big.active), 5.13e9, 0.01);
  const ParameterCount small = count_parameters(gpt_oss(24, 32));
  expect_near_rel(static_cast<double>(small.total), 20.91e9, 0.005);
  expect_near_rel(static_cast<double>(small.active), 3.61e9, 0.01);
}

TEST(ParameterCount, Gpt3AndSc21Formula) {
  // Brown et al. 2020 Table 2.1: GPT-3 has 175B parameters.
  expect_near_rel(static_cast<double>(count_parameters(gpt3_175b()).total), 175e9, 0.005);
  // Narayanan et al. SC21 §5.1: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)); our count adds
  // only the final LayerNorm (2h). Table 1 row: 145.6B at l = 80, h = 12288, V = 51200, s = 2048.
  const ModelSpec m = gpt(80, 12288, 96, 51200, 2048);
  const double l = 80, h = 12288, v = 51200, s = 2048;
  const double sc21 = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
  EXPECT_EQ(static_cast<double>(count_parameters(m).total), sc21 + 2 * h);
  expect_near_rel(sc21, 145.6e9, 0.001);
}

TEST(ParameterCount, MptMatchesLlmFoundryNumParams) {
  // llm-foundry scripts/train/benchmarking/README.md lists NumParams 6658859008 for MPT-7B at
  // seq 2048 and 1315950592 for MPT-1B: tied embeddings, learned positions (max_seq_len rows),
  // biases and LayerNorm: 12·l·d² + 13·l·d + 2d + (V + s)·d.
  ModelSpec mpt7 = gpt(32, 4096, 32, 50368, 2048);
  EXPECT_EQ(count_parameters(mpt7).total, 6658859008);
  ModelSpec mpt1 = gpt(24, 2048, 16, 50368, 2048);
  EXPECT_EQ(count_parameters(mpt1).total, 1315950592);
  // Tied: active = total - the learned position table (the token table is the output head).
  const ParameterCount p = count_parameters(mpt7);
  EXPECT_EQ(p.active, p.total - 2048LL * 4096);
  EXPECT_EQ(p.lm_head, 0);
}

TEST(ParameterCount, MoeLayerLayout) {
  // DeepSeek-style: first 3 dense, then every 2nd layer MoE -> layers 3, 5, 7, 9 of 10 are MoE.
  ModelSpec m = deepseek_v3();
  m.num_layers = 10;
  m.mtp_layers = 0;
  m.moe.layer_frequency = 2;
  const ParameterCount p = count_parameters(m);
  EXPECT_EQ(p.moe_layers, 4);
  EXPECT_EQ(p.dense_layers, 6);
  EXPECT_EQ(p.routed_experts, 4 * 256 * p.expert);
  EXPECT_EQ(p.dense_mlp, 6 * p.dense_mlp_per_layer);
}

}  // namespace
}  // namespace fmsim::workload
