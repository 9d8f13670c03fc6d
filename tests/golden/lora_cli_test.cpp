// Golden tests of LoRA / QLoRA through `fmsim train`: target modules, frozen-base storage and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::string> lora_args(std::vector<std::string> extra) {
  std::vector<std::string> a{"train", "--model", "llama3.1-70b", "--cluster", "p5en.48xlarge:8", "--tp", "4",
                             "--gbs", "64",      "--seq",        "8192",      "--precision",     "fp8",  "--task",
                             "lora",  "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

nlohmann::json lora_run_json(const std::vector<std::string>& args) {
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(LoraCli, TargetsAndBaseChangeTrafficAndMemory) {
  const auto all = lora_run_json(lora_args({}));
  EXPECT_EQ(all["layout"]["lora"]["targets"], "all-linear");
  // PEFT names: q_proj and v_proj select the fused QKV projection (Megatron linear_qkv).
  const auto qv = lora_run_json(lora_args({"--lora-targets", "q_proj,v_proj"}));
  EXPECT_EQ(qv["layout"]["lora"]["targets"], "qkv");
  EXPECT_LT(qv["comm_bytes_per_gpu"]["dp"].get<double>(), 0.5 * all["comm_bytes_per_gpu"]["dp"].get<double>());
  // QLoRA: NF4 frozen weights take 4.127 of 16 bits (plus the FP8 weight cache they no longer need).
  const auto nf4 = lora_run_json(lora_args({"--lora-base", "nf4"}));
  EXPECT_EQ(nf4["layout"]["lora"]["base"], "nf4");
  EXPECT_LT(nf4["memory_bytes"]["weights"].get<double>(), 0.25 * all["memory_bytes"]["weights"].get<double>());
  EXPECT_GT(nf4["step_time_s"].get<double>(), all["step_time_s"].get<double>());  // dequantisation passes
}

TEST(LoraCli, BadInputExitsTwo) {
  const auto typo = run_fmsim(lora_args({"--lora-targets", "q_proj,o_prj"}));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, AllOf(HasSubstr("--lora-targets"), HasSubstr("unknown LoRA target module 'o_prj'")));
  const auto base = run_fmsim({"train", "--lora-base", "nf4"});
  EXPECT_EQ(base.exit_code, 2);
  EXPECT_THAT(base.err, HasSubstr("--lora-base: applies to --task lora only"));
}

}  // namespace
