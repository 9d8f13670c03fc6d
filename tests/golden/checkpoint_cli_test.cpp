// Golden tests of `fmsim checkpoint`: plain numbers, the catalog path with DRA export, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

TEST(CheckpointCli, BloomFromPlainNumbers) {
  // 176e9 x 14 B; TP 4 x PP 12 on 48 nodes -> DP 8; the rank stream binds: the largest rank's
  // 12.8 GB through the default pageable copy (1.4 GB/s) and then torch.save's writer (0.7 GB/s).
  const auto r = run_fmsim({"checkpoint", "--params", "176B", "--nodes", "48", "--tp", "4", "--pp", "12",
                            "--tier-bandwidth", "500GB/s", "--node-network", "50GB/s", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["size_bytes"].get<double>(), 176e9 * 14);
  EXPECT_EQ(j["layout"]["dp"].get<int>(), 8);
  EXPECT_EQ(j["save"]["bottleneck"].get<std::string>(), "rank stream");
  const double shard = 176e9 * 2 / 48 + 176e9 * 12 / 384;
  EXPECT_NEAR(j["save"]["total_s"].get<double>(), shard / 1.4e9 + shard / 0.7e9, 1e-6);
}

TEST(CheckpointCli, AsyncStallsForTheCopyOnly) {
  const auto r = run_fmsim({"checkpoint", "--params", "70B", "--gpus", "64", "--sharding", "fsdp", "--tier-bandwidth",
                            "100GB/s", "--async", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["blocking_s"].get<double>(), j["save"]["gpu_to_host_s"].get<double>());
  EXPECT_LT(j["blocking_s"].get<double>(), j["persist_s"].get<double>());
}

TEST(CheckpointCli, CatalogTierWithDraExport) {
  // Llama 3.1 405B on 2,048 p5.48xlarge with 1 PiB of FSx PERSISTENT_2 linked to S3.
  const auto r = run_fmsim({"checkpoint",
                            "--model",
                            "llama3.1-405b",
                            "--cluster",
                            "p5.48xlarge:2048",
                            "--tp",
                            "8",
                            "--pp",
                            "16",
                            "--storage",
                            "fsx-persistent2-1000",
                            "--capacity",
                            "1PiB",
                            "--s3",
                            "s3",
                            "--interval",
                            "30min",
                            "--dataset",
                            "60TB",
                            "--tokens-per-s",
                            "40M",
                            "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["parameters"].get<double>(), 400e9);
  EXPECT_TRUE(j.contains("export"));
  EXPECT_TRUE(j.contains("lazy_load"));
  EXPECT_FALSE(j["data_loading"]["starves"].get<bool>());
  // 1 PiB x 1000 MB/s/TiB = 1.024 TB/s aggregate.
  EXPECT_NEAR(j["tier"]["aggregate_write_bytes_per_s"].get<double>(), 1024 * 1e9, 1e6);
}

TEST(CheckpointCli, BadInputExitsTwo) {
  const auto typo = run_fmsim({"checkpoint", "--params", "8B", "--gpus", "8", "--storage", "fsx-persistnt2-1000"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, HasSubstr("fsx-persistent2-1000"));
  const auto tp = run_fmsim({"checkpoint", "--params", "8B", "--gpus", "8", "--tp", "3", "--tier-bandwidth", "1GB/s"});
  EXPECT_EQ(tp.exit_code, 2);
  EXPECT_THAT(tp.err, HasSubstr("--tp"));
  const auto params = run_fmsim({"checkpoint", "--params", "many", "--gpus", "8", "--tier-bandwidth", "1GB/s"});
  EXPECT_EQ(params.exit_code, 2);
  EXPECT_THAT(params.err, HasSubstr("--params"));
}

}  // namespace
