// Reading serving measurements (validation/inference.csv schema, with inference_aic.csv's extra
// columns): publishers' model names, AIConfigurator's attention-DP layout, disaggregated pools,
// and the cells no deployment can hold, each refused with its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "config/inference_csv.hpp"

namespace fmsim::config {
namespace {

const std::vector<std::string> kColumns = {"id",
                                           "engine",
                                           "engine_version",
                                           "gpu",
                                           "gpu_count",
                                           "model",
                                           "precision",
                                           "kv_cache_dtype",
                                           "tp",
                                           "pp",
                                           "ep",
                                           "attn_dp",
                                           "num_instances",
                                           "serving_mode",
                                           "scenario",
                                           "isl",
                                           "osl",
                                           "concurrency_or_batch",
                                           "output_tok_s_per_gpu",
                                           "ttft_ms_mean",
                                           "tpot_ms_mean",
                                           "e2e_ms_mean",
                                           "prefill_tp",
                                           "prefill_ep",
                                           "prefill_attn_dp",
                                           "prefill_workers",
                                           "decode_tp",
                                           "decode_ep",
                                           "decode_attn_dp",
                                           "decode_workers",
                                           "max_batch",
                                           "profiled_rounds"};

// One row: an aggregated closed-loop measurement, with `changes` applied.
InferenceRow read_row(const std::map<std::string, std::string>& changes) {
  std::map<std::string, std::string> cells = {{"id", "t-1"},
                                              {"engine", "vLLM"},
                                              {"gpu", "H200-SXM-141GB"},
                                              {"gpu_count", "8"},
                                              {"model", "Qwen/Qwen3-32B"},
                                              {"precision", "FP8"},
                                              {"tp", "8"},
                                              {"pp", "1"},
                                              {"attn_dp", "1"},
                                              {"serving_mode", "agg"},
                                              {"scenario", "closed-loop concurrency sweep (AIPerf)"},
                                              {"isl", "1024"},
                                              {"osl", "1024"},
                                              {"concurrency_or_batch", "16"},
                                              {"ttft_ms_mean", "100"},
                                              {"tpot_ms_mean", "10"}};
  for (const auto& [k, v] : changes) cells[k] = v;
  const std::string path = ::testing::TempDir() + "/rows.csv";
  std::ofstream out(path, std::ios::binary);
  for (std::size_t i = 0; i < kColumns.size(); ++i) out << (i ? "," : "") << kColumns[i];
  out << "\n";
  for (std::size_t i = 0; i < kColumns.size(); ++i) out << (i ? "," : "") << cells[kColumns[i]];
  out << "\n";
  out.close();
  const auto rows = read_inference_csv(path);
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? InferenceRow{} : rows[0];
}

TEST(InferenceCsv, HuggingFaceRepoIdsAndVendorGpuNamesMapToTheCatalog) {
  const auto r = read_row({});
  EXPECT_EQ(r.reason, "");
  EXPECT_EQ(r.model, "qwen3-32b");
  EXPECT_EQ(r.system, "p5en.48xlarge");
  EXPECT_EQ(r.concurrency, 16);
  EXPECT_EQ(read_row({{"gpu", "GB300"}}).system, "gb300-nvl72");
  EXPECT_EQ(read_row({{"gpu", "B300-SXM-288GB"}}).system, "p6-b300.48xlarge");
}

TEST(InferenceCsv, AttentionDpDegreeSpansTheStage) {
  // AIConfigurator's layout: tp is the attention TP inside one attention-DP rank; tp 1 x 8 ranks
  // is fmsim's DEP over 8 GPUs.
  const auto r = read_row({{"model", "deepseek-ai/DeepSeek-R1"}, {"tp", "1"}, {"attn_dp", "8"}, {"ep", "8"}});
  EXPECT_EQ(r.reason, "");
  EXPECT_EQ(r.tp, 8);
  EXPECT_TRUE(r.attention_dp);
  EXPECT_EQ(r.ep, 8);
  // Attention DP over groups of tensor parallel ranks is not a layout fmsim models: refused.
  EXPECT_NE(read_row({{"tp", "2"}, {"attn_dp", "4"}}).reason.find("attention DP 4 over groups of tensor parallel 2"),
            std::string::npos);
}

TEST(InferenceCsv, DisaggregatedRowsCarryBothPools) {
  const auto r = read_row({{"serving_mode", "disagg"},
                           {"prefill_tp", "2"},
                           {"prefill_workers", "3"},
                           {"decode_tp", "1"},
                           {"decode_attn_dp", "4"},
                           {"decode_ep", "4"},
                           {"decode_workers", "1"},
                           {"model", "deepseek-ai/DeepSeek-V3"}});
  EXPECT_EQ(r.reason, "");
  EXPECT_TRUE(r.disaggregated);
  EXPECT_EQ(r.prefill.tp, 2);
  EXPECT_EQ(r.prefill.workers, 3);
  EXPECT_EQ(r.decode.tp, 4);
  EXPECT_TRUE(r.decode.attention_dp);
  EXPECT_EQ(r.decode.ep, 4);
  EXPECT_NE(read_row({{"serving_mode", "disagg"}}).reason.find("without the prefill pool's layout"), std::string::npos);
}

TEST(InferenceCsv, PrecisionsAsPublishersWriteThem) {
  EXPECT_EQ(read_row({{"precision", "NVFP4"}}).weights, core::Precision::FP4);
  EXPECT_EQ(read_row({{"precision", "FP8 (block-scaled)"}}).weights, core::Precision::FP8);
  // Blank: the checkpoint's own; a quantised checkpoint names it in its repo id.
  EXPECT_EQ(read_row({{"precision", ""}}).weights, core::Precision::BF16);
  EXPECT_EQ(read_row({{"precision", ""}, {"model", "nvidia/Llama-3.1-8B-Instruct-FP8"}}).weights, core::Precision::FP8);
  EXPECT_NE(read_row({{"precision", "INT4 (weight-only)"}}).reason.find("not modelled"), std::string::npos);
}

TEST(InferenceCsv, CellsNoDeploymentCanHoldAreTheRowsReason) {
  EXPECT_NE(read_row({{"gpu_count", ""}}).reason.find("no gpu_count"), std::string::npos);
  EXPECT_NE(read_row({{"concurrency_or_batch", "1e9"}}).reason.find("out of range (1 to 4096)"), std::string::npos);
  EXPECT_NE(read_row({{"isl", "1e30"}}).reason.find("no ISL/OSL"), std::string::npos);
  EXPECT_NE(read_row({{"max_batch", "-3"}}).reason.find("max_batch out of range"), std::string::npos);
  EXPECT_NE(read_row({{"model", "example/Unknown-7B"}}).reason.find("no preset for model"), std::string::npos);
  EXPECT_EQ(read_row({{"max_batch", "64"}}).max_batch, 64);
}

// profiled_rounds: the requests per client a closed loop's reported means cover from a drained
// engine (AIPerf's profiling after its warm-up); blank = 0, the steady round only.
TEST(InferenceCsv, ProfiledRoundsBelongToClosedLoops) {
  EXPECT_EQ(read_row({{"profiled_rounds", "20"}}).profiled_rounds, 20);
  EXPECT_EQ(read_row({}).profiled_rounds, 0);
  EXPECT_NE(read_row({{"profiled_rounds", "0"}}).reason.find("profiled_rounds out of range (1 to 1000)"),
            std::string::npos);
  EXPECT_NE(read_row({{"profiled_rounds", "20"}, {"scenario", "static batch (vLLM CI)"}})
                .reason.find("profiled_rounds on a row that is not a closed loop"),
            std::string::npos);
}

}  // namespace
}  // namespace fmsim::config
