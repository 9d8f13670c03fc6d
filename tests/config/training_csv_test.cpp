// Reading training-measurement rows (validation/training.csv schema) into jobs: cells that no job
// can hold are the row's reason, never a cast out of range or a division by zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "config/csv.hpp"
#include "config/model_loader.hpp"
#include "config/training_csv.hpp"
#include "core/error.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::config {
namespace {

using fmsim::testing::shipped_catalog;

// The header and the first row (V080: Qwen3-235B-A22B on 256 GB200, mbs 1, tp 1) of the test
// table, with `column`'s cell of that row replaced by `value`.
std::vector<CsvRecord> first_row_with(const std::string& column, const std::string& value) {
  std::ifstream in(std::string(FMSIM_SOURCE_DIR) + "/tests/data/training/same_inputs.csv", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  auto records = parse_csv(text.str(), "same_inputs.csv");
  records.resize(2);
  if (!column.empty()) {
    const auto& header = records[0].cells;
    const auto it = std::find(header.begin(), header.end(), column);
    EXPECT_NE(it, header.end()) << column;
    records[1].cells[static_cast<std::size_t>(it - header.begin())] = value;
  }
  return records;
}

// The first row with a recipe_settings column holding `value`.
std::vector<CsvRecord> first_row_with_recipe(const std::string& value) {
  auto records = first_row_with("", "");
  records[0].cells.push_back("recipe_settings");
  records[1].cells.resize(records[0].cells.size() - 1);
  records[1].cells.push_back(value);
  return records;
}

// The job of the first row with each (column, cell) of `cells` replaced (and, when given, a
// recipe_settings column holding `recipe`).
training::TrainingJob first_job_with(const std::vector<std::pair<std::string, std::string>>& cells,
                                     const std::optional<std::string>& recipe = std::nullopt) {
  auto records = recipe ? first_row_with_recipe(*recipe) : first_row_with("", "");
  const auto& header = records[0].cells;
  for (const auto& [column, value] : cells) {
    const auto it = std::find(header.begin(), header.end(), column);
    EXPECT_NE(it, header.end()) << column;
    records[1].cells[static_cast<std::size_t>(it - header.begin())] = value;
  }
  const auto rows = training_rows(records, "t.csv", shipped_catalog(), {});
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  return rows.empty() || !rows[0].job ? training::TrainingJob{} : *rows[0].job;
}

TEST(TrainingRows, TheUnchangedRowBecomesAJob) {
  const auto rows = training_rows(first_row_with("", ""), "t.csv", shipped_catalog(), {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].job.has_value()) << rows[0].reason;
}

// Found by libFuzzer (UBSan: division by zero in the batch arithmetic, global batch modulo
// micro-batch x dp) with micro_batch_size 0; the float-to-integer casts of counts and sizes past
// an int's or int64's range were the same kind of cell.
TEST(TrainingRows, CellsNoJobCanHoldAreTheRowsReason) {
  const std::vector<std::pair<std::pair<const char*, const char*>, const char*>> cases{
      {{"micro_batch_size", "0"}, "micro_batch_size: 0 must be at least 1"},
      {{"micro_batch_size", "-3"}, "micro_batch_size: -3 must be at least 1"},
      {{"hidden_size", "1e30"}, "hidden_size: 1e30 is out of range (at most 9e+15)"},
      {{"global_batch_size", "1e300"}, "global_batch_size: 1e300 is out of range"},
      {{"tp", "3e9"}, "tp: 3e9 is out of range (at most 2e+09)"},
      {{"num_gpus", "-1e12"}, "num_gpus: -1e12 is out of range"},
  };
  for (const auto& [cell, reason] : cases) {
    const auto rows = training_rows(first_row_with(cell.first, cell.second), "t.csv", shipped_catalog(), {});
    ASSERT_EQ(rows.size(), 1u) << cell.first;
    EXPECT_FALSE(rows[0].job.has_value()) << cell.first;
    EXPECT_EQ(rows[0].reason.rfind(reason, 0), 0u) << rows[0].reason;
  }
}

// pp 1519362 x vp 4096 in a row (libFuzzer/UBSan: a signed int overflow in the pipeline-slot
// check, 6.2e9 chunks) is read without overflow and refused by the layout check with its reason.
TEST(TrainingRows, HugePipelineCellsDoNotOverflow) {
  auto records = first_row_with("pp", "1519362");
  records[1].cells[28] = "4096";  // vp (column 29 of same_inputs.csv)
  ASSERT_EQ(records[0].cells[28], "vp");
  const auto rows = training_rows(records, "t.csv", shipped_catalog(), {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].job.has_value());
  EXPECT_EQ(rows[0].reason, "layout: tp*pp*cp = 1519362 does not divide 256 GPUs");
}

// num_layers 1717986905 (libFuzzer on validation_csv: the dense-layer count walked every layer,
// 17 s) is refused at once with the range every model source shares, 1 to 2^20 layers.
TEST(TrainingRows, AbsurdLayerCountIsRefusedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  const auto rows = training_rows(first_row_with("num_layers", "1717986905"), "t.csv", shipped_catalog(), {});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].job.has_value());
  EXPECT_NE(rows[0].reason.find("1717986905 layers is out of range; allowed: 1 to 1048576"), std::string::npos)
      << rows[0].reason;
}

// recipe_settings carries what the run's recipe files set where the table does not print it
// (validation/README.md): NeMo's SFT recipe (vp 20, fp8_params, Apex DistributedFusedAdam with
// dtype bf16) and Megatron-Bridge's GPT-OSS H100 preset (micro-batch 1, recompute_modules
// layernorm and moe_act) become the layout's fields.
TEST(TrainingRows, RecipeSettingsSetTheLayout) {
  auto rows = training_rows(first_row_with_recipe("vp=2; fp8_params=true; optimizer_dtype=bf16"), "t.csv",
                            shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_TRUE(rows[0].job->layout.fp8_param_storage);
  EXPECT_TRUE(rows[0].job->layout.bf16_optimizer_states);
  rows = training_rows(first_row_with_recipe("micro_batch_size=1; recompute_modules=layernorm,moe_act"), "t.csv",
                       shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  const auto& l = rows[0].job->layout;
  EXPECT_EQ(l.micro_batch, 1);
  EXPECT_EQ(l.recompute, parallelism::Recompute::Selective);
  EXPECT_TRUE(l.recomputes(parallelism::RecomputeModule::Layernorm));
  EXPECT_TRUE(l.recomputes(parallelism::RecomputeModule::MoeAct));
  EXPECT_FALSE(l.recomputes(parallelism::RecomputeModule::CoreAttn));
}

// fp8_params and optimizer_dtype read the project's one vocabulary for each setting (core/vocabulary.hpp):
// a yes/no cell takes every yes/no word (yes, true, on, 1), as the job file and slurm.conf do, and
// the optimizer dtype the words of --optimizer-dtype (fp32/float32, bf16/bfloat16).
TEST(TrainingRows, RecipeSettingsReadTheSharedVocabulary) {
  auto rows =
      training_rows(first_row_with_recipe("fp8_params=yes; optimizer_dtype=bfloat16"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_TRUE(rows[0].job->layout.fp8_param_storage);
  EXPECT_TRUE(rows[0].job->layout.bf16_optimizer_states);
  rows = training_rows(first_row_with_recipe("fp8_params=off; optimizer_dtype=FP32"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_FALSE(rows[0].job->layout.fp8_param_storage);
  EXPECT_FALSE(rows[0].job->layout.bf16_optimizer_states);
}

// NeMo's FP8 performance recipes reduce gradients in 16 bits (scripts/performance/helpers.py,
// set_primary_perf_configs: grad_reduce_in_fp32 = False) and torchtitan's async-TP rows overlap the
// TP collectives: both are recipe settings of the row, in the shared yes/no vocabulary.
TEST(TrainingRows, RecipeSettingsSetGradientReduceAndTpOverlap) {
  auto rows =
      training_rows(first_row_with_recipe("grad_reduce_in_fp32=false; tp_overlap=no"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_TRUE(rows[0].job->layout.bf16_grad_reduce);
  EXPECT_FALSE(rows[0].job->layout.overlap_tp_comm);
  rows = training_rows(first_row_with_recipe("grad_reduce_in_fp32=yes; tp_overlap=on"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_FALSE(rows[0].job->layout.bf16_grad_reduce);
  EXPECT_EQ(rows[0].job->layout.overlap_tp_comm, rows[0].job->layout.tp > 1);  // one TP rank has nothing to overlap
}

// document_tokens=N (SFT sequence packing: documents of N tokens packed into each sequence) is set
// on the job; without it a row is one document per sequence (0).
TEST(TrainingRows, RecipeSettingsSetPackedDocumentLength) {
  auto rows = training_rows(first_row_with_recipe("document_tokens=250"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_EQ(rows[0].job->document_tokens, 250);
  rows = training_rows(first_row_with_recipe(""), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_EQ(rows[0].job->document_tokens, 0);
}

// Megatron-Bridge's 26.06 MoE presets (v0.5.1 scripts/performance/configs: moe_a2a_overlap,
// cuda_graph_impl "full_iteration", cutedsl_fused_grouped_mlp, fp8_dot_product_attention) set the
// layout's four switches; "transformer_engine" (graphs over chosen layer parts) is not the full step.
TEST(TrainingRows, RecipeSettingsSetMegatronBridgeMoeSwitches) {
  auto rows = training_rows(first_row_with_recipe("cuda_graph_impl=full_iteration; moe_a2a_overlap=yes; "
                                                  "cutedsl_fused_grouped_mlp=true; fp8_dot_product_attention=on"),
                            "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  const auto& l = rows[0].job->layout;
  EXPECT_TRUE(l.recipe.full_iteration_graph);
  EXPECT_TRUE(l.recipe.overlap_ep_comm);
  EXPECT_TRUE(l.recipe.fused_grouped_mlp);
  EXPECT_TRUE(l.recipe.fp8_attention);
  rows = training_rows(first_row_with_recipe("cuda_graph_impl=transformer_engine"), "t.csv", shipped_catalog(), {});
  ASSERT_TRUE(rows[0].job.has_value()) << rows[0].reason;
  EXPECT_FALSE(rows[0].job->layout.recipe.full_iteration_graph);
  EXPECT_FALSE(rows[0].job->layout.recipe.overlap_ep_comm);
}

// A bad value names the column and what is allowed.
TEST(TrainingRows, BadRecipeSettingsAreInputErrors) {
  for (const char* bad :
       {"optimizer_dtype=fp16", "recompute_modules=attn", "vp=0", "fp8_params=maybe", "grad_reduce_in_fp32=half",
        "tp_overlap=2", "document_tokens=0", "document_tokens=2.5", "colour=red", "cuda_graph_impl=partial",
        "moe_a2a_overlap=2", "fp8_dot_product_attention=maybe", "compile_loss=maybe", "pp_partition_method=uniform",
        "loss_chunks=0", "loss_chunks=2.5", "loss_chunks=8x", "loss_chunks=2000000", "vp=2x"}) {
    try {
      training_rows(first_row_with_recipe(bad), "t.csv", shipped_catalog(), {});
      ADD_FAILURE() << bad;
    } catch (const core::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("recipe_settings"), std::string::npos) << e.what();
    }
  }
  // The refusal lists the vocabulary's words, aliases included.
  try {
    training_rows(first_row_with_recipe("optimizer_dtype=fp16"), "t.csv", shipped_catalog(), {});
    ADD_FAILURE() << "optimizer_dtype=fp16 accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(core::kOptimizerDtypeWords.allowed()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp32 (float32), bf16 (bfloat16)"), std::string::npos) << e.what();
  }
}

// A dense GPT row that states its size but not its layers (BigScience's tr11 topology tables:
// "the number of layers had to be tweaked to fit PP and NHIDDEN was fixed") gets them from
// Megatron's count P = L (12 h^2 + 13 h) + (V + s) h: 200B at h 14400, V 250,000, s 2048 gives
// L = 78.9, at pp 4 the nearest multiple of 4, 80 (the chronicle's 200B run: "PP=10, NLAYERS=80");
// 187B at h 13824 gives 80.0. Without a size, or for a gated MLP, the row says which cell is missing.
TEST(TrainingRows, LayersFromTheStatedSizeOfADenseGpt) {
  auto row = [](const std::string& model, const std::string& hidden, const std::string& pp, const std::string& ffn = "",
                const std::string& params = "", const std::string& kv_heads = "") {
    auto records = first_row_with("", "");
    const auto& header = records[0].cells;
    for (const auto& [column, value] : std::vector<std::pair<std::string, std::string>>{{"model", model},
                                                                                        {"num_layers", ""},
                                                                                        {"hidden_size", hidden},
                                                                                        {"ffn_hidden_size", ffn},
                                                                                        {"num_attention_heads", "64"},
                                                                                        {"num_kv_heads", kv_heads},
                                                                                        {"vocab_size", "250000"},
                                                                                        {"seq_len", "2048"},
                                                                                        {"moe_num_experts", ""},
                                                                                        {"moe_topk", ""},
                                                                                        {"moe_expert_ffn", ""},
                                                                                        {"moe_shared_expert_ffn", ""},
                                                                                        {"params_total", params},
                                                                                        {"arch_type", "dense"},
                                                                                        {"num_gpus", "384"},
                                                                                        {"global_batch_size", "2040"},
                                                                                        {"micro_batch_size", "1"},
                                                                                        {"grad_accum", ""},
                                                                                        {"tp", "8"},
                                                                                        {"pp", pp},
                                                                                        {"vp", ""},
                                                                                        {"cp", "1"},
                                                                                        {"ep", "1"},
                                                                                        {"etp", ""},
                                                                                        {"dp", ""}}) {
      const auto it = std::find(header.begin(), header.end(), column);
      EXPECT_NE(it, header.end()) << column;
      records[1].cells[static_cast<std::size_t>(it - header.begin())] = value;
    }
    const auto rows = training_rows(records, "t.csv", shipped_catalog(), {});
    EXPECT_EQ(rows.size(), 1u);
    return rows.at(0);
  };
  const auto gpt200 = row("test GPT 200B", "14400", "4");
  ASSERT_TRUE(gpt200.job) << gpt200.reason;
  EXPECT_EQ(gpt200.job->model.num_layers, 80);
  EXPECT_NE(gpt200.layers_derived_from.find("gives 78.9, the nearest multiple of pp 4"), std::string::npos)
      << gpt200.layers_derived_from;
  const auto gpt187 = row("test GPT 187B", "13824", "8");
  ASSERT_TRUE(gpt187.job) << gpt187.reason;
  EXPECT_EQ(gpt187.job->model.num_layers, 80);
  // params_total, where given, is the size (its first word): 176B at h 14336, V 250,000, s 2048 gives
  // 69.9, so 72 at pp 12 and 70 at pp 2.
  const auto stated = row("test GPT", "14336", "12", "", "176B (176,247M)");
  ASSERT_TRUE(stated.job) << stated.reason;
  EXPECT_EQ(stated.job->model.num_layers, 72);
  const auto pp2 = row("test GPT", "14336", "2", "", "176B");
  ASSERT_TRUE(pp2.job) << pp2.reason;
  EXPECT_EQ(pp2.job->model.num_layers, 70);
  // A later word of the name that is not a size leaves the size as read.
  const auto worded = row("test GPT 200B 2nd-web", "14400", "4");
  ASSERT_TRUE(worded.job) << worded.reason;
  EXPECT_EQ(worded.job->model.num_layers, 80);
  // Without a size, or where the count does not hold, the reason says why.
  const std::vector<std::pair<std::string, decltype(row("", "", ""))>> refused{
      {"no params_total", row("test GPT", "14400", "4")},
      {"GELU MLP and tied embeddings", row("Llama 200B", "14400", "4")},
      {"ffn_hidden_size 50000 is not 4 x hidden_size", row("test GPT 200B", "14400", "4", "50000")},
      {"params_total '~200B' is not a count", row("test GPT", "14400", "4", "", "~200B")},
      {"grouped-query attention", row("test GPT 200B", "14400", "4", "", "", "8")},
      {"the stated 0.001B parameters give -1.46 layers", row("test GPT 0.001B", "14400", "4")}};
  for (const auto& [why, r] : refused) {
    EXPECT_FALSE(r.job) << why;
    EXPECT_EQ(r.reason.rfind("num_layers missing and not derivable: ", 0), 0u) << r.reason;
    EXPECT_NE(r.reason.find(why), std::string::npos) << r.reason;
  }
  // A row that states its layers keeps them.
  EXPECT_TRUE(first_job_with({{"num_layers", "94"}}).model.num_layers == 94);
}

// A model cell that no model can be built from names its CSV column in the row's reason.
TEST(TrainingRows, ModelErrorsNameTheField) {
  const auto rows = training_rows(first_row_with("num_attention_heads", "0"), "t.csv", shipped_catalog(), {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].job);
  EXPECT_EQ(rows[0].reason.rfind("model: num_attention_heads: ", 0), 0u) << rows[0].reason;
}

// Compute capability 10.0 is B200 (179 GiB visible) or the GB200's Blackwell (185 GiB): a stated
// capacity above 182 GiB picks the GB200 (torchtitan's NVFP4 table: 110.95 GiB is 60.2%, 184.3 GiB).
TEST(TrainingRows, Sm100MapsToB200OrGb200ByItsCapacity) {
  auto records = first_row_with("hardware", "NVIDIA Blackwell SM100-class (capacity ~184 GiB implied by % column)");
  EXPECT_EQ(training_rows(records, "t.csv", shipped_catalog(), {}).at(0).system, "gb200-nvl72");
  records = first_row_with("hardware", "NVIDIA SM100");
  EXPECT_EQ(training_rows(records, "t.csv", shipped_catalog(), {}).at(0).system, "dgx-b200");
  records = first_row_with("hardware", "SM100 184GiB");
  EXPECT_EQ(training_rows(records, "t.csv", shipped_catalog(), {}).at(0).system, "gb200-nvl72");
  records = first_row_with("hardware", "SM100, 96 GiB used of 184.3 GiB");
  EXPECT_EQ(training_rows(records, "t.csv", shipped_catalog(), {}).at(0).system, "gb200-nvl72");
  records = first_row_with("hardware", "SM100 (179 GiB)");
  EXPECT_EQ(training_rows(records, "t.csv", shipped_catalog(), {}).at(0).system, "dgx-b200");
}

// recipe_settings loss_chunks: torchtitan's ChunkedLossWrapper num_chunks.
TEST(TrainingRows, RecipeSettingsSetLossChunks) {
  EXPECT_EQ(first_job_with({}, "loss_chunks=8").layout.recipe.loss_chunks, 8);
  EXPECT_EQ(first_job_with({}).layout.recipe.loss_chunks, 1);
}

// Rows run with Megatron-LM of 2021-2022 ("Megatron-LM (2021)", "(2022)": SC21, Korthikanti et al.)
// read as the megatron-legacy stack and take its conventions where the row is silent: no sequence
// parallelism (it arrived with Korthikanti et al.), plain DDP (no distributed optimizer), and for
// FP16 a 16-bit gradient reduce (accumulate_allreduce_grads_in_fp32 was forced on only for BF16).
// A row that names sequence parallelism keeps it; today's Megatron rows keep SP and ZeRO-1.
TEST(TrainingRows, MegatronLmOf2021ReadsAsTheLegacyStack) {
  const auto with = [](const std::vector<std::pair<std::string, std::string>>& cells) { return first_job_with(cells); };
  const std::pair<std::string, std::string> tp2{"tp", "2"}, no_sp{"sp", ""}, no_shard{"fsdp_or_zero", ""};
  const auto legacy =
      with({{"framework", "Megatron-LM (2021)"}, {"precision", "FP16 mixed precision"}, tp2, no_sp, no_shard});
  EXPECT_EQ(legacy.stack, "megatron-legacy");
  EXPECT_FALSE(legacy.layout.sequence_parallel);
  EXPECT_EQ(legacy.layout.sharding, parallelism::Sharding::None);
  EXPECT_EQ(legacy.layout.precision, core::Precision::FP16);
  EXPECT_TRUE(legacy.layout.bf16_grad_reduce);
  const auto with_sp = with({{"framework", "Megatron-LM (2022)"}, {"precision", "BF16"}, tp2, {"sp", "1"}, no_shard});
  EXPECT_EQ(with_sp.stack, "megatron-legacy");
  EXPECT_TRUE(with_sp.layout.sequence_parallel);
  EXPECT_FALSE(with_sp.layout.bf16_grad_reduce);  // BF16: fp32 gradient reduce
  const auto today = with({{"framework", "Megatron-Core r0.8.0"}, tp2, no_sp, no_shard});
  EXPECT_EQ(today.stack, "megatron");
  EXPECT_TRUE(today.layout.sequence_parallel);
  EXPECT_EQ(today.layout.sharding, parallelism::Sharding::DistributedOptimizer);
}

// Megatron-DeepSpeed rows (BLOOM's 2022 fork) read as the megatron-legacy stack: no sequence
// parallelism, every layer recomputed where the row is silent, and DeepSpeed's pipeline split by
// layer type (GPTModelPipe's default partition_method 'type:transformer': Layout::greedy_split);
// recipe_settings' pp_partition_method=type:transformer|embedding adds the two tied-embedding slots.
// "zero1" cells (BF16_Optimizer's "zero1-equivalent" too) are ZeRO-1.
TEST(TrainingRows, MegatronDeepSpeedRowsSplitTheirPipelineAsDeepSpeed) {
  const std::vector<std::pair<std::string, std::string>> cells = {
      {"framework", "Megatron-DeepSpeed"},
      {"num_gpus", "96"},
      {"tp", "4"},
      {"pp", "12"},
      {"vp", ""},
      {"cp", "1"},
      {"ep", "1"},
      {"etp", "1"},
      {"dp", ""},
      {"sp", ""},
      {"recompute", ""},
      {"fsdp_or_zero", "zero1-equivalent (BF16_Optimizer)"}};
  const auto plain = first_job_with(cells);
  EXPECT_EQ(plain.stack, "megatron-legacy");
  EXPECT_FALSE(plain.layout.sequence_parallel);
  EXPECT_EQ(plain.layout.recompute, parallelism::Recompute::Full);
  EXPECT_EQ(plain.layout.sharding, parallelism::Sharding::DistributedOptimizer);
  EXPECT_TRUE(plain.layout.greedy_split);
  EXPECT_FALSE(plain.layout.embedding_slot);
  const auto slots = first_job_with(cells, "pp_partition_method=type:transformer|embedding; compile_loss=yes");
  EXPECT_TRUE(slots.layout.recipe.compiled_loss);
  EXPECT_TRUE(slots.layout.greedy_split);
  EXPECT_TRUE(slots.layout.embedding_slot);
  EXPECT_TRUE(slots.layout.loss_slot);
  try {
    training_rows(first_row_with_recipe("pp_partition_method=parameters"), "t.csv", shipped_catalog(), {});
    ADD_FAILURE() << "pp_partition_method=parameters accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("type:transformer, type:transformer|embedding"), std::string::npos)
        << e.what();
  }
}

// torchtitan splits each data-parallel rank's batch into pp x stages-per-rank micro-batches when no
// micro-batch size is given (pipeline_parallel_microbatches defaults to num_total_stages): 16 GPUs
// at pp 2 give dp 8, a local batch of 256 / 8 = 32, so 1F1B runs 2 micro-batches of 16 and an
// interleaved schedule (2 stages per rank) 4 of 8. A stated micro-batch size wins, and Megatron
// rows, whose recipes always state it, keep 1.
TEST(TrainingRows, TorchtitanSplitsTheLocalBatchIntoOneMicroBatchPerStage) {
  auto layout = [](const std::string& framework, const std::string& vp, const std::string& mbs) {
    return first_job_with({{"framework", framework},
                           {"num_gpus", "16"},
                           {"global_batch_size", "256"},
                           {"micro_batch_size", mbs},
                           {"grad_accum", ""},
                           {"tp", "1"},
                           {"pp", "2"},
                           {"vp", vp},
                           {"cp", "1"},
                           {"ep", "1"},
                           {"etp", "1"},
                           {"dp", ""}})
        .layout;
  };
  const auto one_f_one_b = layout("torchtitan (FSDP2)", "", "");
  EXPECT_EQ(one_f_one_b.dp, 8);
  EXPECT_EQ(one_f_one_b.micro_batch, 16);
  EXPECT_EQ(one_f_one_b.micro_batches(), 2);
  const auto interleaved = layout("torchtitan (FSDP2)", "interleaved (stages/rank not stated)", "");
  EXPECT_EQ(interleaved.vp, 2);
  EXPECT_EQ(interleaved.micro_batch, 8);
  EXPECT_EQ(layout("torchtitan (FSDP2)", "", "2").micro_batch, 2);
  EXPECT_EQ(layout("Megatron-Core r0.8.0", "", "").micro_batch, 1);
}

// A row takes the architectural details of the preset with its shape, but Nemotron keeps its own
// untied output layer (Nemotron-4 15B report, arXiv:2402.16819, Sec. 2) although its 22B has the
// shape of SC21's tied 18.4B GPT (40 layers, hidden 6144, 48 heads, GeLU FFN of 4h).
TEST(TrainingRows, NemotronKeepsItsUntiedOutputLayer) {
  auto job = [](const std::string& model) {
    return first_job_with({{"model", model},
                           {"arch_type", "dense"},
                           {"num_layers", "40"},
                           {"hidden_size", "6144"},
                           {"ffn_hidden_size", "24576"},
                           {"num_attention_heads", "48"},
                           {"num_kv_heads", "48"},
                           {"vocab_size", "256000"},
                           {"moe_num_experts", ""},
                           {"moe_topk", ""},
                           {"moe_expert_ffn", ""},
                           {"num_gpus", "64"},
                           {"tp", "2"},
                           {"pp", "4"},
                           {"vp", ""},
                           {"ep", "1"},
                           {"etp", "1"},
                           {"dp", ""}});
  };
  EXPECT_FALSE(job("Nemotron3-22B").model.tied_embeddings);
  EXPECT_TRUE(job("GPT 18.4B").model.tied_embeddings);
}

// A missing architecture number is taken from the preset the row's published model name maps to
// (config::preset_for_published_name), or the row is refused naming the column: never a default.
// The test row is Qwen3-235B-A22B (vocabulary 151,936 in its config.json and in the preset).
TEST(TrainingRows, AMissingVocabularyComesFromTheNamedPresetOrRefusesTheRow) {
  const auto named = first_job_with({{"vocab_size", ""}, {"model", "Qwen/Qwen3-235B-A22B"}});
  EXPECT_EQ(named.model.vocab, 151936);

  const auto rows =
      training_rows(first_row_with("vocab_size", ""), "t.csv", shipped_catalog(), {});  // "Qwen3-235B-A22B" maps too
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].job.has_value()) << rows[0].reason;

  auto unnamed = first_row_with("vocab_size", "");
  const auto& header = unnamed[0].cells;
  const auto model_col = static_cast<std::size_t>(std::find(header.begin(), header.end(), "model") - header.begin());
  unnamed[1].cells[model_col] = "Some-Private-MoE";
  const auto refused = training_rows(unnamed, "t.csv", shipped_catalog(), {});
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_FALSE(refused[0].job.has_value());
  EXPECT_NE(refused[0].reason.find("vocab_size missing"), std::string::npos) << refused[0].reason;
  EXPECT_NE(refused[0].reason.find("Some-Private-MoE"), std::string::npos) << refused[0].reason;
}

// A row that gives its model's name and no dimensions (the hybrid Mamba/attention tables print the
// name only) is the preset the name maps to, Mamba-2 mixers included: its layers, width and
// vocabulary are the preset's.
TEST(TrainingRows, ARowWithANameAndNoDimensionsIsTheNamedPreset) {
  const auto job = first_job_with({{"model", "nvidia/Nemotron-H-8B-Base-8K"},
                                   {"num_layers", ""},
                                   {"hidden_size", ""},
                                   {"ffn_hidden_size", ""},
                                   {"num_attention_heads", ""},
                                   {"num_kv_heads", ""},
                                   {"vocab_size", ""},
                                   {"moe_num_experts", ""},
                                   {"moe_topk", ""},
                                   {"moe_expert_ffn", ""},
                                   {"moe_shared_expert_ffn", ""},
                                   {"ep", "1"}});
  const auto preset = load_model("nemotron-h-8b");
  EXPECT_EQ(job.model.num_layers, preset.num_layers);
  EXPECT_EQ(job.model.hidden, preset.hidden);
  EXPECT_EQ(job.model.vocab, preset.vocab);
  EXPECT_TRUE(job.model.ssm.has_value());
  EXPECT_EQ(job.model.name, "nvidia/Nemotron-H-8B-Base-8K");
}

// Without a stated FFN width a GPT (GELU MLP) row takes GPT's d_ff = 4 d_model (Brown et al. 2020,
// Table 2.1); a gated-MLP row with no preset to take it from is refused.
TEST(TrainingRows, AMissingFfnWidthIsGptsRuleOrARefusal) {
  auto gated = first_row_with("ffn_hidden_size", "");
  const auto& header = gated[0].cells;
  auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  for (const char* c : {"moe_num_experts", "moe_topk", "moe_expert_ffn", "moe_shared_expert_ffn"})
    gated[1].cells[col(c)] = "";
  gated[1].cells[col("ep")] = "1";
  gated[1].cells[col("model")] = "Some-Private-Llama";
  const auto refused = training_rows(gated, "t.csv", shipped_catalog(), {});
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].reason.find("ffn_hidden_size missing"), std::string::npos) << refused[0].reason;

  gated[1].cells[col("model")] = "Some-Private-GPT";
  const auto gpt = training_rows(gated, "t.csv", shipped_catalog(), {});
  ASSERT_EQ(gpt.size(), 1u);
  ASSERT_TRUE(gpt[0].job.has_value()) << gpt[0].reason;
  EXPECT_EQ(gpt[0].job->model.ffn_hidden, 4 * gpt[0].job->model.hidden);
}

}  // namespace
}  // namespace fmsim::config
