// Text inputs of the RL model (src/config/rl_input.hpp): token counts, length laws, rl.csv rows.
#include "config/rl_input.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../golden/run_cli.hpp"
#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "expect_input_error.hpp"

namespace fmsim::config {
namespace {

// RL recipes write 16k for 16384 (k = 1024).
TEST(RlInput, TokenCounts) {
  EXPECT_EQ(parse_tokens("16k", "--max-response"), 16384);
  EXPECT_EQ(parse_tokens("1.5k", "--max-response"), 1536);
  EXPECT_EQ(parse_tokens("28672", "--max-response"), 28672);
  try {
    parse_tokens("lots", "--max-response");
    ADD_FAILURE() << "accepted 'lots'";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "--max-response");
  }
}

TEST(RlInput, LengthLaws) {
  const auto d = parse_length_law("lognormal:mean=6k,sigma=0.8", 16384, "--response-lengths");
  EXPECT_EQ(d.law, rl::LengthLaw::Lognormal);
  EXPECT_DOUBLE_EQ(d.mean, 6144.0);
  EXPECT_DOUBLE_EQ(d.sigma, 0.8);
  EXPECT_EQ(d.cap, 16384);
  EXPECT_EQ(parse_length_law("fixed:4k", 8192, "--response-lengths").law, rl::LengthLaw::Fixed);
  for (const char* bad : {"gamma:mean=1k", "lognormal:mean=20k", "lognormal:sigma=0.8", "lognormal:mean=1k,shape=2",
                          "lognormal:mean=1k,sigma=-1"}) {
    try {
      parse_length_law(bad, 16384, "--response-lengths");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.field(), "--response-lengths") << bad;
    }
  }
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "fmsim_rl_input_XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A file without the columns of validation/rl.csv fails naming the file, line 1 and the column.
TEST(RlInput, MissingColumnNamesFileLineAndColumn) {
  TempDir dir;
  const std::string file = dir.path + "/rl.csv";
  std::ofstream(file) << "row_id,row_type,hardware\nR1,rl_step,H100\n";
  const auto catalog = load_catalog();
  testing::expect_input_error([&] { load_rl_rows(file, catalog); }, "rl.csv", 1, "num_gpus", "missing column");
}

// A row type outside validation/README.md's list fails naming the file, its line and the column,
// and lists the row types there are.
TEST(RlInput, UnknownRowTypeNamesFileLineAndWords) {
  TempDir dir;
  const std::string file = dir.path + "/rl.csv";
  std::ofstream(file) << "row_id,row_type,hardware,num_gpus,policy_model,step_time_s,weight_sync_time_s,placement,"
                         "sync_mode,prompts_per_step,samples_per_prompt\n"
                         "R1,run_total,H100,8,Llama-3.1-8B,,,colocated,on-policy,,\n"
                         "R2,rl_stepp,H100,8,Llama-3.1-8B,10,,colocated,on-policy,64,8\n";
  const auto catalog = load_catalog();
  testing::expect_input_error([&] { load_rl_rows(file, catalog); }, "rl.csv", 3, "row_type",
                              "unknown rl.csv row type 'rl_stepp'; allowed: rl_step, rl_component, weight_sync");
}

// A measured time is a finite positive number or empty: "nan", "inf", "0" and "12 s" were read
// as times (printed as the error, or an infinite one).
TEST(RlInput, MeasurementIsAPositiveNumberOrEmpty) {
  TempDir dir;
  const std::string file = dir.path + "/rl.csv";
  const auto catalog = load_catalog();
  for (const char* bad : {"nan", "inf", "0", "-3", "12 s"}) {
    std::ofstream(file) << "row_id,row_type,hardware,num_gpus,policy_model,step_time_s,weight_sync_time_s,placement,"
                           "sync_mode,prompts_per_step,samples_per_prompt\n"
                           "R1,rl_step,H100,8,Llama-3.1-8B,"
                        << bad << ",,colocated,on-policy,64,8\n";
    testing::expect_input_error([&] { load_rl_rows(file, catalog); }, "rl.csv", 2, "step_time_s",
                                "is not a measurement; a positive number, or empty for none");
  }
}

// A degree or GPU count spelt with more than 9 digits in a placement or notes text is no real one
// and past int: the row is refused with a reason (std::stoi's out_of_range was an internal error).
TEST(RlInput, CountsPastIntInTextsRefuseTheRow) {
  TempDir dir;
  const std::string file = dir.path + "/rl.csv";
  std::ofstream(file) << "row_id,row_type,hardware,num_gpus,policy_model,step_time_s,weight_sync_time_s,placement,"
                         "sync_mode,prompts_per_step,samples_per_prompt,max_response_len,mean_response_len\n"
                         "R1,rl_step,H100,16,Llama-3.1-8B,100,,separate: 99999999999 rollout,on-policy,64,8,4096,1000\n"
                         "R2,rl_step,H100,16,Llama-3.1-8B,100,,separate: 8 rollout,on-policy,64,8,4096,1000\n";
  const auto rows = load_rl_rows(file, load_catalog());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].job.has_value());
  EXPECT_FALSE(rows[0].skip_reason.empty());
  ASSERT_TRUE(rows[1].job.has_value()) << rows[1].skip_reason;  // the same row with 8 rollout GPUs
  EXPECT_EQ(rows[1].job->generator_gpus, 8);
}

// The shipped rows: NeMo-RL's Llama 8B row becomes a colocated GRPO job on 16 H100 with 2,048
// responses of mean 1,019 tokens trained in 4 mini-batches of 512 (G-GBS / T-GBS).
TEST(RlInput, ShippedRowBecomesAJob) {
  const auto rows = load_rl_rows(testing::source_path("validation/rl.csv"), load_catalog());
  EXPECT_EQ(rows.size(), 148u);
  const auto it = std::find_if(rows.begin(), rows.end(), [](const RlRow& r) { return r.id == "R061"; });
  ASSERT_NE(it, rows.end());
  ASSERT_TRUE(it->job) << it->skip_reason;
  EXPECT_EQ(it->job->job_gpus(), 16);
  EXPECT_EQ(it->job->prompts * it->job->samples, 2048);
  EXPECT_DOUBLE_EQ(it->job->lengths.mean, 1019.0);
  EXPECT_EQ(it->job->mini_batches, 4);
  EXPECT_EQ(it->job->placement, rl::Placement::Colocated);
}

// A row's recipe_settings cell carries what the run's recipe files set: verl's colocated 7B
// recipe (R001) offloads the FSDP parameters and optimizer states, shards them over groups of 2
// GPUs, recomputes activations and gives vLLM 80% of HBM; its rollout TP is 4.
TEST(RlInput, RecipeSettingsReachTheJob) {
  const auto rows = load_rl_rows(testing::source_path("validation/rl.csv"), load_catalog());
  const auto it = std::find_if(rows.begin(), rows.end(), [](const RlRow& r) { return r.id == "R001"; });
  ASSERT_NE(it, rows.end());
  ASSERT_TRUE(it->job) << it->skip_reason;
  EXPECT_EQ(it->job->trainer_offload, rl::TrainerOffload::ParamsOptimizer);
  EXPECT_DOUBLE_EQ(it->job->generator_memory_utilization, 0.8);
  EXPECT_EQ(it->job->train_layout.shard_group, 2);
  EXPECT_EQ(it->job->train_layout.recompute, parallelism::Recompute::Full);
  EXPECT_EQ(it->job->generator_tp, 4);
  // NeMo-RL's Qwen3-32B recipe leaves activation checkpointing off.
  const auto q = std::find_if(rows.begin(), rows.end(), [](const RlRow& r) { return r.id == "R070"; });
  ASSERT_NE(q, rows.end());
  ASSERT_TRUE(q->job);
  EXPECT_EQ(q->job->train_layout.recompute, parallelism::Recompute::None);
}

// GPUs as vendors print them map to the catalog systems the training table uses (issue 42: GB300
// was unknown to the RL reader), and a model named as its publisher names it finds its preset.
TEST(RlInput, BlackwellRowsAndPublishedModelNamesAreRead) {
  const std::string csv = testing::slurp(testing::source_path("validation/rl.csv"));
  // R061 (shipped, 16 GPUs) with its hardware cell replaced.
  const auto start = csv.find("\nR061,") + 1;
  const auto end = csv.find('\n', start);
  const std::string row = csv.substr(start, end - start);
  const auto header = csv.substr(0, csv.find('\n') + 1);
  const auto rows = load_rl_rows(testing::source_path("validation/rl.csv"), load_catalog());
  const auto r061 = std::find_if(rows.begin(), rows.end(), [](const RlRow& r) { return r.id == "R061"; });
  ASSERT_NE(r061, rows.end());
  for (const auto& [gpu, system] : std::vector<std::pair<std::string, std::string>>{
           {"GB300", "gb300-nvl72"}, {"B300", "dgx-b300"}, {"B200", "dgx-b200"}, {"H200", "p5en.48xlarge"}}) {
    std::string changed = row;
    const auto at = changed.find(r061->hardware);
    ASSERT_NE(at, std::string::npos);
    changed.replace(at, r061->hardware.size(), gpu);
    const std::string file = ::testing::TempDir() + "rl_" + gpu + ".csv";
    std::ofstream(file, std::ios::binary) << header << changed << "\n";
    const auto read = load_rl_rows(file, load_catalog());
    ASSERT_EQ(read.size(), 1u);
    ASSERT_TRUE(read[0].job) << gpu << ": " << read[0].skip_reason;
    EXPECT_EQ(read[0].job->cluster.system.name, system) << gpu;
  }
}

// An unknown key or a bad value in recipe_settings names the file, the line and the column.
TEST(RlInput, BadRecipeSettingNamesFileLineAndColumn) {
  TempDir dir;
  const std::string file = dir.path + "/rl.csv";
  const std::string header =
      "row_id,row_type,framework,hardware,num_gpus,placement,sync_mode,policy_model,train_layout,prompts_per_step,"
      "samples_per_prompt,max_response_len,step_time_s,weight_sync_time_s,recipe_settings\n";
  const std::string row = "R1,rl_step,verl,NVIDIA H100,8,colocated,sync,Qwen3-8B,FSDP2,8,4,1024,10,,";
  const auto catalog = load_catalog();
  std::ofstream(file) << header << row << "gen_memory_utilization=0.8; colour=blue\n";
  testing::expect_input_error([&] { load_rl_rows(file, catalog); }, "rl.csv", 2, "recipe_settings", "colour");
  std::ofstream(file) << header << row << "trainer_offload=everything\n";
  testing::expect_input_error([&] { load_rl_rows(file, catalog); }, "rl.csv", 2, "recipe_settings", "params+optimizer");
}

}  // namespace
}  // namespace fmsim::config
