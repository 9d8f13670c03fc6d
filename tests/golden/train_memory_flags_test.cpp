// `fmsim train`'s memory settings beyond the layout: FP8 parameters, 16-bit optimizer states,
// optimizer offload, MoE capacity padding and CUDA graphs (docs/models/training.md, "Memory per GPU").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
