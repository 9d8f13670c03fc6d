// Tier performance from catalog specs, DRA lazy load / export, and the data-loading check.
#include "storage/storage_tier.hpp"

#include <gtest/gtest.h>

#include "storage/data_loading.hpp"
#include "storage/data_repository.hpp"

namespace fmsim::storage {
namespace {

using core::gb_per_s;

hardware::ClusterSpec cluster(int nodes) {
  hardware::ClusterSpec c;
  c.system.gpus_per_node = 8;
  c.system.network_bandwidth = gb_per_s(400);
  c.system.host_memory = core::gib(2048);
  c.count = nodes;
  return c;
}

hardware::StorageAttachment attach(const char* name, core::Bytes capacity = {}, int prefixes = 1) {
  hardware::StorageAttachment a;
  a.storage = name;
  a.capacity = capacity;
  a.prefixes = prefixes;
  return a;
}

hardware::StorageSpec fsx_1000() {
  hardware::StorageSpec s;
  s.name = "fsx";
  s.kind = hardware::StorageKind::FsxLustre;
  s.throughput_per_tib = core::BytesPerSecond(1000e6);
  s.min_capacity = core::gib(1200);
  s.max_client_throughput = gb_per_s(150);
  return s;
}

hardware::StorageSpec s3() {
  hardware::StorageSpec s;
  s.name = "s3";
  s.kind = hardware::StorageKind::S3;
  s.put_requests_per_s = 3500;
  s.get_requests_per_s = 5500;
  s.per_connection_throughput = core::BytesPerSecond(88e6);
  return s;
}

TEST(StorageTier, FsxScalesWithCapacity) {
  // 1,000 MB/s/TiB x 100 TiB = 100 GB/s aggregate; per client min(150 GB/s catalog cap, 400 GB/s NIC).
  const auto t = tier_performance(fsx_1000(), attach("fsx", core::tib(100)), cluster(16));
  EXPECT_NEAR(t.aggregate_write.value(), 100e9, 1.0);
  EXPECT_NEAR(t.per_node_write.value(), 150e9, 1.0);
  EXPECT_TRUE(t.remote);
}

TEST(StorageTier, S3RequestRateScalesWithPrefixes) {
  // 3,500 PUT/s per prefix x 10 prefixes; per node 64 connections x 88 MB/s = 5.632 GB/s.
  const auto t = tier_performance(s3(), attach("s3", {}, 10), cluster(4),
                                  {.connections_per_node = 64, .part_size = core::mib(64)});
  EXPECT_DOUBLE_EQ(t.write_requests_per_s, 35000.0);
  EXPECT_DOUBLE_EQ(t.read_requests_per_s, 55000.0);
  EXPECT_NEAR(t.per_node_write.value(), 64 * 88e6, 1.0);
  EXPECT_EQ(t.aggregate_write.value(), 0.0);
}

TEST(StorageTier, HostMemoryIsNodeLocal) {
  // 8 GPUs x 50 GB/s copy per node; capacity = 2 TiB x nodes.
  const auto t = host_memory_tier(cluster(4), {.host_copy = gb_per_s(50)});
  EXPECT_NEAR(t.per_node_write.value(), 400e9, 1.0);
  EXPECT_NEAR(t.capacity.value(), core::gib(2048).value() * 4, 1.0);
  EXPECT_TRUE(t.node_local);
  EXPECT_FALSE(t.remote);
}

TEST(DataRepository, LazyLoadBoundBySlowerSide) {
  // S3 side: 5,500 GET/s x 64 MiB = 369 GB/s; FSx side 100 GB/s -> 1 PB takes 1e15/1e11 = 10,000 s.
  const auto fsx = tier_performance(fsx_1000(), attach("fsx", core::tib(100)), cluster(16));
  const auto obj = tier_performance(s3(), attach("s3"), cluster(16), {.part_size = core::mib(64)});
  const auto e = estimate_lazy_load(core::Bytes(1e15), fsx, obj);
  EXPECT_NEAR(e.time.value(), 1e4, 1e-6);
  EXPECT_EQ(e.limit, "fsx throughput");
}

TEST(DataRepository, ExportKeepsUpOnlyWhenSavePlusExportFitTheInterval) {
  // 5.67 TB checkpoint, export at min(100 GB/s, 3500 x 64 MiB = 234.9 GB/s) = 56.7 s; save 60 s.
  const auto fsx = tier_performance(fsx_1000(), attach("fsx", core::tib(100)), cluster(16));
  const auto obj = tier_performance(s3(), attach("s3"), cluster(16), {.part_size = core::mib(64)});
  const auto ok = estimate_export(core::tb(5.67), core::seconds(60), core::minutes(30), fsx, obj);
  EXPECT_NEAR(ok.export_time.value(), 56.7, 1e-9);
  EXPECT_TRUE(ok.keeps_up);
  const auto behind = estimate_export(core::tb(5.67), core::seconds(60), core::seconds(100), fsx, obj);
  EXPECT_FALSE(behind.keeps_up);
}

TEST(DataLoading, FlagsStarvation) {
  // 16,384 GPUs x 3,000 tokens/s x 4 B = 196.6 MB/s: fine on 100 GB/s, starved on 0.1 GB/s.
  const DataLoadingDemand d{.tokens_per_s = 16384 * 3000.0, .bytes_per_token = 4.0, .nodes = 2048};
  EXPECT_NEAR(check_data_loading(d, custom_tier("a", gb_per_s(100), {})).required.value(), 196.608e6, 1.0);
  EXPECT_FALSE(check_data_loading(d, custom_tier("a", gb_per_s(100), {})).starves);
  EXPECT_TRUE(check_data_loading(d, custom_tier("b", gb_per_s(0.1), {})).starves);
  EXPECT_DOUBLE_EQ(token_id_bytes(128256), 4.0);
  EXPECT_DOUBLE_EQ(token_id_bytes(50257), 2.0);
}

}  // namespace
}  // namespace fmsim::storage
