// --document-tokens (SFT sequence packing): documents of N tokens packed into each sequence attend
// only within themselves, so the attention core costs N/2 keys per query instead of seq/2; the
// GEMMs, the memory and the communication do not change (docs/models/training.md, "Packed documents").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

nlohmann::json packed_train_json(std::vector<std::string> extra) {
  std::vector<std::string> args{"train", "--model", "llama3.1-8b", "--cluster",   "p5.48xlarge:1", "--seq",
                                "8192",  "--gbs",   "64",          "--precision", "fp8",           "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_fmsim(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// Packing 256-token documents into 8192-token sequences removes most of the attention time (s/2 =
// 4096 keys per query become 128) and nothing else: the step is faster, the data-parallel bytes and
// the weights are the same; the layout line and the JSON name the setting, and the job-file key
// document_tokens is the same setting.
TEST(PackedDocumentsCli, AttentionStaysInsideEachDocument) {
  const auto whole = packed_train_json({});
  const auto packed = packed_train_json({"--document-tokens", "256"});
  EXPECT_LT(packed["step_time_s"].get<double>(), 0.95 * whole["step_time_s"].get<double>());
  EXPECT_EQ(packed["comm_bytes_per_gpu"]["dp"], whole["comm_bytes_per_gpu"]["dp"]);
  EXPECT_EQ(packed["memory_bytes"]["weights"], whole["memory_bytes"]["weights"]);
  EXPECT_EQ(packed["layout"]["document_tokens"], 256);
  EXPECT_TRUE(whole["layout"]["document_tokens"].is_null());
  // Documents as long as the sequence are no packing at all.
  EXPECT_EQ(packed_train_json({"--document-tokens", "8192"})["step_time_s"], whole["step_time_s"]);

  const auto text = run_fmsim(
      {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--seq", "8192", "--document-tokens", "256"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("seq 8192 (packed documents of 256 tokens)"));

  const std::string path = ::testing::TempDir() + "fmsim_packed_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ncluster: p5.48xlarge:1\nseq_len: 8192\n"
                         "precision: fp8\nbatch: {global: 64}\ndocument_tokens: 256\n";
  const auto file = run_fmsim({"train", "--job", path, "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["step_time_s"], packed["step_time_s"]);
}

// `fmsim plan` takes the same setting: the best plan of a packed SFT run is faster than unpacked.
TEST(PackedDocumentsCli, PlanTakesThePackedLength) {
  auto best = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"plan", "--model",   "llama3.1-8b", "--gpus", "8", "--seq",  "8192",          "--gbs",
                                  "64",   "--systems", "p5.48xlarge", "--top",  "1", "--json", "--no-progress", "--tp",
                                  "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto whole = best({});
  const auto packed = best({"--document-tokens", "256"});
  EXPECT_EQ(packed["document_tokens"], 256);
  EXPECT_LT(packed["best"]["step_time_s"].get<double>(), whole["best"]["step_time_s"].get<double>());
}

// A negative length is refused naming the flag or the file's key, exit status 2.
TEST(PackedDocumentsCli, BadLengthExitsTwo) {
  const auto flag = run_fmsim({"train", "--document-tokens", "-5"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_THAT(flag.err, HasSubstr("--document-tokens"));
  const std::string path = ::testing::TempDir() + "fmsim_bad_packed_job.yaml";
  std::ofstream(path) << "kind: TrainingJob\nmodel: llama3.1-8b\ndocument_tokens: -1\n";
  const auto file = run_fmsim({"train", "--job", path});
  EXPECT_EQ(file.exit_code, 2);
  EXPECT_THAT(file.err, HasSubstr("document_tokens"));
}

}  // namespace
