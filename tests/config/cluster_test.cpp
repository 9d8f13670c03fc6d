// Cluster specs: "SYSTEM[:COUNT]" strings and kind: Cluster files resolved against the catalog.
#include <gtest/gtest.h>

#include <string>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "expect_input_error.hpp"

namespace fmsim::config {
namespace {

using fmsim::testing::shipped_catalog;

using fmsim::testing::catalog_fixture;

// gpus = count x nodes per unit x GPUs per node; price = count x price per unit.
TEST(ParseCluster, InstanceCount) {
  const auto c = parse_cluster(shipped_catalog(), "p5.48xlarge:64");
  EXPECT_EQ(c.count, 64);
  EXPECT_EQ(c.nodes(), 64);
  EXPECT_EQ(c.gpus(), 512);  // 64 x 8
  EXPECT_EQ(c.nvlink_domain_gpus(), 8);
  EXPECT_EQ(c.gpu.name, "h100-sxm");
  EXPECT_EQ(c.fabric.name, "efa-v2");
  EXPECT_DOUBLE_EQ(c.price_per_hour_usd(), 64 * 55.04);
  EXPECT_DOUBLE_EQ(c.oversubscription, 1.0);  // non-blocking by default
  EXPECT_EQ(c.name, "p5.48xlarge:64");
}

// 4 UltraServers x 18 nodes x 4 GPUs = 288 GPUs in 72-GPU NVLink domains.
TEST(ParseCluster, UltraServers) {
  const auto c = parse_cluster(shipped_catalog(), "u-p6e-gb200x72:4");
  EXPECT_EQ(c.nodes(), 72);
  EXPECT_EQ(c.gpus(), 288);
  EXPECT_EQ(c.gpus_per_node(), 4);
  EXPECT_EQ(c.nvlink_domain_gpus(), 72);
  EXPECT_EQ(c.gpu.name, "gb200");
}

TEST(ParseCluster, ReferenceSystemsAliasesAndDefaultCount) {
  const auto dgx = parse_cluster(shipped_catalog(), "dgx-h100:128");
  EXPECT_EQ(dgx.gpus(), 1024);
  EXPECT_EQ(dgx.fabric.name, "ib-ndr");
  EXPECT_EQ(parse_cluster(shipped_catalog(), "p5:2").system.name, "p5.48xlarge");  // alias
  EXPECT_EQ(parse_cluster(shipped_catalog(), "p5en.48xlarge").count, 1);           // no count = one unit
  // The NVLink domain never exceeds the cluster: one p5.4xlarge has a 1-GPU domain.
  EXPECT_EQ(parse_cluster(shipped_catalog(), "p5.4xlarge:4").nvlink_domain_gpus(), 1);
}

TEST(ParseCluster, UnknownSystemSuggestsTheClosestName) {
  try {
    parse_cluster(shipped_catalog(), "p5.48xlarg:64");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "--cluster");
    EXPECT_EQ(e.message().rfind("unknown system 'p5.48xlarg'; did you mean p5.48xlarge", 0), 0u) << e.what();
  }
}

TEST(ParseCluster, BadCountsAreRejected) {
  for (const char* text : {"p5.48xlarge:0", "p5.48xlarge:-3", "p5.48xlarge:1.5", "p5.48xlarge:abc", "p5.48xlarge:"}) {
    try {
      parse_cluster(shipped_catalog(), text, "--systems");
      FAIL() << text;
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.field(), "--systems");
      EXPECT_NE(e.message().find("whole number of at least 1"), std::string::npos) << e.what();
    }
  }
}

// A cluster holds at most kMaxClusterGpus = 2^22 GPUs, so GPU, node and link counts fit an int:
// 524,288 p5 instances x 8 GPUs = 2^22 is allowed, one more instance is refused by name (the
// count, or the gpus that round up to it); 2^31-1 units of 8 GPUs used to wrap the GPU count.
TEST(ParseCluster, CountsPastTheLargestClusterAreRefused) {
  EXPECT_EQ(parse_cluster(shipped_catalog(), "p5.48xlarge:524288").gpus(), 1 << 22);
  for (const char* text : {"p5.48xlarge:524289", "p5.48xlarge:2147483647", "u-p6e-gb200x72:2147483647"}) {
    try {
      parse_cluster(shipped_catalog(), text, "--systems");
      FAIL() << text;
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.field(), "--systems");
      EXPECT_NE(e.message().find("more than the 4194304 (2^22) GPUs a cluster may hold"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(cluster_for_gpus(shipped_catalog(), "p5.48xlarge", 2147483647), core::InputError);
  testing::expect_input_error(
      [] {
        parse_cluster_text(shipped_catalog(), "kind: Cluster\nsystem: p5.48xlarge\ngpus: 2000000000\n", "big.yaml");
      },
      "big.yaml", 3, "gpus", "2^22");
  testing::expect_input_error(
      [] { parse_cluster_text(shipped_catalog(), "kind: Cluster\nsystem: p5.48xlarge\ncount: 600000\n", "big.yaml"); },
      "big.yaml", 3, "count", "4800000 GPUs");
}

// The in-memory form reads a cluster file's text as parse_cluster reads the file; without a
// name: field the cluster is named after the file's stem.
TEST(ClusterFile, TextInMemoryReadsLikeTheFile) {
  const auto c =
      parse_cluster_text(shipped_catalog(), "kind: Cluster\nsystem: p5en.48xlarge\ncount: 16\n", "east.yaml");
  EXPECT_EQ(c.name, "east");
  EXPECT_EQ(c.gpus(), 128);
  testing::expect_input_error([] { parse_cluster_text(shipped_catalog(), "kind: Cluster\nsystem: p5\n", "x.yaml"); },
                              "x.yaml", 1, "count", "missing required field");
}

TEST(ClusterFile, StorageAndFabricShape) {
  const auto c = parse_cluster(shipped_catalog(), catalog_fixture("cluster_good.yaml"));
  EXPECT_EQ(c.name, "training-east");
  EXPECT_EQ(c.gpus(), 128);  // 16 x 8
  ASSERT_EQ(c.storage.size(), 2u);
  EXPECT_EQ(c.storage[0].storage, "fsx-persistent2-1000");
  EXPECT_DOUBLE_EQ(c.storage[0].capacity.value(), core::tib(120).value());
  EXPECT_EQ(c.storage[0].mount, "/fsx");
  EXPECT_EQ(c.storage[1].storage, "s3");
  EXPECT_EQ(c.storage[1].prefixes, 8);
  EXPECT_DOUBLE_EQ(c.oversubscription, 2.0);
  EXPECT_EQ(c.nodes_per_leaf, 8);
}

// gpus: N rounds up to whole units: ceil(100 / 72) = 2 UltraServers.
TEST(ClusterFile, GpuCountRoundsUpToWholeUnits) {
  const auto c = parse_cluster(shipped_catalog(), catalog_fixture("cluster_gpus.yaml"));
  EXPECT_EQ(c.count, 2);
  EXPECT_EQ(c.gpus(), 144);
}

struct BadCluster {
  const char* file;
  int line;
  const char* field;
  const char* message;
};

void PrintTo(const BadCluster& c, std::ostream* os) { *os << c.file; }

class BadClusterFile : public ::testing::TestWithParam<BadCluster> {};

TEST_P(BadClusterFile, NamesFileLineAndField) {
  const BadCluster& c = GetParam();
  testing::expect_input_error([&] { parse_cluster(shipped_catalog(), catalog_fixture(c.file)); }, c.file, c.line,
                              c.field, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Cluster, BadClusterFile,
    ::testing::Values(BadCluster{"cluster_unknown_key.yaml", 5, "storrage", "did you mean storage?"},
                      BadCluster{"cluster_wrong_kind.yaml", 2, "kind", "kind: Cluster"},
                      BadCluster{"cluster_fsx_too_small.yaml", 7, "storage[0].capacity", "below the smallest"},
                      BadCluster{"cluster_oversubscription.yaml", 6, "fabric.oversubscription", "below 1"},
                      BadCluster{"cluster_zero_count.yaml", 4, "count", "greater than zero"},
                      BadCluster{"cluster_unknown_storage.yaml", 6, "storage[0].storage", "did you mean s3-express"}));

TEST(ClusterFile, MissingFileIsAFlagError) {
  try {
    parse_cluster(shipped_catalog(), "no/such/cluster.yaml");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "--cluster");
    EXPECT_NE(e.message().find("does not exist"), std::string::npos);
  }
}

// ceil(gpus / GPUs per unit): 100 GPUs on 8-GPU instances = 13 instances; 72 on x72 = 1.
TEST(ClusterForGpus, RoundsUp) {
  EXPECT_EQ(cluster_for_gpus(shipped_catalog(), "p5.48xlarge", 100).count, 13);
  EXPECT_EQ(cluster_for_gpus(shipped_catalog(), "u-p6e-gb200x72", 72).count, 1);
  EXPECT_THROW(cluster_for_gpus(shipped_catalog(), "p5.48xlarge", 0), core::InputError);
  EXPECT_THROW(cluster_for_gpus(shipped_catalog(), "p5.48xlargee", 8), core::InputError);
}

}  // namespace
}  // namespace fmsim::config
