// Golden tests of `fmsim models`: the preset table, `models show` (text and JSON) and bad input.
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

TEST(ModelsCli, ListsEveryPresetAsATable) {
  const auto r = run_fmsim({"models"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("NAME"), HasSubstr("FAMILY"), HasSubstr("HEADS/KV"), HasSubstr("EXPERTS/K"),
                           HasSubstr("PARAMS"), HasSubstr("ACTIVE")));
  for (const char* name :
       {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b", "mixtral-8x22b", "qwen3-8b", "qwen3-32b",
        "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b", "llama4-maverick",
        "gpt3-175b", "mpt-7b", "mpt-70b", "gpt3-5b", "megatron-gpt-462b", "megatron-sc21-gpt-1008b"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
  // Llama 3.1 70B: 80 layers, hidden 8192, 64/8 heads, 70.6B parameters (Meta model card).
  EXPECT_THAT(r.out, testing::ContainsRegex("llama3.1-70b +llama +80 +8192 +64/8 +- +70.6B"));
  // DeepSeek-V3: 256 routed experts, top-8, 671B total (technical report).
  EXPECT_THAT(r.out, testing::ContainsRegex("deepseek-v3 +deepseek_v3 +61 +7168 +128/128 +256/8 +671.0B"));
}

TEST(ModelsCli, ListAsJson) {
  const auto r = run_fmsim({"models", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto list = nlohmann::json::parse(r.out);
  ASSERT_TRUE(list.is_array());
  bool found = false;
  for (const auto& m : list) {
    if (m["name"] == "mixtral-8x7b") {
      found = true;
      EXPECT_EQ(m["num_experts"], 8);
      EXPECT_EQ(m["top_k"], 2);
    }
  }
  EXPECT_TRUE(found);
}

TEST(ModelsCli, ShowPresetText) {
  const auto r = run_fmsim({"models", "show", "llama3.1-8b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Llama 3.1 8B: 8,030,261,248 parameters (HF safetensors total).
  EXPECT_THAT(r.out, AllOf(HasSubstr("layers 32, hidden 4096, FFN 14336 (swiglu), heads 32 (kv 8, head_dim 128)"),
                           HasSubstr("8030261248"), HasSubstr("huggingface.co/meta-llama/Llama-3.1-8B"),
                           HasSubstr("megatron_causal")));
}

TEST(ModelsCli, ShowJsonHasEveryNormalisedField) {
  const auto r = run_fmsim({"models", "show", "DeepSeek-V3", "--json", "--seq-len", "4096"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "deepseek-v3");
  EXPECT_EQ(j["num_layers"], 61);
  EXPECT_EQ(j["moe"]["num_experts"], 256);
  EXPECT_EQ(j["moe"]["shared_expert_ffn"], 2048);
  EXPECT_EQ(j["moe"]["first_dense_layers"], 3);
  EXPECT_EQ(j["mla"]["kv_lora_rank"], 512);
  EXPECT_EQ(j["mtp_layers"], 1);
  EXPECT_EQ(j["parameters"]["moe_layers"], 58);
  EXPECT_EQ(j["training_flops_per_token"]["seq_len"], 4096);
  // Causal attention counts fewer score FLOPs than full attention.
  EXPECT_LT(j["training_flops_per_token"]["megatron_causal"].get<double>(),
            j["training_flops_per_token"]["megatron_full"].get<double>());
}

TEST(ModelsCli, ShowConfigFileAndDirectory) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "fmsim_models_cli" / "tiny-llama";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000})";
  const auto by_dir = run_fmsim({"models", "show", dir.string()});
  ASSERT_EQ(by_dir.exit_code, 0) << by_dir.err;
  EXPECT_THAT(by_dir.out, AllOf(HasSubstr("model      tiny-llama"), HasSubstr("heads 4 (kv 2, head_dim 64)")));
  const auto by_file = run_fmsim({"models", "show", (dir / "config.json").string(), "--json"});
  ASSERT_EQ(by_file.exit_code, 0) << by_file.err;
  EXPECT_EQ(nlohmann::json::parse(by_file.out)["num_kv_heads"], 2);
}

TEST(ModelsCli, BadInputExitsTwo) {
  const auto typo = run_fmsim({"models", "show", "mixtral-8x7"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, AllOf(HasSubstr("unknown model 'mixtral-8x7'"), HasSubstr("mixtral-8x7b")));

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "fmsim_models_cli";
  std::filesystem::create_directories(dir);
  const std::string broken = (dir / "broken.json").string();
  std::ofstream(broken) << "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096\n  \"num_hidden_layers\": 32\n}\n";
  const auto malformed = run_fmsim({"models", "show", broken});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, AllOf(HasSubstr("broken.json:4:"), HasSubstr("malformed JSON")));

  const std::string unknown = (dir / "unknown.json").string();
  std::ofstream(unknown) << R"({"model_type": "rwkv", "vocab_size": 65536})";
  const auto missing = run_fmsim({"models", "show", unknown});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, AllOf(HasSubstr("unknown model_type 'rwkv'"), HasSubstr("hidden_size"),
                                 HasSubstr("num_hidden_layers"), HasSubstr("num_attention_heads")));
}

}  // namespace
