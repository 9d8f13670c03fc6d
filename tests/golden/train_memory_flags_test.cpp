// `fmsim train`'s memory settings beyond the layout: FP8 parameters, 16-bit optimizer states,
// optimizer offload, MoE capacity padding and CUDA graphs (docs/models/training.md, "Memory per GPU").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

nlohmann::json train_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// --fp8-params (1 B weights, no FP8 cache) with --precision fp8, and --optimizer-dtype bf16 (6 B of
// optimizer states instead of 12) shrink the states; --optimizer-offload-fraction 1 moves them all
// to host memory and adds host-link time; --cuda-graphs adds static buffers; NCCL's buffers are in
// the JSON.
TEST(TrainMemoryFlags, StatesOffloadAndGraphs) {
  const auto base = train_json({"--precision", "fp8"});
  const auto small = train_json({"--precision", "fp8", "--fp8-params", "--optimizer-dtype", "bf16"});
  EXPECT_NEAR(small["memory_bytes"]["weights"].get<double>(), base["memory_bytes"]["weights"].get<double>() / 3.0, 1e6);
  EXPECT_LT(small["memory_bytes"]["optimizer"].get<double>(), 0.51 * base["memory_bytes"]["optimizer"].get<double>());
  const auto off = train_json({"--optimizer-offload-fraction", "1"});
  EXPECT_DOUBLE_EQ(off["memory_bytes"]["optimizer"].get<double>(), 0.0);
  EXPECT_GT(off["memory_bytes"]["host"].get<double>(), 0.0);
  EXPECT_GT(off["breakdown_s"]["offload"].get<double>(), 0.0);
  const auto graphs = train_json({"--cuda-graphs"});
  EXPECT_GT(graphs["memory_bytes"]["cuda_graphs"].get<double>(), 0.0);
  EXPECT_GT(base["memory_bytes"]["nccl"].get<double>(), 0.0);
}

// --grad-reduce-in-bf16 (Megatron-LM's flag; NeMo / Megatron-Bridge grad_reduce_in_fp32: false):
// under the distributed optimizer each GPU reduce-scatters its gradients (fp32: 4 B per parameter,
// 16-bit: 2 B) and all-gathers the updated 16-bit weights (2 B), so the data-parallel bytes go from
// 6 B to 4 B per parameter, two thirds; the job-file key grad_reduce_in_bf16 is the same setting.
TEST(TrainMemoryFlags, GradReduceInBf16CutsTheDataParallelBytes) {
  const auto fp32 = train_json({});
  const auto bf16 = train_json({"--grad-reduce-in-bf16"});
  EXPECT_NEAR(bf16["comm_bytes_per_gpu"]["dp"].get<double>(),
              fp32["comm_bytes_per_gpu"]["dp"].get<double>() * 4.0 / 6.0,
              1e-6 * fp32["comm_bytes_per_gpu"]["dp"].get<double>());
  const std::string path = ::testing::TempDir() + "fmsim_grad_reduce_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ncluster: p5.48xlarge:1\ngrad_reduce_in_bf16: true\n";
  const auto file = run_fmsim({"train", "--job", path, "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["comm_bytes_per_gpu"], bf16["comm_bytes_per_gpu"]);
}

// A job file takes the same settings under the flags' names (fp8_params, optimizer_dtype,
// optimizer_offload_fraction, moe_capacity_factor, cuda_graphs): the same prediction, byte for byte;
// a flag given beside the file wins; a bad value names the key.
TEST(TrainMemoryFlags, JobFileKeysEqualTheFlags) {
  const std::string path = ::testing::TempDir() + "fmsim_memory_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: mixtral-8x7b\ncluster: p5.48xlarge:1\nprecision: fp8\n"
                         "parallelism: {ep: 8}\nfp8_params: true\noptimizer_dtype: bf16\n"
                         "optimizer_offload_fraction: 0.5\nmoe_capacity_factor: 1.25\ncuda_graphs: true\n";
  const auto file = run_fmsim({"train", "--job", path, "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto flags =
      run_fmsim({"train", "--model", "mixtral-8x7b", "--cluster", "p5.48xlarge:1", "--precision", "fp8", "--ep", "8",
                 "--fp8-params", "--optimizer-dtype", "bf16", "--optimizer-offload-fraction", "0.5",
                 "--moe-capacity-factor", "1.25", "--cuda-graphs", "--json"});
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  auto strip = [](std::string out) {
    auto j = nlohmann::json::parse(out);
    j.erase("elapsed_s");
    return j;
  };
  EXPECT_EQ(strip(file.out), strip(flags.out));
  const auto fp32 = run_fmsim({"train", "--job", path, "--optimizer-dtype", "fp32", "--json"});
  ASSERT_EQ(fp32.exit_code, 0) << fp32.err;
  EXPECT_GT(nlohmann::json::parse(fp32.out)["memory_bytes"]["optimizer"].get<double>(),
            nlohmann::json::parse(file.out)["memory_bytes"]["optimizer"].get<double>());

  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ncluster: p5.48xlarge:1\noptimizer_dtype: fp16\n";
  const auto bad = run_fmsim({"train", "--job", path});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("optimizer_dtype"));
  EXPECT_THAT(bad.err, HasSubstr("fp32"));

  // Out-of-range values are refused with the file, the line and the key, not the flag's name.
  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ncluster: p5.48xlarge:1\n"
                         "optimizer_offload_fraction: 1.5\n";
  const auto fraction = run_fmsim({"train", "--job", path});
  EXPECT_EQ(fraction.exit_code, 2);
  EXPECT_THAT(fraction.err, HasSubstr(":4: optimizer_offload_fraction: 1.5 is not a fraction; allowed: 0 to 1"));
  std::ofstream(path) << "kind: TrainingJob\nmodel: mixtral-8x7b\ncluster: p5.48xlarge:1\nmoe_capacity_factor: 100\n";
  const auto capacity = run_fmsim({"train", "--job", path});
  EXPECT_EQ(capacity.exit_code, 2);
  EXPECT_THAT(capacity.err, HasSubstr(":4: moe_capacity_factor: 100 is out of range"));
}

// Out-of-range values and a capacity factor for a dense model are refused with the flag's name.
TEST(TrainMemoryFlags, BadValuesNameTheFlag) {
  const std::vector<std::vector<std::string>> cases{
      {"--optimizer-offload-fraction", "1.5"},
      {"--moe-capacity-factor", "1.25"},  // llama3.1-8b has no experts
      {"--optimizer-dtype", "fp16"},
  };
  for (const auto& c : cases) {
    const auto r = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", c[0], c[1]});
    EXPECT_EQ(r.exit_code, 2) << c[0];
    EXPECT_THAT(r.err, HasSubstr(c[0]));
  }
  const auto moe = run_fmsim(
      {"train", "--model", "mixtral-8x7b", "--cluster", "p5.48xlarge:1", "--ep", "8", "--moe-capacity-factor", "1.25"});
  EXPECT_EQ(moe.exit_code, 0) << moe.err;
}

// Without --mbs, the torchtitan stack splits each data-parallel rank's batch into one micro-batch
// per pipeline stage, as torchtitan's pipeline_parallel_microbatches default does: 8 GPUs at pp 4
// give dp 2, a rank's 32 of 64 sequences run as 4 micro-batches of 8 (2 x 4 = 8 with vp 2), and the
// warning says so. --mbs, the job file's batch.micro and other stacks keep the micro-batch asked for.
TEST(TrainMemoryFlags, TorchtitanSplitsTheRankBatchPerPipelineStage) {
  auto with = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"--pp", "4", "--gbs", "64", "--sharding", "fsdp", "--stack", "torchtitan"};
    args.insert(args.end(), extra.begin(), extra.end());
    return train_json(args);
  };
  const auto split = with({});
  EXPECT_EQ(split["layout"]["micro_batch"].get<int>(), 8);
  EXPECT_EQ(split["layout"]["micro_batches"].get<int>(), 4);
  ASSERT_TRUE(split.contains("warnings"));
  EXPECT_THAT(split["warnings"][0].get<std::string>(), HasSubstr("4 micro-batches"));
  EXPECT_EQ(with({"--vp", "2"})["layout"]["micro_batch"].get<int>(), 4);
  EXPECT_EQ(with({"--mbs", "1"})["layout"]["micro_batch"].get<int>(), 1);
  EXPECT_EQ(train_json({"--pp", "4", "--gbs", "64", "--stack", "megatron"})["layout"]["micro_batch"].get<int>(), 1);
}

}  // namespace
