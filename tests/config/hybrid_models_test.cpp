// Hybrid Mamba / linear-attention models: the layer pattern read from config.json, parameter
// counts against the model cards, and FLOPs against Megatron-Bridge's hybrid formula.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "workload/model_flops.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::config {
namespace {

using workload::FfnKind;
using workload::MixerKind;
using workload::ModelSpec;

// |actual / expected - 1| <= tolerance.
void expect_near_rel(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << what << ": actual " << actual << ", expected " << expected;
}

TEST(HybridModels, NemotronHPatternIsOneBlockPerLayer) {
  // hybrid_override_pattern (NemotronHConfig): 'M' Mamba-2, '*' attention, '-' MLP, 'E' MoE.
  const ModelSpec m = load_model("nemotron-h-8b");
  ASSERT_EQ(m.layers.size(), 52u);
  EXPECT_EQ(m.mixer(0), MixerKind::Mamba);
  EXPECT_EQ(m.ffn(0), FfnKind::None);
  EXPECT_EQ(m.mixer(1), MixerKind::None);
  EXPECT_EQ(m.ffn(1), FfnKind::Dense);
  EXPECT_EQ(m.mixer(7), MixerKind::Attention);
  EXPECT_EQ(m.ffn(7), FfnKind::None);
  EXPECT_EQ(m.count_mixers(MixerKind::Mamba), 24);
  EXPECT_EQ(m.count_mixers(MixerKind::Attention), 4);
  ASSERT_TRUE(m.ssm);
  EXPECT_EQ(m.ssm->version, 2);
  EXPECT_EQ(m.ssm->inner, 128 * 64);
  EXPECT_EQ(m.ssm->state, 128);
  EXPECT_EQ(m.ssm->groups, 8);
  EXPECT_EQ(m.mlp, workload::MlpKind::Gelu);  // squared ReLU, two matrices
}

TEST(HybridModels, Mamba2LayerParametersFollowTheMixer) {
  // NemotronHMamba2Mixer, h = 4096, H = 128 heads x P = 64 (d = 8192), N = 128, G = 8, K = 4:
  // in_proj h·(2d + 2GN + H) = 4096·18560, conv (d + 2GN)·(K + 1), A_log + D + dt_bias 3H,
  // gated norm d, out_proj d·h.
  const workload::ParameterCount p = workload::count_parameters(load_model("nemotron-h-8b"));
  const std::int64_t conv = 8192 + 2 * 8 * 128;
  EXPECT_EQ(p.ssm_per_layer, 4096LL * 18560 + conv * 5 + 3 * 128 + 8192 + 8192LL * 4096);
  EXPECT_EQ(p.ssm_layers, 24);
  EXPECT_EQ(p.attention_layers, 4);
  // One norm per layer (each Nemotron-H layer is one block) and the final norm.
  EXPECT_EQ(p.norms, 4096LL * 53);
  // The checkpoint's tensors sum to 8,100,852,736 (Nemotron-H-8B-Base-8K; "8B" on its model card).
  EXPECT_EQ(p.total, 8100852736);
}

// The hybrid presets count the parameters their model cards state.
TEST(HybridModels, PresetsCountTheirModelCardParameters) {
  // Nemotron-H 56B (arXiv:2504.03624): 56B. Nemotron 3 Nano 30B-A3B: 31.6B total, 3.2B active
  // (3.6B with embeddings). Jamba-1.5-Mini (arXiv:2408.12570): 52B total, 12B active.
  // Qwen3-Next-80B-A3B: 80B total.
  const std::vector<std::pair<std::string, double>> totals{{"nemotron-h-56b", 56e9},
                                                           {"nemotron-3-nano-30b-a3b", 31.6e9},
                                                           {"jamba-1.5-mini", 52e9},
                                                           {"qwen3-next-80b-a3b", 80e9}};
  for (const auto& [name, card] : totals) {
    expect_near_rel(static_cast<double>(workload::count_parameters(load_model(name)).total), card, 0.01, name);
  }
  const auto nano = workload::count_parameters(load_model("nemotron-3-nano-30b-a3b"));
  expect_near_rel(static_cast<double>(nano.active), 3.2e9, 0.02, "nano active");
  expect_near_rel(static_cast<double>(nano.active_with_embedding()), 3.6e9, 0.02, "nano active with embedding");
  const auto jamba = workload::count_parameters(load_model("jamba-1.5-mini"));
  expect_near_rel(static_cast<double>(jamba.active_with_embedding()), 12e9, 0.02, "jamba active");
}

TEST(HybridModels, PopularMoePresetsCountTheirModelCardParameters) {
  // Llama 4 Scout: 17B active of 109B total (Meta model card; the total includes the vision
  // encoder, which the language-model preset leaves out: 107.8B), 16 routed experts + 1 shared.
  const auto scout = workload::count_parameters(load_model("llama4-scout"));
  expect_near_rel(static_cast<double>(scout.total), 109e9, 0.015, "llama4-scout total");
  expect_near_rel(static_cast<double>(scout.active_with_embedding()), 17e9, 0.03, "llama4-scout active");
  // Kimi K2: 1T total, 32B activated (Moonshot model card; 1.026T and 31.7B counted here).
  const auto kimi = workload::count_parameters(load_model("kimi-k2"));
  expect_near_rel(static_cast<double>(kimi.total), 1.0e12, 0.03, "kimi-k2 total");
  expect_near_rel(static_cast<double>(kimi.active), 32e9, 0.02, "kimi-k2 active");
}

TEST(HybridModels, JambaPeriodsPlaceAttentionAndExperts) {
  // JambaConfig: attention when i % 8 == 4, MoE FFN when i % 2 == 1; Mamba-1 mixers elsewhere.
  const ModelSpec m = load_model("jamba-1.5-mini");
  ASSERT_EQ(m.layers.size(), 32u);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(m.mixer(i), i % 8 == 4 ? MixerKind::Attention : MixerKind::Mamba) << i;
    EXPECT_EQ(m.ffn(i), i % 2 == 1 ? FfnKind::Moe : FfnKind::Dense) << i;
  }
  ASSERT_TRUE(m.ssm);
  EXPECT_EQ(m.ssm->version, 1);
  // Mamba-1 (JambaMambaMixer), d = 2h = 8192, N = 16, R = 256, K = 4: in_proj 2d·h, conv d·(K+1),
  // x_proj d·(R + 2N), dt_proj R·d + d, A_log d·N, D d, out_proj d·h, dt/B/C norms R + 2N.
  const std::int64_t d = 8192;
  EXPECT_EQ(workload::count_parameters(m).ssm_per_layer,
            2 * d * 4096 + d * 5 + d * (256 + 32) + 256 * d + d + d * 16 + d + d * 4096 + 256 + 32);
}

TEST(HybridModels, QwenNextLayerTypesAndGatedDeltaNet) {
  const ModelSpec m = load_model("qwen3-next-80b-a3b");
  EXPECT_EQ(m.count_mixers(MixerKind::LinearAttention), 36);
  EXPECT_EQ(m.mixer(3), MixerKind::Attention);
  EXPECT_TRUE(m.is_moe_layer(0));
  // Qwen3NextGatedDeltaNet, h = 2048, 16 key heads and 32 value heads of 128, K = 4:
  // in_proj_qkvz h·(2·2048 + 2·4096), in_proj_ba h·64, conv (2·2048 + 4096)·4, A_log + dt_bias 64,
  // norm 128, out_proj 4096·h.
  EXPECT_EQ(workload::count_parameters(m).linear_attention_per_layer,
            2048LL * 12288 + 2048LL * 64 + 8192LL * 4 + 64 + 128 + 4096LL * 2048);
  // Gated attention: q_proj yields the query and its output gate (2 x 16 x 256).
  EXPECT_EQ(workload::attention_matmul_weights(m), 2048LL * 8192 + 2 * 2048LL * 512 + 4096LL * 2048);
}

TEST(HybridModels, MegatronFlopsMatchMegatronBridgeHybridFormula) {
  // Megatron-Bridge flop_utils.py hybrid_flops (causal): 3 x [attention layers
  // 4·s·h·(h + h·g/n + s/2) + MLP layers 4·s·h·f + Mamba layers 2·s·h·(2d + 2GN + H)
  // + 7·s·d·N + 2·s·d·h + logits 2·s·h·V] per sequence.
  const ModelSpec m = load_model("nemotron-h-56b");
  const double s = 8192, h = 8192, f = 32768, V = 131072, d = 16384, N = 256, G = 8, H = 256;
  const double attn = 4 * s * h * (h + h * 8 / 64 + s / 2);
  const double mlp = 4 * s * h * f;
  const double mamba = 2 * s * h * (2 * d + 2 * G * N + H) + 7 * s * d * N + 2 * s * d * h;
  const double expected = 3 * (10 * attn + 54 * mlp + 54 * mamba + 2 * s * h * V);
  EXPECT_NEAR(workload::model_flops_per_step(m, 1, 8192).value() / expected, 1.0, 1e-12);
  // PaLM (Chowdhery et al. 2022, App. B): 6N + 12·l·H·Q·s per token, l the 10 attention layers.
  workload::FlopOptions palm;
  palm.convention = workload::FlopConvention::PaLM;
  const double n = static_cast<double>(workload::count_parameters(m).active);
  EXPECT_NEAR(workload::model_flops_per_token(m, 8192, palm).value() / (6 * n + 12.0 * 10 * 64 * 128 * 8192), 1.0,
              1e-12);
}

TEST(HybridModels, BadPatternsNameTheField) {
  const std::string head = R"({"model_type": "nemotron_h", "hidden_size": 256, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "mamba_num_heads": 8, "mamba_head_dim": 64,
    "ssm_state_size": 16, "n_groups": 2, )";
  auto parse = [&](const std::string& tail) { return parse_hf_config(head + tail, "c.json", "c"); };
  EXPECT_NO_THROW(parse(R"("num_hidden_layers": 3, "hybrid_override_pattern": "M*-"})"));
  try {
    parse(R"("num_hidden_layers": 3, "hybrid_override_pattern": "M*X"})");
    FAIL() << "an unknown symbol must be refused";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hybrid_override_pattern"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'X'"), std::string::npos) << e.what();
  }
  try {
    parse(R"("num_hidden_layers": 4, "hybrid_override_pattern": "M*-"})");
    FAIL() << "a pattern of the wrong length must be refused";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 layers for 4"), std::string::npos) << e.what();
  }
  // Far shorter than the layer count (libFuzzer's find, under ASan a read past the pattern before
  // its length was checked): refused by the same rule.
  try {
    parse(R"("num_hidden_layers": 400, "hybrid_override_pattern": "M*-"})");
    FAIL() << "a pattern of the wrong length must be refused";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 layers for 400"), std::string::npos) << e.what();
  }
  try {
    parse(R"("num_hidden_layers": 2, "hybrid_override_pattern": "ME"})");
    FAIL() << "MoE layers without experts must be refused";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("n_routed_experts"), std::string::npos) << e.what();
  }
  // layers_block_type spells the same layout (Nemotron 3).
  const ModelSpec b = parse(R"("num_hidden_layers": 3, "layers_block_type": ["mamba", "attention", "mlp"]})");
  EXPECT_EQ(b.mixer(0), MixerKind::Mamba);
  EXPECT_EQ(b.mixer(1), MixerKind::Attention);
  EXPECT_EQ(b.ffn(2), FfnKind::Dense);
}

}  // namespace
}  // namespace fmsim::config
