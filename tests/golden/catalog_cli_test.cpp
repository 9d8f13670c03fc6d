// Golden tests of `fmsim catalog`: aligned tables, JSON, `show` with sources, `cluster`, user
// catalog files, and at least 15 bad inputs that exit 2 naming file:line: field or the closest name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string fixture(const std::string& name) { return source_path("tests/data/catalog/" + name); }

std::vector<std::string> table_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  return lines;
}

// Every row starts its columns where the header does: check the start of column `header`.
void expect_column_aligned(const std::string& out, const std::string& header) {
  const auto lines = table_lines(out);
  ASSERT_GT(lines.size(), 2u);
  const auto col = lines[0].find(header);
  ASSERT_NE(col, std::string::npos) << header;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    ASSERT_GT(lines[i].size(), col) << lines[i];
    EXPECT_EQ(lines[i][col - 1], ' ') << lines[i];
    EXPECT_NE(lines[i][col], ' ') << "column " << header << " misaligned in: " << lines[i];
  }
}

TEST(CatalogCli, GpuTableListsEveryGpuAligned) {
  const auto r = run_fmsim({"catalog", "gpus"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* gpu : {"a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm", "h800-sxm", "h200-sxm", "b200-sxm", "gb200",
                          "b300-sxm", "gb300"}) {
    EXPECT_THAT(r.out, HasSubstr(gpu));
  }
  expect_column_aligned(r.out, "ARCH");
  // H100 SXM: dense BF16 989.4 TF, FP8 1978.9 TF, 80 GB, 81,920 MiB = 80.0 GiB usable, 3.35 TB/s.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("h100-sxm +hopper +989.4 +1978.9 +- +494.7 +80 +80.0 +3.35"));
  EXPECT_THAT(r.out, HasSubstr("* unverified"));
}

TEST(CatalogCli, SystemTableShowsNetworkAndPrices) {
  const auto r = run_fmsim({"catalog", "systems"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_column_aligned(r.out, "KIND");
  // p5.48xlarge: 8 x H100, 32 x 100G EFA v2 = 3,200 Gbps, 192 vCPUs, 55.04 USD/h on demand.
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("p5.48xlarge +instance +h100-sxm +8 +1 +8 +yes +efa-v2 +32x100G +3200 +192"));
  EXPECT_THAT(r.out, HasSubstr("55.04"));
  // u-p6e-gb200x72: 72 GPUs in 18 nodes, one 72-GPU NVLink domain, Capacity Blocks only.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("u-p6e-gb200x72 +ultraserver +gb200 +72 +18 +72 +yes"));
  EXPECT_THAT(r.out, AllOf(HasSubstr("dgx-h100"), HasSubstr("gb200-nvl72"), HasSubstr("gb300-nvl72")));
}

TEST(CatalogCli, FabricAndStorageTables) {
  const auto fabrics = run_fmsim({"catalog", "fabrics"});
  ASSERT_EQ(fabrics.exit_code, 0) << fabrics.err;
  expect_column_aligned(fabrics.out, "KIND");
  // efa-v4: generation 4, 35 us reported by aws-ofi-nccl [OFI-PLAT].
  EXPECT_THAT(fabrics.out, ::testing::ContainsRegex("efa-v4 +efa +4 +35 "));
  EXPECT_THAT(fabrics.out, AllOf(HasSubstr("ib-ndr"), HasSubstr("efa-v1")));
  const auto storage = run_fmsim({"catalog", "storage"});
  ASSERT_EQ(storage.exit_code, 0) << storage.err;
  expect_column_aligned(storage.out, "KIND");
  EXPECT_THAT(storage.out, ::testing::ContainsRegex("fsx-persistent2-1000 +fsx-lustre +1000 +2600"));
  EXPECT_THAT(storage.out, ::testing::ContainsRegex("s3 +s3 .* 5500 +3500"));
}

TEST(CatalogCli, JsonListsParseWithUnitsAndSources) {
  const auto r = run_fmsim({"catalog", "gpus", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j.size(), 11u);  // 9 + the export-variant H20 and A800 (data/hardware/gpus.yaml)
  const auto h100 = *std::find_if(j.begin(), j.end(), [](const auto& g) { return g["name"] == "h100-sxm"; });
  EXPECT_DOUBLE_EQ(h100["values"]["bf16"]["value"].get<double>(), 989.4e12);
  EXPECT_EQ(h100["values"]["bf16"]["unit"], "FLOP/s");
  EXPECT_THAT(h100["values"]["bf16"]["source"].get<std::string>(), HasSubstr("[GK-H100]"));
  EXPECT_EQ(h100["architecture"], "hopper");

  for (const char* what : {"systems", "fabrics", "storage"}) {
    const auto list = run_fmsim({"catalog", what, "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    const auto parsed = nlohmann::json::parse(list.out);
    ASSERT_TRUE(parsed.is_array()) << what;
    EXPECT_GT(parsed.size(), 5u) << what;
  }
}

TEST(CatalogCli, ShowPrintsEveryValueWithItsSource) {
  const auto r = run_fmsim({"catalog", "show", "p5en.48xlarge"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("system p5en.48xlarge"), HasSubstr("efa-v3"), HasSubstr("[EC2-AC]"),
                           HasSubstr("63.296 USD/h"), HasSubstr("[KARP-PRICE]"), HasSubstr("200 Gbps")));
  // An alias finds the entry; unverified values are marked.
  const auto gb200 = run_fmsim({"catalog", "show", "GB200"});
  ASSERT_EQ(gb200.exit_code, 0) << gb200.err;
  EXPECT_THAT(gb200.out, AllOf(HasSubstr("gpu gb200"), HasSubstr("(unverified)"), HasSubstr("186 GB")));
}

TEST(CatalogCli, ShowJson) {
  const auto r = run_fmsim({"catalog", "show", "H800", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["type"], "gpu");
  EXPECT_EQ(j["name"], "h800-sxm");
  EXPECT_DOUBLE_EQ(j["values"]["nvlink_bandwidth"]["value"].get<double>(), 400e9);  // 400 GB/s bidirectional
  EXPECT_FALSE(j["values"]["nvlink_bandwidth"]["verified"].get<bool>());
}

TEST(CatalogCli, ClusterShape) {
  // 4 x u-p6e-gb200x72 = 72 nodes, 288 GPUs; 4 x 761.904 = 3047.62 USD/h.
  const auto r = run_fmsim({"catalog", "cluster", "u-p6e-gb200x72:4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("72 nodes"), HasSubstr("288 x gb200"), HasSubstr("NVLink domain: 72 GPUs"),
                           HasSubstr("3047.62 USD/h")));
  const auto file = run_fmsim({"catalog", "cluster", fixture("cluster_good.yaml"), "--json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  const auto j = nlohmann::json::parse(file.out);
  EXPECT_EQ(j["gpus"], 128);
  EXPECT_EQ(j["storage"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["oversubscription"].get<double>(), 2.0);
}

// examples/custom_catalog.yaml: a new GPU and instance and an override, loaded without rebuilding.
TEST(CatalogCli, CustomCatalogExample) {
  const std::string example = source_path("examples/custom_catalog.yaml");
  const auto gpus = run_fmsim({"--catalog", example, "catalog", "gpus"});
  ASSERT_EQ(gpus.exit_code, 0) << gpus.err;
  EXPECT_THAT(gpus.out, AllOf(HasSubstr("acme-x1"), HasSubstr("h100-sxm-96gb-500w")));
  const auto show = run_fmsim({"--catalog", example, "catalog", "show", "acme-x1-8"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, AllOf(HasSubstr("acme-x1"), HasSubstr("custom_catalog.yaml:"), HasSubstr("80 USD/h")));
  const auto cluster = run_fmsim({"--catalog", example, "catalog", "cluster", "acme-x1-8:32"});
  ASSERT_EQ(cluster.exit_code, 0) << cluster.err;
  EXPECT_THAT(cluster.out, HasSubstr("256 x acme-x1"));
  // Without the file the custom entries do not exist.
  EXPECT_EQ(run_fmsim({"catalog", "show", "acme-x1-8"}).exit_code, 2);
}

TEST(CatalogCli, HelpExplainsTheCommand) {
  const auto r = run_fmsim({"catalog", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, AllOf(HasSubstr("gpus"), HasSubstr("systems"), HasSubstr("storage"), HasSubstr("fabrics"),
                           HasSubstr("show"), HasSubstr("cluster"), HasSubstr("Examples"), HasSubstr("--catalog")));
}

// ------------------------------------------------------------------------------------------
// Bad input: exit status 2 and a message naming file:line: field, or the closest names.

struct BadInput {
  std::vector<std::string> args;
  std::string expected;  // substring of stderr
};

std::vector<std::string> with_catalog(const std::string& file) {
  return {"--catalog", fixture(file), "catalog", "gpus"};
}
std::vector<std::string> cluster_file(const std::string& file) { return {"catalog", "cluster", fixture(file)}; }

// Short, readable test names in ctest: the arguments after "catalog".
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.args.back(); }

class CatalogBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CatalogBadInput, ExitsTwoWithAPreciseMessage) {
  const auto r = run_fmsim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().expected));
  EXPECT_THAT(r.err, HasSubstr("fmsim: error: "));
  EXPECT_THAT(r.out, Not(HasSubstr("NAME")));  // no half-printed table
}

INSTANTIATE_TEST_SUITE_P(
    Catalog, CatalogBadInput,
    ::testing::Values(
        // Unknown names suggest the closest matches.
        BadInput{{"catalog", "cluster", "p5.48xlarg:64"}, "unknown system 'p5.48xlarg'; did you mean p5.48xlarge"},
        BadInput{{"catalog", "show", "h100-smx"}, "unknown catalog entry 'h100-smx'; did you mean h100-sxm"},
        BadInput{{"catalog", "cluster", "u-p6e-gb200x27:2"},
                 "unknown system 'u-p6e-gb200x27'; did you mean u-p6e-gb200x36 or u-p6e-gb200x72?"},
        // Bad counts.
        BadInput{{"catalog", "cluster", "p5.48xlarge:0"}, "whole number of at least 1, got '0'"},
        BadInput{{"catalog", "cluster", "p5.48xlarge:-4"}, "whole number of at least 1, got '-4'"},
        BadInput{{"catalog", "cluster", "p5.48xlarge:2.5"}, "whole number of at least 1, got '2.5'"},
        // Catalog files: malformed YAML, wrong units, bad sizes, unknown keys, bad references.
        BadInput{with_catalog("malformed.yaml"), "malformed.yaml:5: malformed YAML"},
        BadInput{with_catalog("wrong_unit.yaml"), "wrong_unit.yaml:4: gpus[0].bf16: '989 GB/s': unknown unit 'GB/s'"},
        BadInput{with_catalog("no_unit.yaml"), "no_unit.yaml:6: gpus[0].hbm_capacity: '80' has no unit"},
        BadInput{with_catalog("negative_size.yaml"),
                 "negative_size.yaml:4: gpus[0].hbm_usable: -80 GiB must be greater than zero"},
        BadInput{with_catalog("zero_size.yaml"),
                 "zero_size.yaml:7: gpus[0].hbm_bandwidth: 0 TB/s must be greater than zero"},
        BadInput{with_catalog("unknown_key.yaml"),
                 "unknown_key.yaml:4: gpus[0].bf61: unknown key 'bf61'; did you mean bf16?"},
        BadInput{with_catalog("unknown_section.yaml"),
                 "unknown_section.yaml:3: gpu: unknown key 'gpu'; did you mean gpus?"},
        BadInput{with_catalog("unknown_gpu_ref.yaml"),
                 "unknown_gpu_ref.yaml:5: systems[0].gpu: unknown gpu 'h100-sxmm'"},
        BadInput{with_catalog("missing_field.yaml"), "missing_field.yaml:3: gpus[0].bf16: missing required field"},
        BadInput{with_catalog("duplicate_key.yaml"),
                 "duplicate_key.yaml:5: systems[0].price_per_hour: key appears more than once"},
        BadInput{with_catalog("efficiency_range.yaml"), "efficiency_range.yaml:4: fabrics[0].efficiency: 1.5"},
        BadInput{with_catalog("nvls_without_nvswitch.yaml"), "nvls_without_nvswitch.yaml:8: systems[0].nvls:"},
        BadInput{with_catalog("price_bad_date.yaml"),
                 "price_bad_date.yaml:6: systems[0].price_date: '20/07/2026' is not a date"},
        BadInput{with_catalog("unknown_base.yaml"),
                 "unknown_base.yaml:4: gpus[0].base: unknown gpu 'h100-smx'; did you mean h100-sxm?"},
        BadInput{with_catalog("empty.yaml"), "empty.yaml:1: the catalog file is empty"},
        BadInput{with_catalog("fractional_count.yaml"),
                 "fractional_count.yaml:4: systems[0].gpus_per_node: '8.5' is not a whole number"},
        BadInput{with_catalog("alias_collision.yaml"),
                 "alias_collision.yaml:5: gpus[0].aliases: 'H200' already names gpu 'h200-sxm'"},
        BadInput{with_catalog("bad_enum.yaml"),
                 "bad_enum.yaml:5: gpus[0].architecture: unknown GPU architecture 'hoper'; allowed: ampere, hopper"},
        BadInput{{"--catalog", fixture("does_not_exist.yaml"), "catalog", "gpus"}, "does_not_exist.yaml"},
        // Cluster files.
        BadInput{cluster_file("cluster_unknown_key.yaml"),
                 "cluster_unknown_key.yaml:5: storrage: unknown key 'storrage'; did you mean storage?"},
        BadInput{cluster_file("cluster_wrong_kind.yaml"), "cluster_wrong_kind.yaml:2: kind: this file is a 'Catalog'"},
        BadInput{cluster_file("cluster_fsx_too_small.yaml"),
                 "cluster_fsx_too_small.yaml:7: storage[0].capacity: 100 GiB is below"},
        BadInput{cluster_file("cluster_oversubscription.yaml"),
                 "cluster_oversubscription.yaml:6: fabric.oversubscription: 0.5 is below 1"},
        BadInput{cluster_file("cluster_zero_count.yaml"),
                 "cluster_zero_count.yaml:4: count: 0 must be greater than zero"},
        BadInput{
            cluster_file("cluster_unknown_storage.yaml"),
            "cluster_unknown_storage.yaml:6: storage[0].storage: unknown storage 's3-expres'; did you mean s3-express"},
        BadInput{{"catalog", "cluster", "no/such/cluster.yaml"},
                 "cluster file 'no/such/cluster.yaml' does not exist"}));

}  // namespace
