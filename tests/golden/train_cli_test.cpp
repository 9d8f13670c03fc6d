// fmsim train and validate training: text and JSON output, trace and metrics files, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

const std::vector<std::string> kTrainJob = {
    "train", "--model",     "llama3.1-70b", "--cluster", "p5.48xlarge:64", "--tp", "8",     "--pp", "4",
    "--vp",  "5",           "--gbs",        "512",       "--mbs",          "1",    "--seq", "8192", "--precision",
    "fp8",   "--recompute", "selective"};

TEST(TrainCli, PrintsStepBreakdownAndMemory) {
  const auto r = run_fmsim(kTrainJob);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("step time"));
  EXPECT_THAT(r.out, HasSubstr("tokens/s/GPU"));
  EXPECT_THAT(r.out, HasSubstr("pipeline bubble"));
  EXPECT_THAT(r.out, HasSubstr("memory per GPU"));
  EXPECT_THAT(r.out, HasSubstr("tp8 pp4 vp5"));
}

// JSON: the breakdown sums to the step time; tokens/s/GPU = gbs x seq / (time x GPUs).
TEST(TrainCli, JsonIsConsistent) {
  auto args = kTrainJob;
  args.push_back("--json");
  const auto r = run_fmsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  double sum = 0;
  for (const auto& [k, v] : j["breakdown_s"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, j["step_time_s"].get<double>(), 1e-6 * sum);
  EXPECT_NEAR(j["tokens_per_s_per_gpu"].get<double>(), 512.0 * 8192 / (j["step_time_s"].get<double>() * 512), 1e-6);
  EXPECT_EQ(j["layout"]["dp"], 16);
  EXPECT_GT(j["mfu"].get<double>(), 0.05);
  EXPECT_LT(j["mfu"].get<double>(), 0.7);
}

TEST(TrainCli, WritesPerfettoTraceAndPrometheusMetrics) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "fmsim_train_cli";
  std::filesystem::create_directories(dir);
  const auto trace = (dir / "step.json").string();
  const auto metrics = (dir / "step.prom").string();
  auto args = kTrainJob;
  args.insert(args.end(), {"--trace", trace, "--metrics", metrics});
  const auto r = run_fmsim(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream t(trace);
  const auto j = nlohmann::json::parse(t);
  ASSERT_TRUE(j.contains("traceEvents"));
  int complete = 0;
  for (const auto& e : j["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_GT(complete, 100);
  std::ifstream m(metrics);
  std::stringstream ss;
  ss << m.rdbuf();
  EXPECT_THAT(ss.str(), HasSubstr("# TYPE fmsim_step_time_seconds gauge"));
  EXPECT_THAT(ss.str(), HasSubstr("fmsim_memory_bytes{"));
}

TEST(ValidateTrainingCli, SameInputsDifferentMeasurementsSetAFloor) {
  // V080 and V131 are the same Qwen3-235B recipe on 256 GB200 in two NeMo containers (17.770 s and
  // 23.076 s); V191 is a different layout. One prediction p for both has a worst |error| of at least
  // (max - min) / (max + min) = 5.306 / 40.846 = 13.0%.
  const auto r = run_fmsim(
      {"validate", "training", "--csv", fmsim::testing::source_path("tests/data/training/same_inputs.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["repeatability"].size(), 1u);
  const auto& g = j["repeatability"][0];
  EXPECT_EQ(g["rows"], nlohmann::json::array({"V080", "V131"}));
  EXPECT_DOUBLE_EQ(g["measured_min_s"].get<double>(), 17.7701);
  EXPECT_DOUBLE_EQ(g["measured_max_s"].get<double>(), 23.0761);
  EXPECT_NEAR(g["floor_abs_error_pct"].get<double>(), 100.0 * (23.0761 - 17.7701) / (23.0761 + 17.7701), 1e-9);
  // The floor is a bound on every predictor: the simulator's own worst error in the group is above it.
  double worst = 0.0;
  for (const auto& row : j["rows"]) {
    if (row["row_id"] == "V080" || row["row_id"] == "V131")
      worst = std::max(worst, std::fabs(row["error_pct"].get<double>()));
  }
  EXPECT_GE(worst, g["floor_abs_error_pct"].get<double>());
}

TEST(TrainCli, JobFileWithFlagOverride) {
  const auto r =
      run_fmsim({"train", "--job", fmsim::testing::source_path("examples/llama70b_job.yaml"), "--pp", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"]["pp"], 8);
  EXPECT_EQ(j["model"], "llama3.1-70b");
}

// --stack megatron-legacy (Megatron-LM of 2021-2022) takes its conventions where no flag says:
// no sequence parallelism, plain DDP, and an FP16 run's 16-bit gradient reduce, which makes the
// SC21 1T step of `validate training` (row V245: 97.9 s, the paper's formula gives 102.6 s)
// reproducible from the command line. Flags win.
TEST(TrainCli, LegacyMegatronStackConventions) {
  const std::vector<std::string> sc21{"train",
                                      "--model",
                                      "megatron-sc21-gpt-1008b",
                                      "--cluster",
                                      "dgx-a100:384",
                                      "--tp",
                                      "8",
                                      "--pp",
                                      "64",
                                      "--gbs",
                                      "3072",
                                      "--seq",
                                      "2048",
                                      "--precision",
                                      "fp16",
                                      "--recompute",
                                      "full",
                                      "--stack",
                                      "megatron-legacy",
                                      "--json"};
  const auto r = run_fmsim(sc21);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"]["sequence_parallel"], false);
  EXPECT_EQ(j["layout"]["sharding"], "ddp");
  const auto v = run_fmsim({"validate", "training", "--rows", "V245", "--json"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const auto row = nlohmann::json::parse(v.out)["rows"][0];
  ASSERT_EQ(row["row_id"], "V245");
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), row["predicted_step_time_s"].get<double>());
  auto pinned = sc21;
  pinned.insert(pinned.end(), {"--sharding", "zero1"});
  const auto z = run_fmsim(pinned);
  ASSERT_EQ(z.exit_code, 0) << z.err;
  EXPECT_EQ(nlohmann::json::parse(z.out)["layout"]["sharding"], "zero1");
}

// --moe-dispatcher: a deduplicating dispatcher sends a token once per destination node, so
// expert parallelism across two nodes gets cheaper; inside one node (ep 8) nothing changes.
TEST(TrainCli, MoeDispatcherMattersAcrossNodesOnly) {
  auto ep_time = [](const std::string& cluster, const std::string& ep, const std::string& dispatcher) {
    const auto r = run_fmsim({"train", "--model", "qwen3-30b-a3b", "--cluster", cluster, "--ep", ep, "--gbs", "256",
                              "--precision", "fp8", "--recompute", "none", "--moe-dispatcher", dispatcher, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["layout"]["moe_dispatcher"], dispatcher);
    return j["breakdown_s"]["ep_comm"].get<double>();
  };
  EXPECT_LT(ep_time("dgx-h100:2", "16", "deduplicated"), 0.5 * ep_time("dgx-h100:2", "16", "alltoall"));
  EXPECT_DOUBLE_EQ(ep_time("dgx-h100:1", "8", "deduplicated"), ep_time("dgx-h100:1", "8", "alltoall"));
}

// --expert-load-cv c: the busiest of ep ranks carries 1 + z_ep c / sqrt(E/ep) of the mean routed
// load (workload::expert_load_factor, shared with serving and RL); its all-to-all grows by that
// factor. Qwen3-30B-A3B (128 experts) with ep 16: z_16 = 1.766 (expected maximum of 16 standard
// normals), c = 2.14 gives 1 + 1.766 x 2.14 / sqrt(8) = 2.336. A job file's
// parallelism.expert_load_cv reads the same; a negative CV exits 2 naming the flag.
TEST(TrainCli, ExpertLoadCvScalesTheBusiestRank) {
  auto ep_time = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100:2",  "--ep", "16",
                                     "--gbs", "256",     "--precision",   "fp8",       "--recompute", "none", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["breakdown_s"]["ep_comm"].get<double>();
  };
  const double balanced = ep_time({});
  EXPECT_NEAR(ep_time({"--expert-load-cv", "2.14"}) / balanced, 1.0 + 1.766 * 2.14 / std::sqrt(8.0), 0.03);
  const std::string path = ::testing::TempDir() + "fmsim_load_cv_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nparallelism: {expert_load_cv: 2.14}\n";
  EXPECT_DOUBLE_EQ(ep_time({"--job", path}), ep_time({"--expert-load-cv", "2.14"}));
  const auto bad = run_fmsim({"train", "--model", "qwen3-30b-a3b", "--expert-load-cv", "-1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("--expert-load-cv"));
}

// Megatron-Bridge's MoE recipe switches as flags and job-file keys: --moe-a2a-overlap hides the
// all-to-all behind the layers' kernels, leaving megatron.ep_overlap_cost (0.15) of it where the
// kernels are longer (Qwen3-30B-A3B, ep 8 in one DGX-H100); --full-iteration-cuda-graph drops the
// per-MoE-layer host overhead from the compute, --fused-grouped-mlp the expert activation passes,
// and --fp8-attention (with FP8) speeds attention up. The layout line and the JSON name them.
TEST(TrainCli, MoeRecipeSwitchesFromFlagsAndJobFile) {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100:1",  "--ep", "8",
                                     "--gbs", "64",      "--precision",   "fp8",       "--recompute", "none", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto plain = run({});
  const auto overlap = run({"--moe-a2a-overlap"});
  EXPECT_NEAR(overlap["breakdown_s"]["ep_comm"].get<double>(), 0.15 * plain["breakdown_s"]["ep_comm"].get<double>(),
              1e-3 * plain["breakdown_s"]["ep_comm"].get<double>());
  EXPECT_EQ(overlap["layout"]["moe_a2a_overlap"], true);
  const auto all = run({"--moe-a2a-overlap", "--full-iteration-cuda-graph", "--fused-grouped-mlp", "--fp8-attention"});
  EXPECT_LT(all["breakdown_s"]["compute"].get<double>(), plain["breakdown_s"]["compute"].get<double>());
  EXPECT_EQ(all["layout"]["full_iteration_cuda_graph"], true);
  EXPECT_EQ(all["layout"]["fp8_attention"], true);
  const std::string path = ::testing::TempDir() + "fmsim_moe_switches_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmoe_a2a_overlap: true\nfull_iteration_cuda_graph: true\n"
                         "fused_grouped_mlp: true\nfp8_attention: true\n";
  EXPECT_DOUBLE_EQ(run({"--job", path})["step_time_s"].get<double>(), all["step_time_s"].get<double>());
  const auto text = run_fmsim({"train", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100:1", "--ep", "8", "--gbs",
                               "64", "--moe-a2a-overlap", "--full-iteration-cuda-graph"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("| full-iteration CUDA graph | MoE a2a overlap"));
}

// --compile-loss (job key compile_loss): torchtitan's compiled loss keeps 4 B per logit instead of
// the eager loss's 10 (16-bit logits, fp32 copy, fp32 gradient), so the Llama 3.1 8B job on one
// p5.48xlarge (mbs 1, seq 8192, pp 1, tp 1: 8192 x 128256 logits) needs 6 x 8192 x 128256 bytes less;
// Megatron's fused loss (2 B) is left as it is. The layout line and the JSON name the switch.
TEST(TrainCli, CompiledLossKeepsFourBytesPerLogit) {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1",
                                     "--mbs", "1",       "--seq",       "8192",      "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto eager = run({"--stack", "torchtitan", "--sharding", "fsdp"});
  const auto compiled = run({"--stack", "torchtitan", "--sharding", "fsdp", "--compile-loss"});
  EXPECT_NEAR(eager["memory_bytes"]["buffers"].get<double>() - compiled["memory_bytes"]["buffers"].get<double>(),
              6.0 * 8192 * 128256, 1e3);
  EXPECT_EQ(compiled["layout"]["compile_loss"], true);
  EXPECT_EQ(eager["layout"]["compile_loss"], false);
  const auto megatron = run({});
  const auto megatron_compiled = run({"--compile-loss"});
  EXPECT_DOUBLE_EQ(megatron["memory_bytes"]["buffers"].get<double>(),
                   megatron_compiled["memory_bytes"]["buffers"].get<double>());
  const std::string path = ::testing::TempDir() + "fmsim_compile_loss_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\ncompile_loss: true\n";
  EXPECT_DOUBLE_EQ(
      run({"--stack", "torchtitan", "--sharding", "fsdp", "--job", path})["memory_bytes"]["buffers"].get<double>(),
      compiled["memory_bytes"]["buffers"].get<double>());
  const auto text = run_fmsim({"train", "--stack", "torchtitan", "--sharding", "fsdp", "--compile-loss"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("| compiled loss"));
}

// --loss-chunks N (job key loss_chunks): torchtitan's ChunkedLossWrapper runs the head and loss of
// one chunk of tokens at a time, each backward before the next chunk: the eager loss's 10 B per
// logit for 8192 / 8 tokens, plus the fp32 8192 x 4096 buffer of the hidden states' gradient.
// The layout line and the JSON name it; 0 chunks, or chunks that do not divide a sequence, are exit
// 2 naming the flag, the key or the layout's reason.
TEST(TrainCli, ChunkedLossKeepsOneChunksLogits) {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"train",      "--model",    "llama3.1-8b", "--cluster", "p5.48xlarge:1",
                                     "--mbs",      "1",          "--seq",       "8192",      "--stack",
                                     "torchtitan", "--sharding", "fsdp",        "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto whole = run({});
  const auto chunked = run({"--loss-chunks", "8"});
  EXPECT_NEAR(whole["memory_bytes"]["buffers"].get<double>() - chunked["memory_bytes"]["buffers"].get<double>(),
              10.0 * 8192 * 128256 * 7 / 8 - 4.0 * 8192 * 4096, 1e3);
  EXPECT_EQ(chunked["layout"]["loss_chunks"], 8);
  EXPECT_EQ(whole["layout"]["loss_chunks"], 1);
  const std::string path = ::testing::TempDir() + "fmsim_loss_chunks_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nloss_chunks: 8\n";
  EXPECT_DOUBLE_EQ(run({"--job", path})["memory_bytes"]["buffers"].get<double>(),
                   chunked["memory_bytes"]["buffers"].get<double>());
  const auto text = run_fmsim({"train", "--stack", "torchtitan", "--sharding", "fsdp", "--loss-chunks", "8"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("| loss in 8 chunks"));
  const auto zero = run_fmsim({"train", "--loss-chunks", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("--loss-chunks"));
  // Another stack is taken to chunk its loss, with a warning saying whose technique it is.
  const auto megatron = run_fmsim({"train", "--loss-chunks", "8"});
  EXPECT_EQ(megatron.exit_code, 0) << megatron.err;
  EXPECT_THAT(megatron.err, HasSubstr("torchtitan's (ChunkedLossWrapper); stack megatron"));
  // torchtitan needs equal chunks: 3 do not divide a 4096-token sequence.
  const auto uneven = run_fmsim({"train", "--seq", "4096", "--loss-chunks", "3"});
  EXPECT_EQ(uneven.exit_code, 2);
  EXPECT_THAT(uneven.err, HasSubstr("loss chunks 3 do not divide the 4096 tokens"));
  std::ofstream(path) << "kind: TrainingJob\nloss_chunks: 0\n";
  const auto bad_key = run_fmsim({"train", "--job", path});
  EXPECT_EQ(bad_key.exit_code, 2);
  EXPECT_THAT(bad_key.err, HasSubstr("loss_chunks"));
}

// --pipeline-split (job key parallelism.pipeline_split) picks how the layers split over the stages:
// deepspeed fills ceil(80 / 12) = 7 layers per stage in order (3 on the last), nanotron balances by
// compute. The layout line and the JSON name it; a split no framework runs is exit 2 saying why
// (DeepSpeed's with virtual stages; at pp 24, 4 layers per stage leave the last stage none), and an
// unknown word lists the allowed ones.
TEST(TrainCli, PipelineSplitFlagAndJobKey) {
  const std::vector<std::string> base = {"train", "--model", "llama3.1-70b", "--cluster", "p4de.24xlarge:6",
                                         "--tp",  "4",       "--gbs",        "96"};
  auto run = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_fmsim(args);
  };
  const auto ds = run({"--pp", "12", "--pipeline-split", "deepspeed", "--json"});
  ASSERT_EQ(ds.exit_code, 0) << ds.err;
  const auto j = nlohmann::json::parse(ds.out);
  EXPECT_EQ(j["layout"]["pipeline_split"], "deepspeed");
  const std::string path = ::testing::TempDir() + "fmsim_pipeline_split_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nparallelism: {pipeline_split: deepspeed}\n";
  const auto from_file = run({"--pp", "12", "--job", path, "--json"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(from_file.out)["step_time_s"].get<double>(), j["step_time_s"].get<double>());
  const auto even = run({"--pp", "12", "--json"});
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_EQ(nlohmann::json::parse(even.out)["layout"]["pipeline_split"], "even");
  const auto text = run({"--pp", "12", "--pipeline-split", "nanotron"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("| nanotron pipeline split"));
  const auto interleaved = run({"--pp", "4", "--vp", "2", "--pipeline-split", "deepspeed"});
  EXPECT_EQ(interleaved.exit_code, 2);
  EXPECT_THAT(interleaved.err, HasSubstr("no virtual stages"));
  auto deep_args = base;
  deep_args[6] = "2";  // --tp 2 --pp 24: 48 GPUs
  for (const char* a : {"--pp", "24", "--pipeline-split", "deepspeed"}) deep_args.emplace_back(a);
  const auto deep = run_fmsim(deep_args);
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_THAT(deep.err, HasSubstr("leaves stages 20-23 no transformer layer"));  // 80 layers, 4 per stage
  // Either slot flag is DeepSpeed's 'type:transformer|embedding': both tied embedding layers weigh one.
  const auto slots =
      run({"--pp", "12", "--pipeline-split", "deepspeed", "--account-for-loss-in-pipeline-split", "--json"});
  ASSERT_EQ(slots.exit_code, 0) << slots.err;
  const auto sj = nlohmann::json::parse(slots.out);
  EXPECT_EQ(sj["layout"]["account_for_embedding_in_pipeline_split"], true);
  EXPECT_EQ(sj["layout"]["account_for_loss_in_pipeline_split"], true);
  const std::string disagree = ::testing::TempDir() + "fmsim_pipeline_split_slots.yaml";
  std::ofstream(disagree)
      << "kind: TrainingJob\nparallelism: {pipeline_split: deepspeed, "
         "account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: false}\n";
  const auto mixed = run({"--pp", "12", "--job", disagree});
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_THAT(mixed.err, HasSubstr("slot settings must agree"));
  const auto unknown = run({"--pp", "12", "--pipeline-split", "zigzag"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("allowed: even (megatron), deepspeed (type:transformer), nanotron (compute)"));
}

// The input embedding's fresh gradient (2 B x 128256 x 4096 = 0.98 GiB) on stage 0 of an 8-stage
// pipeline with tiny activations (seq 256, full recompute) is the peak: the JSON names it and the
// phase says how many other micro-batches are held (7 of 8).
TEST(TrainCli, EmbeddingGradientPeakIsNamed) {
  const auto r =
      run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p4de.24xlarge:1", "--pp", "8", "--recompute", "full",
                 "--gbs", "64", "--seq", "256", "--stack", "megatron-legacy", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["memory_bytes"]["embedding_grad"].get<double>(), 2.0 * 128256 * 4096, 1.0);
  EXPECT_EQ(j["memory_peak"]["stage"], 0);
  EXPECT_EQ(j["memory_peak"]["phase"], "input-embedding backward (its fresh gradient), 7 other micro-batches held");
  const auto lora =
      run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p4de.24xlarge:1", "--pp", "8", "--recompute", "full",
                 "--gbs", "64", "--seq", "256", "--stack", "megatron-legacy", "--task", "lora", "--json"});
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(lora.out)["memory_bytes"]["embedding_grad"].get<double>(), 0.0);
}

// A job file's parallelism.moe_dispatcher is read like the flag; without either, an MoE job
// reports the stack's dispatcher (Megatron: deduplicated) and a dense job none.
TEST(TrainCli, MoeDispatcherFromJobFileAndStack) {
  const std::string path = ::testing::TempDir() + "fmsim_moe_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: qwen3-30b-a3b\ncluster: dgx-h100:2\n"
                         "parallelism: {ep: 16, moe_dispatcher: alltoall}\nbatch: {global: 256}\n";
  const auto from_file = run_fmsim({"train", "--job", path, "--json"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(nlohmann::json::parse(from_file.out)["layout"]["moe_dispatcher"], "alltoall");
  const auto stack =
      run_fmsim({"train", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100:2", "--ep", "16", "--json"});
  ASSERT_EQ(stack.exit_code, 0) << stack.err;
  EXPECT_EQ(nlohmann::json::parse(stack.out)["layout"]["moe_dispatcher"], "deduplicated");
  const auto dense = run_fmsim({"train", "--json"});
  ASSERT_EQ(dense.exit_code, 0) << dense.err;
  EXPECT_TRUE(nlohmann::json::parse(dense.out)["layout"]["moe_dispatcher"].is_null());
}

// --fp8-recipe (or a job file's fp8_recipe): torchao's row-scaled recipe runs its FP8 GEMMs at
// hopper.fp8_rowwise_factor (< 1) of the per-tensor rate, so the same job is slower; the layout
// line and JSON name the recipe, and a BF16 job has none. The validation CSV's "FP8 float8
// rowwise" cells read as the same recipe.
TEST(TrainCli, Fp8RecipeFromFlagJobFileAndCsv) {
  auto run = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args{"train", "--model",    "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--seq",
                                  "8192",  "--sharding", "fsdp",        "--stack",   "torchtitan",    "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto tensorwise = run({"--precision", "fp8"});
  const auto rowwise = run({"--precision", "fp8", "--fp8-recipe", "rowwise"});
  EXPECT_EQ(tensorwise["layout"]["fp8_recipe"], "tensorwise");
  EXPECT_EQ(rowwise["layout"]["fp8_recipe"], "rowwise");
  EXPECT_GT(rowwise["step_time_s"].get<double>(), tensorwise["step_time_s"].get<double>());
  EXPECT_TRUE(run({"--fp8-recipe", "rowwise"})["layout"]["fp8_recipe"].is_null());

  const std::string path = ::testing::TempDir() + "fmsim_fp8_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ncluster: p5.48xlarge:1\nprecision: fp8\n"
                         "fp8_recipe: rowwise\n";
  const auto file = run_fmsim({"train", "--job", path});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_THAT(file.out, HasSubstr("| fp8-rowwise |"));

  const auto csv = run_fmsim(
      {"validate", "training", "--csv", FMSIM_SOURCE_DIR "/validation/training.csv", "--rows", "V268,V267", "--json"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto rows = nlohmann::json::parse(csv.out)["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_THAT(row["layout"].get<std::string>(), HasSubstr(row["row_id"] == "V268" ? "fp8-rowwise" : "fp8 "));
  }
}

struct BadCase {
  std::vector<std::string> args;
  std::string expected;
};

class TrainCliBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(TrainCliBadInput, ExitsTwoWithReason) {
  const auto r = run_fmsim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TrainCliBadInput,
    ::testing::Values(
        BadCase{{"train", "--model", "llama3.1-70b", "--cluster", "p5.48xlarge:3", "--tp", "3"}, "attention heads"},
        BadCase{{"train", "--model", "llama3.1-7b"}, "did you mean"},
        BadCase{{"train", "--cluster", "p5.48xlarg:2"}, "did you mean p5.48xlarge"},
        BadCase{{"train", "--precision", "fp9"}, "--precision"},
        BadCase{{"train", "--recompute", "some"}, "--recompute"},
        BadCase{{"train", "--sharding", "zero9"}, "--sharding"},
        BadCase{{"train", "--cluster", "p4d.24xlarge:1", "--precision", "fp8"}, "no fp8"},
        BadCase{{"train", "--cluster", "p5.48xlarge:1", "--gpus", "16"}, "--gpus"},
        BadCase{{"train", "--cluster", "p5.48xlarge:1", "--gbs", "7"}, "global batch"},
        BadCase{{"train", "--power-limit", "500"}, "--power-limit"},
        BadCase{{"train", "--stack", "jax"}, "unknown stack"},
        BadCase{{"train", "--moe-dispatcher", "deepep"}, "allowed: alltoall, deduplicated"},
        BadCase{{"train", "--precision", "fp8", "--fp8-recipe", "delayed"}, "--fp8-recipe"},
        BadCase{{"train", "--cluster", "p5.48xlarge:1", "--pp", "4", "--account-for-embedding-in-pipeline-split",
                 "--decoder-first-pipeline-num-layers", "4"},
                "Megatron-Core refuses"},
        BadCase{{"train", "--cluster", "p5.48xlarge:4", "--pp", "32", "--vp", "2"}, "a chunk would be empty"},
        BadCase{{"train", "--cluster", "p5.48xlarge:1", "--etp", "2"}, "needs a mixture-of-experts model"},
        BadCase{{"train", "--recompute", "full", "--recompute-modules", "mlp"}, "applies to selective recompute"},
        BadCase{{"train", "--recompute-modules", "attention"}, "--recompute-modules"},
        BadCase{{"train", "--calibration", FMSIM_SOURCE_DIR "/tests/data/training/calibration_missing_arch.yaml"},
                "missing architecture 'ampere'"},
        BadCase{{"validate", "training", "--csv", FMSIM_SOURCE_DIR "/validation/training.csv", "--rows", "V999"},
                "no row 'V999'"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return "case" + std::to_string(info.index); });

}  // namespace

// A published recipe may set vp with pp 1 (Megatron then interleaves nothing): accepted with a
// warning on stderr (and in the JSON's "warnings") and run as vp 1, the same step as without --vp;
// without it the JSON has no "warnings".
TEST(TrainCli, VirtualStagesWithoutPipelineWarnAndRun) {
  const auto a = fmsim::testing::run_fmsim(
      {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--vp", "4", "--json"});
  const auto b = fmsim::testing::run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.err.find("warning: --vp 4 with --pp 1"), std::string::npos) << a.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["step_time_s"], jb["step_time_s"]);
  ASSERT_EQ(ja["warnings"].size(), 1u);
  EXPECT_EQ(ja["warnings"][0], "--vp 4 with --pp 1 has no pipeline to interleave; running vp 1");
  EXPECT_FALSE(jb.contains("warnings"));
  EXPECT_EQ(b.err, "");
}

// Layouts as recipes write them: Llama 3.1 405B's 126 layers over pp 16 x vp 8 = 128 chunks run
// with the embedding and the loss as pipeline slots (Megatron-Core's account_for_*_in_pipeline_split,
// on by default exactly there); explicit first/last stage counts are shown on the layout line and in
// the JSON; --expert-tp is --etp, and ep may exceed dp x cp (MoE parallel folding: ep 64 over tp 2 x dp 32).
TEST(TrainCli, RecipeLayoutsRun) {
  const auto slots =
      fmsim::testing::run_fmsim({"train", "--model", "llama3.1-405b", "--cluster", "p5.48xlarge:256", "--tp", "8",
                                 "--pp", "16", "--vp", "8", "--gbs", "512", "--seq", "8192"});
  ASSERT_EQ(slots.exit_code, 0) << slots.err;
  EXPECT_THAT(slots.out, HasSubstr("tp8 pp16 vp8"));
  EXPECT_THAT(slots.out, HasSubstr("pipeline slots embedding+loss"));
  const auto counts = fmsim::testing::run_fmsim(
      {"train", "--model", "llama3.1-70b", "--cluster", "p5.48xlarge:8", "--tp", "8", "--pp", "4", "--gbs", "64",
       "--decoder-first-pipeline-num-layers", "18", "--decoder-last-pipeline-num-layers", "18", "--json"});
  ASSERT_EQ(counts.exit_code, 0) << counts.err;
  const auto j = nlohmann::json::parse(counts.out);
  EXPECT_EQ(j["layout"]["decoder_first_pipeline_num_layers"], 18);
  EXPECT_EQ(j["layout"]["account_for_embedding_in_pipeline_split"], false);
  const auto folded =
      fmsim::testing::run_fmsim({"train", "--model", "qwen3-235b-a22b", "--cluster", "p5en.48xlarge:8", "--tp", "2",
                                 "--pp", "1", "--ep", "64", "--expert-tp", "1", "--gbs", "64", "--seq", "4096"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  EXPECT_THAT(folded.out, HasSubstr("tp2 pp1 vp1 cp1 ep64 etp1 dp32"));
}

// --recompute-modules (Megatron-Core names) shows on the layout line and in the JSON; the peak's
// stage and phase and the largest micro-batch that fits are printed under the memory.
TEST(TrainCli, RecomputeModulesAndMemoryPeak) {
  const auto r = fmsim::testing::run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1",
                                            "--recompute-modules", "mlp,layernorm", "--seq", "8192"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("recompute selective (layernorm, mlp)"));
  EXPECT_THAT(r.out, HasSubstr("peak on pipeline stage 0 of 1"));
  EXPECT_THAT(r.out, HasSubstr("largest micro-batch that fits:"));
  const auto j = fmsim::testing::run_fmsim(
      {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--recompute-modules", "mlp", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["layout"]["recompute_modules"], nlohmann::json::array({"mlp"}));
  EXPECT_GE(doc["memory_peak"]["largest_fitting_micro_batch"].get<int>(), 1);
}
