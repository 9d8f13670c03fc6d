// Training-step predictions against validation/training.csv (published measurements).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;

nlohmann::json run_validation(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"validate", "training", "--csv",
                                std::string(FMSIM_SOURCE_DIR) + "/validation/training.csv", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Coverage and error bands (issue 13 asks for a median of at most 6% and a p90 of at most 18%: the
// median is 5.6%, the p90 16.9%, both met since GPT-OSS's passes outside Megatron-Core's fused
// kernels (unfused YaRN RoPE, the activation clamp, FC2's bias per expert) are costed, 21.9% before;
// and a p90 of at most 30% on the MoE rows: 25.8%, met since the Megatron-Bridge 26.06 recipes'
// full-iteration CUDA graphs, all-to-all overlap, fused grouped MLP and FP8 attention and the H100
// Qwen3-235B recipes' all-to-all dispatcher are modelled, 48.1% before); docs/validation.md lists
// the worst rows and why.
TEST(TrainingValidation, CoverageAndErrorBands) {
  const auto j = run_validation();
  const auto& s = j["summary"];
  const double rows = s["rows"].get<double>();
  const double predicted = s["predicted"].get<double>();
  EXPECT_GE(rows, 200);
  EXPECT_GE(predicted / rows, 0.95);
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), 6.0);
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), 18.0);                       // 16.9%: the target
  EXPECT_LE(j["by_arch"]["moe"]["median_abs_error_pct"].get<double>(), 11.0);  // 10.1%
  EXPECT_LE(j["by_arch"]["moe"]["p90_abs_error_pct"].get<double>(), 27.0);     // 25.8% (target 30%)
  // Dense models, the bulk of the data: 4.7% / 14.3% since the packed SFT documents of S01, its
  // launcher scripts' settings and the async TP of torchtitan's S10 rows are modelled (4.9% / 14.8%
  // before; 5.8% / 15.5% before the interleaved schedule's
  // gradient reduction windows, NeMo's 16-bit gradient reduction and torchtitan's async TP).
  EXPECT_LE(j["by_arch"]["dense"]["median_abs_error_pct"].get<double>(), 5.0);
  EXPECT_LE(j["by_arch"]["dense"]["p90_abs_error_pct"].get<double>(), 15.0);
}

// Every row is listed: predicted, or skipped with a reason (never dropped silently).
TEST(TrainingValidation, EveryRowAccountedFor) {
  const auto j = run_validation();
  for (const auto& r : j["rows"]) {
    EXPECT_TRUE(r.contains("predicted_step_time_s") || r.contains("skipped")) << r.dump();
  }
}

// A row whose source names no recompute (no recompute cell, recipe setting or source rule) is
// predicted with its stack's default (StackConventions::published_recompute: none for the
// Megatron/NeMo performance recipes, selective for torchtitan, full for LLM Foundry), and the row
// says so: V010 (NeMo 24.07, Nemotron4-340B) gives none; V178's recipe_settings
// (recompute_modules) and V274's recompute cell (selective, per-op SAC) leave nothing to assume.
TEST(TrainingValidation, UnpublishedRecomputeIsTheStacksDefaultAndSaid) {
  const auto j = run_validation({"--rows", "V010,V178,V274"});
  std::map<std::string, std::string> assumed;
  for (const auto& r : j["rows"]) {
    assumed[r["row_id"].get<std::string>()] = r.value("recompute_assumed", std::string());
  }
  EXPECT_EQ(assumed["V010"], "none (the megatron stack's default; the source names none)");
  EXPECT_EQ(assumed["V178"], "");  // recipe_settings recompute_modules=layernorm,moe_act
  EXPECT_EQ(assumed["V274"], "");  // recompute cell: selective
}

// An MoE row run with Megatron-Core that prints '-' for expert parallelism is refused, naming the
// column: read as ep 1 it would put all 128 experts of GPT-OSS-120B on every rank (an unseen table
// did that, +154%). The same row with its ep (64) is predicted; a torchtitan MoE row's blank stays
// ep 1, that stack's default.
TEST(TrainingValidation, MoeRowWithoutExpertParallelismIsRefused) {
  const std::string path = ::testing::TempDir() + "/training_moe_ep.csv";
  {
    std::ofstream f(path);
    f << "row_id,source_id,hardware,num_gpus,model,arch_type,num_layers,hidden_size,num_attention_heads,"
         "num_kv_heads,vocab_size,seq_len,moe_num_experts,moe_topk,moe_expert_ffn,global_batch_size,"
         "micro_batch_size,tp,pp,ep,precision,framework,step_time_s\n"
         "X1,S,GB200 (DGX-GB200 / NVL72),64,GPT-OSS-120B,moe,36,2880,64,8,201088,4096,128,4,2880,1280,4,1,1,-,"
         "BF16,Megatron-Bridge,4.9\n"
         "X2,S,GB200 (DGX-GB200 / NVL72),64,GPT-OSS-120B,moe,36,2880,64,8,201088,4096,128,4,2880,1280,4,1,1,64,"
         "BF16,Megatron-Bridge,4.9\n"
         "X3,S,GB200 (DGX-GB200 / NVL72),64,GPT-OSS-120B,moe,36,2880,64,8,201088,4096,128,4,2880,1280,4,1,1,,"
         "BF16,torchtitan,4.9\n";
  }
  const auto r = run_fmsim({"validate", "training", "--csv", path, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 3u);
  const auto& refused = j["rows"][0];
  ASSERT_TRUE(refused.contains("skipped")) << refused.dump();
  EXPECT_NE(refused["skipped"].get<std::string>().find("ep: '-'"), std::string::npos) << refused.dump();
  EXPECT_TRUE(j["rows"][1].contains("predicted_step_time_s")) << j["rows"][1].dump();
  EXPECT_FALSE(j["rows"][2].contains("skipped")) << j["rows"][2].dump();  // torchtitan: ep 1
}

// Rows that publish only TFLOP/s per GPU are predicted too when their source states its FLOP
// count. Narayanan et al. SC21: F = 96 B s l h^2 (1 + s/6h + V/16lh) with recomputation; for the
// 1T run (3072 A100, batch 3072, seq 2048, 128 layers, h 25600, V 51200, 163 TFLOP/s/GPU) that is
// t = F / (3072 x 163e12) = 102.6 s, the "about 103 s". Megatron-Core's weak-scaling table
// (S08): Megatron-LM's num_floating_point_operations, 12 B s l h^2 (1 + f/h + q/a + s/h + V/2lh);
// for its 1.7B row (48 H100, batch 192, seq 4096, 24 layers, h 2048, V 131072, 408.8 TFLOP/s/GPU)
// t = 0.452 s. NeMo's tables: nemo/utils/flops_formulas.py, B s l h^2 (12 + 12 q/a + 18 f/h + 12 s/h +
// 6 V/lh); for Llama 2 7B on 4 H100 (batch 1024, seq 4096, f 11008, V 32000, 768 TFLOP/s/GPU)
// t = 62.92 s. Llama 3 405B (the paper's MFU is PaLM's): B T (6 N + 12 L H Q T); for 8,192 GPUs
// (batch 2048, seq 8192, 430 TFLOP/s/GPU) t = 12.54 s. They stay out of the summary (not measured). Megatron-LM of 2021
// ran no FlashAttention (the full s x s scores through a fused softmax and dropout), no sequence parallelism and no TP
// or DP overlap (the megatron-legacy stack): the SC21 rows were at median 21.6% (all fast) before that, 3.8% with it,
// none off by more than 7.5% (7.5B and 18.4B, +7%). The S08 rows are all predicted slow (+10% to +41%,
// docs/validation.md): bounded as they are.
TEST(TrainingValidation, DerivedRowsFromPublishedTflops) {
  const auto j = run_validation();
  int derived = 0;
  std::vector<double> sc21, nemo_h100, nemo_b200, llama3;
  std::vector<std::string> refused;
  for (const auto& r : j["rows"]) {
    if (!r.contains("derived_step_time_s")) continue;
    ++derived;
    EXPECT_FALSE(r.contains("measured_step_time_s")) << r.dump();
    if (!r.contains("predicted_step_time_s")) {
      EXPECT_TRUE(r.contains("skipped")) << r.dump();
      refused.push_back(r["row_id"]);
      continue;
    }
    const double err = std::abs(r["predicted_step_time_s"].get<double>() / r["derived_step_time_s"].get<double>() - 1);
    if (r["source_id"] == "S09") {
      sc21.push_back(err);
      EXPECT_LE(err, 0.075) << r["row_id"];
    }
    if (r["row_id"] == "V245") {
      const double s = 2048, l = 128, h = 25600, v = 51200, b = 3072;
      const double flops = 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), flops / (3072 * 163e12), 1e-9);
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), 102.6, 0.1);
    }
    if (r["row_id"] == "V227") {
      const double s = 4096, l = 24, h = 2048, v = 131072, b = 192;
      const double flops = 12 * b * s * l * h * h * (1 + 4 + 1 + s / h + v / (2 * l * h));
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), flops / (48 * 408.8e12), 1e-9);
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), 0.452, 0.001);
    }
    if (r["row_id"] == "V027") {
      const double b = 1024, s = 4096, l = 32, h = 4096, f = 11008, a = 32, q = 32, v = 32000;
      const double flops = b * s * l * h * h * (12 + 12 * q / a + 18 * f / h + 12 * s / h + 6 * v / (l * h));
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), flops / (4 * 768e12), 1e-9);
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), 62.92, 0.01);
    }
    if (r["row_id"] == "V565") {
      const double b = 2048, t = 8192, n = 405e9, l = 126, hq = 16384;
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), b * t * (6 * n + 12 * l * hq * t) / (8192 * 430e12), 1e-9);
      EXPECT_NEAR(r["derived_step_time_s"].get<double>(), 12.54, 0.01);
    }
    if (r["source_id"] == "S02") (r["model"] == "Llama2-7B" ? nemo_h100 : nemo_b200).push_back(err);
    if (r["source_id"] == "S22") llama3.push_back(err);
  }
  // 19 Megatron rows, 15 of NeMo's long-sequence table (two more are refused: their published
  // batch of 8 and 4 sequences cannot split over the 16 data-parallel replicas the GPU count
  // leaves), 3 of Llama 3 405B.
  EXPECT_EQ(derived, 39);
  EXPECT_EQ(refused, (std::vector<std::string>{"V025", "V026"}));
  ASSERT_EQ(sc21.size(), 10u);
  std::sort(sc21.begin(), sc21.end());
  EXPECT_LE((sc21[4] + sc21[5]) / 2, 0.04);
  EXPECT_EQ(j["derived_summary"]["predicted"], 37);
  // NeMo's Llama 2 7B context-parallel table on 4-1,024 H100 (4K to 1M tokens): within 22%, slow
  // by more the longer the sequence (-0.6% at 4K tokens on 4 GPUs, +21.1% at 512K on 512): one
  // attention efficiency per architecture, fitted to 2K-8K-token rows, is low for the 32K-token
  // and longer kernels of this table (docs/validation.md). It was 20.1% before the refit that
  // came with the interleaved DP overlap lowered the Hopper FP8 GEMM efficiency (0.65 to 0.626),
  // 21.1% until S01's packed documents (whose three too-slow rows had held that efficiency up)
  // and the refit that came with them lowered it to 0.593: 22.1% (V034, 512K tokens on 512 GPUs).
  ASSERT_EQ(nemo_h100.size(), 9u);
  for (const double e : nemo_h100) EXPECT_LE(e, 0.23);
  // Its Llama 3 8B table on 8-256 B200 prints a DP column the GPU count contradicts (README:
  // dp 2 with 8 GPUs and no CP), so dp is left to the GPU count: predicted 7-41% slow.
  ASSERT_EQ(nemo_b200.size(), 6u);
  for (const double e : nemo_b200) EXPECT_LE(e, 0.41);
  // Llama 3 405B is predicted 21-52% slow: the table gives pp 16 and 16-32 micro-batches per
  // replica but not the interleaving Meta ran (the paper's modified interleaved schedule), so the
  // plain 1F1B bubble (pp - 1) / m = 15/32 to 15/16 of a step is charged in full. Bounded as is.
  ASSERT_EQ(llama3.size(), 3u);
  for (const double e : llama3) EXPECT_LE(e, 0.55);
}

// Calculon's Megatron validation set (Isaev et al. SC23; github.com/calculon-ai/calculon
// calculon/megatron/validation.py): the measured iteration times of Korthikanti et al. 2022,
// Table 5 (22B, 175B, 530B, 1T on 8-512 A100, full recompute and sequence parallelism with
// selective recompute), on which Calculon reports a mean |error| of 3.65%. The rows are S23 of
// training.csv; fmsim's mean is 2.8% and no row is off by more than 5%.
TEST(TrainingValidation, CalculonsMegatronRowsRowByRow) {
  const auto j = run_validation();
  double sum = 0.0;
  int n = 0;
  for (const auto& r : j["rows"]) {
    if (r["source_id"] != "S23") continue;
    ASSERT_TRUE(r.contains("error_pct")) << r.dump();
    const double e = std::abs(r["error_pct"].get<double>());
    EXPECT_LE(e, 5.0) << r["row_id"];
    sum += e;
    ++n;
  }
  ASSERT_EQ(n, 8);
  EXPECT_LE(sum / n, 3.0);
}

// The whole file in under 5 s (issue's speed target).
TEST(TrainingValidation, WholeFileIsFast) {
#ifdef FMSIM_SANITIZED
  GTEST_SKIP() << "speed is checked in the Release build; ASan/UBSan slow every call 2-5x";
#endif
  const auto j = run_validation();
  EXPECT_LT(j["elapsed_s"].get<double>(), 5.0);
}

}  // namespace

namespace {

double tokens_per_s(const std::string& system, const std::vector<std::string>& precision) {
  std::vector<std::string> args{"train",      "--model",     "llama3.1-8b", "--cluster",  system, "--seq",
                                "8192",       "--mbs",       "1",           "--sharding", "fsdp", "--stack",
                                "torchtitan", "--recompute", "selective",   "--json"};
  args.insert(args.end(), precision.begin(), precision.end());
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["tokens_per_s_per_gpu"].get<double>();
}

}  // namespace

// torchao's e2e training benchmarks (pytorch/ao docs/source/workflows/training.md: torchtitan
// Llama3-8B on 8 x H100, batch 1, seq 8192, FSDP2, per-op SAC): BF16 6,150 tokens/s, FP8
// tensorwise 7,689.5 (x1.250), FP8 rowwise 6,768 (x1.101). None of these rows is in the fitted
// CSV; the rowwise factor's prior comes from this table, but its value is fitted to the
// torchtitan rows of training.csv. The model's FP8 speedup over BF16 (1.34) is 7% above the
// measured one and its rowwise/tensorwise ratio (0.85) 3% below it; both bounded here.
TEST(TrainingValidation, Fp8RecipesAgainstTorchaoBenchmarks) {
  const double bf16 = tokens_per_s("p5.48xlarge:1", {"--precision", "bf16"});
  const double tensorwise = tokens_per_s("p5.48xlarge:1", {"--precision", "fp8"});
  const double rowwise = tokens_per_s("p5.48xlarge:1", {"--precision", "fp8", "--fp8-recipe", "rowwise"});
  EXPECT_NEAR(tensorwise / bf16 / 1.250, 1.0, 0.10);
  EXPECT_NEAR(rowwise / tensorwise / (6768.0 / 7689.5), 1.0, 0.05);
  EXPECT_GT(rowwise, bf16);  // rowwise is still faster than BF16 (x1.10 measured)
}
