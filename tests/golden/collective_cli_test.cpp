// Golden tests of `fmsim collective` and `fmsim validate collectives`: real binary, real catalog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.hpp"

namespace fmsim::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(CollectiveCli, TableHasOneRowPerPowerOfTwo) {
  // 8 B .. 16 GiB with factor 2: 2^3 .. 2^34 = 32 rows, nccl-tests columns.
  const auto r = run_fmsim(
      {"collective", "--cluster", "p5.48xlarge:2", "--op", "all_reduce", "--min-bytes", "8", "--max-bytes", "16G"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("time(us)"));
  EXPECT_THAT(r.out, HasSubstr("algbw"));
  EXPECT_THAT(r.out, HasSubstr("busbw"));
  EXPECT_THAT(r.out, HasSubstr("17179869184"));
  int rows = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#' && line.find("float") != std::string::npos) ++rows;
  }
  EXPECT_EQ(rows, 32);
}

TEST(CollectiveCli, JsonRowsFollowNcclTestsConventions) {
  // all_gather on 16 GPUs: count = bytes / 4 / 16 (elements per rank); busbw = algbw x 15/16;
  // time grows with size; a cross-instance all-gather is never faster than NVLink allows.
  const auto r =
      run_fmsim({"collective", "--cluster", "p5.48xlarge:2", "--op", "all_gather", "-b", "1M", "-e", "1G", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 11u);
  double last_time = 0.0;
  for (const json& row : j["rows"]) {
    const double bytes = row["bytes"].get<double>();
    EXPECT_EQ(row["count"].get<long long>(), static_cast<long long>(bytes / 4 / 16));
    EXPECT_NEAR(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 15.0 / 16.0, 1e-6);
    EXPECT_NEAR(row["time_us"].get<double>() * 1e-6 * row["algbw_GBps"].get<double>() * 1e9, bytes, bytes * 1e-6);
    EXPECT_GT(row["time_us"].get<double>(), last_time);
    last_time = row["time_us"].get<double>();
    EXPECT_LT(row["busbw_GBps"].get<double>(), 18 * 25.0);  // 18 NVLink4 links x 25 GB/s raw
  }
  EXPECT_EQ(j["group"]["nvlink_domains"], 2);
}

TEST(CollectiveCli, ForcedAlgorithmIsUsedOnEveryRow) {
  const auto r = run_fmsim({"collective", "--cluster", "p6-b200.48xlarge", "--op", "all_reduce", "--algo", "ring", "-b",
                            "1K", "-e", "1G", "-f", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json rows = json::parse(r.out)["rows"];  // held: a range-for over a temporary's member dangles
  ASSERT_FALSE(rows.empty());
  for (const json& row : rows) EXPECT_EQ(row["algorithm"], "ring");
}

TEST(CollectiveCli, StridedDataParallelGroupIsSlowerThanTensorParallel) {
  // One rank per instance (stride 8) goes over EFA; 8 ranks of one instance stay on NVLink.
  const auto dp = run_fmsim({"collective", "--cluster", "p5.48xlarge:8", "--op", "all_reduce", "--group-size", "8",
                             "--group-stride", "8", "-b", "1G", "-e", "1G", "--json"});
  const auto tp = run_fmsim({"collective", "--cluster", "p5.48xlarge:8", "--op", "all_reduce", "--group-size", "8",
                             "-b", "1G", "-e", "1G", "--json"});
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  ASSERT_EQ(tp.exit_code, 0) << tp.err;
  const double t_dp = json::parse(dp.out)["rows"][0]["time_us"].get<double>();
  const double t_tp = json::parse(tp.out)["rows"][0]["time_us"].get<double>();
  EXPECT_GT(t_dp, 3 * t_tp);
}

TEST(CollectiveCli, BadInputExitsTwoWithAReason) {
  auto r = run_fmsim({"collective", "--cluster", "p5.48xlarge:2", "--op", "allreduse"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--op"));
  EXPECT_THAT(r.err, HasSubstr("all_reduce"));
  r = run_fmsim({"collective", "--cluster", "p5.48xlarge:2", "--algo", "nvls"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot run"));
  r = run_fmsim({"collective", "--cluster", "p5.48xlarge:2", "--min-bytes", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--min-bytes"));
  r = run_fmsim({"collective", "--cluster", "p5.48xlarge:2", "--group-size", "4", "--group-stride", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("does not fit"));
}

TEST(ValidateCollectivesCli, JsonEndsWithTheSummary) {
  const auto r = run_fmsim({"validate", "collectives", "--csv", source_path("validation/collectives.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);  // keeps the printed key order
  ASSERT_TRUE(j.contains("summary"));
  std::string last_key;
  for (const auto& [k, v] : j.items()) last_key = k;
  EXPECT_EQ(last_key, "summary");
  for (const char* key : {"rows", "predicted", "median_abs_error_pct", "max_abs_error_pct"}) {
    EXPECT_TRUE(j["summary"].contains(key)) << key;
  }
  EXPECT_EQ(j["summary"]["rows"].get<int>(), static_cast<int>(j["rows"].size() + j["unpredicted"].size()));
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ValidateCollectivesCli, UnpredictableRowsAreListedWithTheirReason) {
  // An unknown collective and an unknown instance are reported, not dropped.
  const std::string csv =
      write_temp("fmsim_coll_rows.csv",
                 "id,system,instance_type,nodes,gpus,collective,algorithm,bytes,busbw_GBps,time_us,source,notes\n"
                 "X1,8 x H100,p5.48xlarge,1,8,all_reduce,,1073741824,300,,test,ok row\n"
                 "X2,8 x H100,p5.48xlarge,1,8,gather,,1073741824,300,,test,\"unknown, collective\"\n"
                 "X3,mystery,z9.huge,1,8,all_reduce,,1073741824,300,,test,\n");
  const auto r = run_fmsim({"validate", "collectives", "--csv", csv, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["summary"]["rows"], 3);
  EXPECT_EQ(j["summary"]["predicted"], 1);
  ASSERT_EQ(j["unpredicted"].size(), 2u);
  EXPECT_THAT(j["unpredicted"][0]["reason"].get<std::string>(), HasSubstr("gather"));
  EXPECT_THAT(j["unpredicted"][1]["reason"].get<std::string>(), HasSubstr("z9.huge"));
  const auto text = run_fmsim({"validate", "collectives", "--csv", csv});
  EXPECT_THAT(text.out, HasSubstr("not predicted: X2"));
  EXPECT_THAT(text.out, HasSubstr("not predicted: X3"));
}

TEST(ValidateCollectivesCli, MalformedCsvNamesFileLineAndColumn) {
  const std::string csv =
      write_temp("fmsim_coll_bad.csv",
                 "id,system,instance_type,nodes,gpus,collective,algorithm,bytes,busbw_GBps,time_us\n"
                 "B1,x,p5.48xlarge,two,8,all_reduce,,8,,69\n");
  const auto r = run_fmsim({"validate", "collectives", "--csv", csv});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("fmsim_coll_bad.csv:2: nodes"));
}

TEST(ValidateCollectivesCli, WriteDocReplacesOnlyTheCollectivesSection) {
  // Text outside the markers survives a regeneration.
  const std::string doc = write_temp("fmsim_validation.md",
                                     "# Validation\n\n## Collectives\n\n<!-- collectives:begin -->\nold\n"
                                     "<!-- collectives:end -->\n\n## Training\n\nkeep me\n");
  const auto r =
      run_fmsim({"validate", "collectives", "--csv", source_path("validation/collectives.csv"), "--write-doc", doc});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(doc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("keep me"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\nold\n")));
  EXPECT_THAT(text, HasSubstr("| C01 |"));
}

}  // namespace
}  // namespace fmsim::testing
