// Model FLOP conventions: each test states the published formula, then checks the generic GEMM count reproduces it.
#include "workload/model_flops.hpp"

#include <gtest/gtest.h>

#include "test_models.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::workload {
namespace {

using namespace fmsim::workload::testing;

void expect_rel(double actual, double expected, double tolerance = 1e-12) {
  EXPECT_NEAR(actual / expected, 1.0, tolerance) << "actual " << actual << ", expected " << expected;
}

FlopOptions megatron(AttentionMask mask) {
  FlopOptions o;
  o.convention = FlopConvention::Megatron;
  o.mask = mask;
  return o;
}

TEST(ModelFlops, MegatronFullMaskIsNarayananEquation) {
  // Narayanan et al. SC21 (no recomputation): F = 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) for a GPT
  // with MHA and a 4h GeLU FFN. GPT-3 175B, B = 1536, s = 2048, V = 50257.
  const ModelSpec m = gpt3_175b();
  const double b = 1536, s = 2048, l = 96, h = 12288, v = 50257;
  const double expected = 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  expect_rel(model_flops_per_step(m, 1536, 2048, megatron(AttentionMask::Full)).value(), expected);
}

TEST(ModelFlops, MegatronFullMaskIsNemoLlama3Formula) {
  // NeMo nemo/utils/flops_formulas.py llama3(): B·s·l·h²·(12 + 12·g/n + 18·f/h + 12·s/h
  // + 6·V/(l·h)), g = KV heads, n = heads (full s x s attention). Llama 3.1 70B, B = 512, s = 8192.
  const ModelSpec m = llama31_70b();
  const double b = 512, s = 8192, l = 80, h = 8192, f = 28672, g = 8, n = 64, v = 128256;
  const double expected = b * s * l * h * h * (12 + 12 * g / n + 18 * f / h + 12 * s / h + 6 * v / (l * h));
  expect_rel(model_flops_per_step(m, 512, 8192, megatron(AttentionMask::Full)).value(), expected);
}

TEST(ModelFlops, CausalMaskHalvesTheScoreMatmuls) {
  // Megatron-Bridge flop_utils.py counts causal attention as half the s x s products: the
  // 12·s/h term of the NeMo formula becomes 6·s/h, everything else unchanged.
  const ModelSpec m = llama31_70b();
  const double b = 512, s = 8192, l = 80, h = 8192;
  const double full = model_flops_per_step(m, 512, 8192, megatron(AttentionMask::Full)).value();
  const double causal = model_flops_per_step(m, 512, 8192, megatron(AttentionMask::Causal)).value();
  expect_rel(full - causal, b * s * l * h * h * 6 * s / h, 1e-9);
}

TEST(ModelFlops, MoeCountsTopKExpertsAndSharedExperts) {
  // Megatron (and NeMo mixtral()): the FFN term is 18·k·f_e/h for SwiGLU with k experts per token;
  // Mixtral 8x7B at B = 256, s = 4096, causal: B·s·l·h²·(12 + 12·g/n + 18·k·f/h + 6·s/h + 6·V/(l·h)).
  const ModelSpec m = mixtral_8x7b();
  const double b = 256, s = 4096, l = 32, h = 4096, f = 14336, g = 8, n = 32, k = 2, v = 32000;
  const double expected = b * s * l * h * h * (12 + 12 * g / n + 18 * k * f / h + 6 * s / h + 6 * v / (l * h));
  expect_rel(model_flops_per_step(m, 256, 4096, megatron(AttentionMask::Causal)).value(), expected);
}

TEST(ModelFlops, DeepSeekV3MatchesMegatronBridgeMla) {
  // Megatron-Bridge transformer_flops() for MLA, per token per layer (×3 fwd+bwd, ×2 per MAC):
  //   q: r_q·(h + n·(d_nope + d_rope)); kv: r_kv·(h + n·(d_nope + d_v)) + h·d_rope; o: n·d_v·h;
  //   core (causal): s/2·n·(d_nope + d_rope) + s/2·n·d_v
  // FFN: 3 dense layers of 3·h·f, 58 MoE layers of 3·h·(k·f_e + f_shared); logits h·V.
  // (Bridge also adds r_q + r_kv for the two latent norms; we count GEMMs only.)
  const ModelSpec m = deepseek_v3();
  const double s = 4096, h = 7168, n = 128, rq = 1536, rkv = 512, nope = 128, rope = 64, dv = 128;
  const double attn = rq * (h + n * (nope + rope)) + rkv * (h + n * (nope + dv)) + h * rope + n * dv * h +
                      s / 2 * n * (nope + rope) + s / 2 * n * dv;
  const double ffn = 3 * (3 * h * 18432) + 58 * (3 * h * (8 * 2048 + 2048));
  const double per_token = 6 * (61 * attn + ffn + h * 129280);
  expect_rel(model_flops_per_token(m, 4096, megatron(AttentionMask::Causal)).value(), per_token);
}

TEST(ModelFlops, MtpAddsProjectionBlockAndLogits) {
  // Megatron-Bridge with mtp_num_layers = 1 adds one more block of the last layer's kind, the
  // 2h x h projection and one more logit GEMM: forward 2·s·(2h·h) + block + 2·s·h·V per module.
  const ModelSpec m = deepseek_v3();
  FlopOptions with = megatron(AttentionMask::Causal);
  with.include_mtp = true;
  const double s = 4096, h = 7168;
  const double extra =
      3 * (2 * s * 2 * h * h + layer_forward_flops(m, 60, 4096, AttentionMask::Causal).model().value() +
           2 * s * h * 129280);
  expect_rel(model_flops_per_step(m, 1, 4096, with).value() -
                 model_flops_per_step(m, 1, 4096, megatron(AttentionMask::Causal)).value(),
             extra, 1e-9);
}

TEST(ModelFlops, SlidingWindowAttendedKeys) {
  // Causal window W < s: query t sees min(t + 1, W) keys; mean = W - W(W-1)/(2s)
  // (Megatron-Bridge). GPT-OSS: W = 128, s = 4096, layers 0, 2, ... slide, 1, 3, ... are full.
  const ModelSpec m = gpt_oss(36, 128);
  EXPECT_DOUBLE_EQ(attended_keys(m, 0, 4096, AttentionMask::Causal), 128 - 128.0 * 127 / (2 * 4096));
  EXPECT_DOUBLE_EQ(attended_keys(m, 1, 4096, AttentionMask::Causal), 2048);
  EXPECT_DOUBLE_EQ(attended_keys(m, 0, 4096, AttentionMask::Full), 128);
  EXPECT_DOUBLE_EQ(attended_keys(m, 1, 4096, AttentionMask::Full), 4096);
  // A window longer than the sequence is no window.
  EXPECT_DOUBLE_EQ(attended_keys(m, 0, 100, AttentionMask::Causal), 50);
}

TEST(ModelFlops, SixNIsSixTimesActiveParameters) {
  // Kaplan et al. 2020: C = 6·N·D; N = active parameters without lookup tables.
  const ModelSpec m = mixtral_8x7b();
  FlopOptions o;
  o.convention = FlopConvention::SixN;
  const double n = static_cast<double>(count_parameters(m).active);
  expect_rel(model_flops_per_step(m, 8, 4096, o).value(), 6 * n * 8 * 4096);
}

TEST(ModelFlops, PalmIsTorchtitanMfuFormula) {
  // PaLM Appendix B / torchtitan get_num_flop_per_token: 6·N + 12·l·H·Q·T per token, N = parameters
  // minus the token embedding. Llama 3.1 8B at T = 8192 (torchtitan benchmark default).
  const ModelSpec m = llama31_8b();
  FlopOptions o;
  o.convention = FlopConvention::PaLM;
  const double n = 8030261248.0 - 128256.0 * 4096;
  expect_rel(model_flops_per_token(m, 8192, o).value(), 6 * n + 12.0 * 32 * 32 * 128 * 8192);
}

TEST(ModelFlops, MptIsLlmFoundryFormula) {
  // llm-foundry MPT: per sequence 3·(2·N·s + 4·l·d·s²) with N = parameters minus the learned
  // position table (non-causal attention). MPT-7B at s = 2048 has N = 6658859008 - 2048·4096.
  const ModelSpec m = gpt(32, 4096, 32, 50368, 2048);
  FlopOptions o;
  o.convention = FlopConvention::Mpt;
  const double n = 6658859008.0 - 2048.0 * 4096, s = 2048;
  expect_rel(model_flops_per_step(m, 1, 2048, o).value(), 3 * (2 * n * s + 4 * 32 * 4096 * s * s));
}

TEST(ModelFlops, PaddedVocabWidensLogits) {
  // Megatron pads V to a multiple of 128·TP; only the logit term 6·s·h·V changes.
  const ModelSpec m = gpt3_175b();
  FlopOptions padded = megatron(AttentionMask::Causal);
  padded.padded_vocab = 51200;
  const double delta = model_flops_per_step(m, 1, 2048, padded).value() -
                       model_flops_per_step(m, 1, 2048, megatron(AttentionMask::Causal)).value();
  expect_rel(delta, 6.0 * 2048 * 12288 * (51200 - 50257), 1e-6);
}

TEST(ModelFlops, LayerBreakdownSumsToTheStep) {
  // Megatron step = 3·B·(Σ layers (attention + core + mlp) + logits); the router is reported
  // apart (2·s·h·E per MoE layer) and not counted.
  const ModelSpec m = gpt_oss(24, 32);
  double forward = logits_forward_flops(m, 4096).value();
  for (int i = 0; i < m.num_layers; ++i) {
    const LayerFlops f = layer_forward_flops(m, i, 4096, AttentionMask::Causal);
    forward += f.model().value();
    EXPECT_DOUBLE_EQ(f.router.value(), 2.0 * 4096 * 2880 * 32);
  }
  expect_rel(model_flops_per_step(m, 2, 4096, megatron(AttentionMask::Causal)).value(), 3 * 2 * forward);
}

}  // namespace
}  // namespace fmsim::workload
