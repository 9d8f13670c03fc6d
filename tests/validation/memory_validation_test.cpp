// Per-GPU memory predictions against validation/memory.csv and the memory verdicts on
// validation/training.csv (published measurements).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../golden/run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;

nlohmann::json run_json(const std::vector<std::string>& args) {
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// validate memory defaults to the repository's validation/memory.csv (compiled in) and reports
// the summary fields. Bounds (issue 13 targets median <= 10%): the measured figures,
// median |error| <= 7.0% (5.5%), p90 <= 16% (12.3%) over the rows with a number; at least 90% of
// the rows predicted (174 of 185; the rest lack a sequence length or a batch, a catalog GPU (V100,
// RTX cards) or run NVFP4 under torchtitan). It was 75% (145) before the BigScience rows without
// a layer count got theirs from their stated size. The median bound was 9% (8.76%) and the p90 bound 21% (20.51%)
// before DeepSpeed's bf16 gradient-reduction copy, torchtitan's pipeline micro-batch split, FSDP2's fp32 gradient
// accumulation under PP and torchtitan's compiled loss, and the p90 bound 19% (17.7%) before nanotron's
// compute-balanced pipeline split (docs/validation.md).
TEST(MemoryValidation, DefaultsToRepositoryDataAndErrorBands) {
  const auto j = run_json({"validate", "memory", "--json"});
  const auto& s = j["summary"];
  EXPECT_EQ(j["csv"], "validation/memory.csv");
  EXPECT_EQ(s["rows"].get<int>(), 185);
  EXPECT_GE(s["predicted"].get<double>() / s["rows"].get<double>(), 0.90);
  EXPECT_LE(s["median_abs_error_pct"].get<double>(), 7.0);
  EXPECT_LE(s["p90_abs_error_pct"].get<double>(), 16.0);
  ASSERT_TRUE(s.contains("oom_rows"));
  ASSERT_TRUE(s.contains("oom_agreed"));
  // Every row that ran is judged to fit (BigScience M115, 80 of 80 GB at dp 1, fits since the
  // optimizer step's fp32 gradient copy competes with the activations instead of adding to them);
  // 10 of the 11 out-of-memory rows agree: M141 (fp16, tp 2 pp 6) since the input embedding's fresh
  // 16-bit gradient (3.3 GiB at tp 2) counts beside five micro-batches in flight, 81.2 of 80 GiB;
  // M019 (no batch published) since it is judged at one sequence per GPU; M168 is predicted to fit
  // (docs/validation.md).
  EXPECT_EQ(s["run_agreed"].get<int>(), s["run_rows"].get<int>());
  EXPECT_EQ(s["oom_rows"].get<int>(), 11);
  EXPECT_GE(s["oom_agreed"].get<int>(), 10);
}

// BigScience's tr11 topology tables state each test model's size and hidden size, not its layers
// ("the number of layers had to be tweaked to fit PP and NHIDDEN was fixed"): the layers come from
// Megatron's parameter count, the nearest multiple of pp (TrainingRows.LayersFromTheStatedSizeOfADenseGpt).
// These 24 rows (fp16, ZeRO-1, full recompute, micro-batches 1-8, pp 4-12) took no part in shaping
// the memory model: all within 12% (worst M097, -11.3%), median 3.3% (bound 5%), 21 of the 24 below
// the measurement (mean signed -3.1%).
TEST(MemoryValidation, BigScienceRowsWithLayersFromTheirSize) {
  std::string ids;
  for (int i = 79; i <= 102; ++i) ids += (ids.empty() ? "M" : ",M") + std::to_string(1000 + i).substr(1);
  const auto j = run_json({"validate", "memory", "--json", "--rows", ids});
  ASSERT_EQ(j["rows"].size(), 24u);
  std::vector<double> errors;
  for (const auto& r : j["rows"]) {
    ASSERT_TRUE(r.contains("layers_derived_from")) << r.dump();
    errors.push_back(std::abs(r["error_pct"].get<double>()));
    EXPECT_LE(errors.back(), 12.0) << r.dump();
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_LE((errors[11] + errors[12]) / 2.0, 5.0);
}

// torchtitan's 1D FSDP2 run of Llama 3.1 405B on 128 H100 "OOMs" (docs/performance.md), batch not
// stated: judged at one sequence per GPU, the least any run holds, it needs 117.7 GiB of 95 (the
// sharded states alone 47 GiB, one 8,192-token sequence's activations with full recompute 35 GiB).
TEST(MemoryValidation, OutOfMemoryRowWithoutABatchIsJudgedAtOneSequence) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M019"});
  ASSERT_EQ(j["rows"].size(), 1u);
  const auto& r = j["rows"][0];
  ASSERT_TRUE(r.contains("batch_assumed")) << r.dump();
  EXPECT_NE(r["layout"].get<std::string>().find("mbs1 gbs128"), std::string::npos) << r.dump();
  EXPECT_FALSE(r["fits"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["verdict_agrees"].get<bool>()) << r.dump();
}

// torchtitan's NVFP4 table (Blackwell SM100 at 184.3 GiB: GB200), its MXFP8 and BF16 runs with
// ChunkedLossWrapper (8 chunks: one chunk's logits at a time): the Llama 3 8B runs (M023 MXFP8 at
// 97.6% of the GPU, M024) fit, where the whole-sequence loss needed 248 GiB (their reserved figure is
// predicted at the capacity, 185 GiB); the Qwen3 8B runs within 8% (M026, M027: +6%). The NVFP4 runs
// are not predicted, with the reason.
TEST(MemoryValidation, TorchtitanChunkedLossOnGb200) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M022,M023,M024,M025,M026,M027"});
  ASSERT_EQ(j["rows"].size(), 6u);
  for (const auto& r : j["rows"]) {
    if (r["row_id"] == "M022" || r["row_id"] == "M025") {
      EXPECT_NE(r["skipped"].get<std::string>().find("NVFP4"), std::string::npos) << r.dump();
      continue;
    }
    EXPECT_LE(std::abs(r["error_pct"].get<double>()), 8.0) << r.dump();
    EXPECT_TRUE(r["fits"].get<bool>()) << r.dump();
    EXPECT_LT(r["required_gib"].get<double>(), 185.0) << r.dump();
    EXPECT_NEAR(r["capacity_gib"].get<double>(), 185.0, 0.5) << r.dump();
  }
}

// torchtitan's Llama 3.1 405B pipeline rows (M013-M018: local batch split into pp x stages-per-rank
// micro-batches, FSDP2's unsharded gradients accumulated in fp32 under PP), its Llama 3.1 70B FSDP +
// TP rows (M011/M012: DTensor keeps the all-gathered QKV, FC1 and LM-head inputs) and its June 2025
// Llama 3.1 8B rows on H200 (M020/M021: the loss compiled with the model, 4 B per logit) within 13%
// (worst today M011, -12.9%, and M014, -11.9%; before: -45% to -21%, -22% and +32% to +34%).
TEST(MemoryValidation, TorchtitanTensorAndPipelineRowsAndCompiledLoss) {
  const auto j =
      run_json({"validate", "memory", "--json", "--rows", "M011,M012,M013,M014,M015,M016,M017,M018,M020,M021"});
  ASSERT_EQ(j["rows"].size(), 10u);
  for (const auto& r : j["rows"]) EXPECT_LE(std::abs(r["error_pct"].get<double>()), 13.0) << r.dump();
}

// torchtune's single-device ladder on Llama 3.2 3B (pure bf16: 2 B weights, 2 B gradients, 4 B Adam
// m and v; "non-8bit" AdamW is not 8-bit Adam): with its chunked cross-entropy compiled (M193, M194:
// recipe_settings compile_loss, 4 B per logit) and the gradients allocated by backward after
// zero_grad(set_to_none=True) (MemoryOptions::lazy_gradients: one micro-batch per step, so only the
// LM head's coexists with the activations and logits at the start of backward) both are within 5%
// (-1.6% and +0.2%; +10.4% and +20.8% before).
TEST(MemoryValidation, TorchtuneCompiledChunkedLossAndLazyGradients) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M193,M194"});
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& r : j["rows"]) {
    EXPECT_LE(std::abs(r["error_pct"].get<double>()), 5.0) << r.dump();
    const auto& b = r["breakdown_gib"];
    EXPECT_NEAR(b["optimizer"].get<double>(), 2.0 * b["weights"].get<double>(), 1e-6) << r.dump();
    // At the peak only the head's gradient exists: 2 B x 128256 x 3072 = 0.73 GiB.
    EXPECT_NEAR(b["gradients"].get<double>(), 2.0 * 128256 * 3072 / 1073741824.0, 1e-3) << r.dump();
  }
}

// BigScience's bf16 runs of 2022-02-28 (BF16_Optimizer: unsharded fp32 gradient accumulation, and
// DeepSpeed's pipeline engine all-reducing it through a bf16 copy, 2 B per parameter, after the last
// backward): the nvidia-smi readings M149-M167 within 12% (0.4% to 10.4% today; about -7% without
// the copy), and M154 (184B, tp 4 pp 6, reported OOM) judged out of memory.
TEST(MemoryValidation, DeepSpeedBf16GradientReductionCopy) {
  const auto j =
      run_json({"validate", "memory", "--json", "--rows",
                "M149,M150,M151,M152,M154,M155,M156,M157,M158,M159,M160,M161,M162,M163,M164,M165,M166,M167"});
  ASSERT_EQ(j["rows"].size(), 18u);
  for (const auto& r : j["rows"]) {
    if (r["row_id"] == "M154") {
      EXPECT_FALSE(r["fits"].get<bool>()) << r.dump();
      continue;
    }
    EXPECT_LE(std::abs(r["error_pct"].get<double>()), 12.0) << r.dump();
  }
}

// Korthikanti et al. 2022, Table 2: activations per layer are 34 s b h / t bytes with sequence
// parallelism and selective recompute (5 a s^2 b / t more without recompute, no flash attention);
// Fig. 1's component values for the 22B, 175B and 1T models are reproduced within 1%.
TEST(MemoryValidation, KorthikantiActivationsReproduced) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M172,M174,M176,M178,M184,M186"});
  ASSERT_EQ(j["rows"].size(), 6u);
  for (const auto& r : j["rows"]) EXPECT_NEAR(r["error_pct"].get<double>(), 0.0, 1.0) << r.dump();
}

// Published training runs ran: issue 13's target is at least 98% of the 230 measured rows of
// training.csv judged to fit, so at most 4 judged out of memory (1 today: V010, Nemotron-4 340B with
// fp32 Adam states over dp 2; 3 before V015's and V178's recipe settings, 4 before V057's recipe
// offloaded 95 layers' activations, 9 before the optimizer step's transient gradient copy and
// llm-foundry's fused loss, 48 before the distributed optimizer, bf16 gradient buffers, FP8-saved
// inputs and per-stage peaks).
TEST(MemoryValidation, PublishedTrainingRunsFit) {
  const auto j = run_json({"validate", "training", "--json"});
  EXPECT_LE(j["summary"]["does_not_fit"].size(), 1u) << j["summary"]["does_not_fit"].dump();
  EXPECT_GE(j["summary"]["fit_memory"].get<int>(), 229);
}

// BigScience's readings are nvidia-smi snapshots of the first node (validation/README.md), whose 8
// GPUs hold pipeline stage 0 when tp x dp >= 8 (DeepSpeed's pipe-outermost topology): M164 (176B,
// tp 4 pp 12 dp 8) is predicted on stage 0, 12 micro-batches in flight. With its
// 'type:transformer|embedding' split (70 layers + 2 embedding slots = 6 per stage) stage 0 (5
// layers, the embedding and the fp32 copy of its gradient) is also the job's peak: stage 11 holds 5
// layers and the head. M115 (pp 1) reads its only stage.
TEST(MemoryValidation, FirstNodeReadingsArePredictedOnTheFirstStage) {
  const auto j = run_json({"validate", "memory", "--json", "--rows", "M164,M115,M001"});
  ASSERT_EQ(j["rows"].size(), 3u);  // in file order: M001, M115, M164
  const auto& m164 = j["rows"][2];
  ASSERT_EQ(m164["row_id"], "M164");
  EXPECT_EQ(m164["measured_gpus"], "first_node");
  EXPECT_EQ(m164["reading_stage"].get<int>(), 0);
  EXPECT_EQ(m164["peak_stage"].get<int>(), 0);
  double reading = 0.0;
  for (const auto& [k, v] : m164["reading_breakdown_gib"].items()) reading += v.get<double>();
  EXPECT_NEAR(m164["predicted_gib"].get<double>(), reading, 1e-6);  // device = every component
  // 59 GB measured; +8.2% predicted (the source's p90 is 11.5%, docs/validation.md).
  EXPECT_LE(std::abs(m164["error_pct"].get<double>()), 10.0);
  EXPECT_FALSE(j["rows"][1].contains("reading_stage"));
  EXPECT_EQ(j["rows"][0]["measured_gpus"], "max");
}

// measured_gpus takes max or first_node; anything else names the file, line and column.
TEST(MemoryValidation, MeasuredGpusValuesAreChecked) {
  const std::string path = ::testing::TempDir() + "/memory_measured_gpus.csv";
  {
    std::ofstream f(path);
    f << "row_id,model,num_layers,hidden_size,num_attention_heads,vocab_size,seq_len,num_gpus,hardware,framework,"
         "memory_kind,measured_peak_gib,measured_gpus\n"
         "X1,m,8,1024,8,32000,2048,8,H100-SXM-80GB,megatron,nvidia-smi,20,last_node\n";
  }
  const auto r = run_fmsim({"validate", "memory", "--csv", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(":2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("measured_gpus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("first_node"), std::string::npos) << r.err;
}

// measured_peak_gib is a finite positive number of GiB or empty: "nan", "inf", "0" and "20 GiB"
// were read (stod), printed as the error or making it infinite.
TEST(MemoryValidation, MeasuredPeakIsAPositiveNumber) {
  const std::string path = ::testing::TempDir() + "/memory_measured_peak.csv";
  for (const char* bad : {"nan", "inf", "0", "20 GiB"}) {
    {
      std::ofstream f(path);
      f << "row_id,model,num_layers,hidden_size,num_attention_heads,vocab_size,seq_len,num_gpus,hardware,framework,"
           "memory_kind,measured_peak_gib\n"
           "X1,m,8,1024,8,32000,2048,8,H100-SXM-80GB,megatron,nvidia-smi,"
        << bad << "\n";
    }
    const auto r = run_fmsim({"validate", "memory", "--csv", path});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find(":2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("measured_peak_gib"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("a positive number, or empty for none"), std::string::npos) << r.err;
  }
}

// nanotron splits its pipeline by compute with the LM head priced in (Layout::balanced_head_layers),
// so its first stages hold one layer more than an even share, with the most micro-batches in
// flight. Its 16 pipeline rows (pp 2-32, M195-M219): mean |error| at most 11% (10.0% today, 14.4%
// with the even split) and none beyond 26% (M201 +24.9%; M218 was -38%).
TEST(MemoryValidation, NanotronComputeBalancedPipelineSplit) {
  const auto j = run_json({"validate", "memory", "--json"});
  double sum = 0.0;
  int n = 0;
  for (const auto& r : j["rows"]) {
    const std::string fw = r["framework"];
    if (fw.find("nanotron") == std::string::npos || !r.contains("error_pct")) continue;
    if (r["layout"].get<std::string>().find(" pp1 ") != std::string::npos) continue;
    const double e = std::abs(r["error_pct"].get<double>());
    EXPECT_LE(e, 26.0) << r.dump();
    sum += e;
    ++n;
  }
  ASSERT_EQ(n, 16);
  EXPECT_LE(sum / n, 11.0);
}

// A missing file names the flag; a row id that is not in the file names --rows.
TEST(MemoryValidation, BadInputNamesTheFlag) {
  auto r = run_fmsim({"validate", "memory", "--rows", "M999"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--rows"), std::string::npos) << r.err;
  r = run_fmsim({"validate", "memory", "--csv", "/nonexistent/memory.csv"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--csv"), std::string::npos) << r.err;
}

}  // namespace
