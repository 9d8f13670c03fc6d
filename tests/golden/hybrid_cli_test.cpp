// Golden tests of hybrid Mamba / linear-attention models through the CLI: presets, training,
// serving and bad layer patterns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(HybridCli, ShowsTheLayerPatternAndMambaDimensions) {
  // Nemotron-H 56B (Megatron-Bridge NemotronHModel56BProvider): 118 layers, 10 attention, 54
  // Mamba-2 (256 heads x 64, state 256, 8 groups) and 54 MLP layers; 56B parameters.
  const auto r = run_fmsim({"models", "show", "nemotron-h-56b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("hybrid: 10 attention, 54 Mamba, 0 gated DeltaNet and 54 FFN-only layers"),
                           HasSubstr("mamba-2: 256 heads x 64 (inner 16384), state 256, 8 groups, conv 4, chunk 128"),
                           HasSubstr("56.3B")));
  const auto j = run_fmsim({"models", "show", "jamba-1.5-mini", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto p = nlohmann::json::parse(j.out)["parameters"];
  EXPECT_EQ(p["ssm_layers"], 28);
  EXPECT_EQ(p["attention_layers"], 4);
  EXPECT_EQ(p["moe_layers"], 16);
}

TEST(HybridCli, TrainsAndServesHybridModels) {
  // Before hybrid layers were read these were refused ("model: 0 must be a positive integer").
  const auto train = run_fmsim({"train", "--model", "nemotron-3-nano-30b-a3b", "--cluster", "p5.48xlarge:2", "--ep",
                                "8", "--gbs", "64", "--seq", "8192", "--json"});
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const auto t = nlohmann::json::parse(train.out);
  EXPECT_GT(t["step_time_s"].get<double>(), 0.0);
  const auto serve = run_fmsim({"serve", "--model", "nemotron-h-8b", "--cluster", "p5.48xlarge", "--tp", "1", "--isl",
                                "512", "--osl", "64", "--num-requests", "32"});
  EXPECT_EQ(serve.exit_code, 0) << serve.err;
}

TEST(HybridCli, BadPatternNamesFileLineAndField) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "fmsim_hybrid_cli";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "bad.json").string();
  std::ofstream(file) << "{\n  \"model_type\": \"nemotron_h\",\n  \"hidden_size\": 256,\n  \"num_hidden_layers\": 3,\n"
                         "  \"num_attention_heads\": 4,\n  \"intermediate_size\": 512,\n  \"vocab_size\": 1000,\n"
                         "  \"hybrid_override_pattern\": \"M*Q\"\n}\n";
  const auto r = run_fmsim({"models", "show", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, AllOf(HasSubstr("bad.json:8:"), HasSubstr("hybrid_override_pattern"), HasSubstr("'Q'")));
}

}  // namespace
