// `fmsim cluster`'s flag values resolved into the cluster, its scheduler configurations and the
// policies of --compare (jobspec/cluster.hpp).
#include <gtest/gtest.h>

#include "../support/shipped_catalog.hpp"
#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "jobspec/cluster.hpp"

namespace fmsim::jobspec {
namespace {

using fmsim::testing::shipped_catalog;

ClusterFlags small() {
  ClusterFlags f;
  f.cluster = "p5en.48xlarge:8";
  f.synthetic = 20;
  return f;
}

// Defaults (Slurm 22.05): sched/backfill, priority/basic; a non-UltraServer cluster is placed by
// topology/tree. The first policy is named after the scheduler type.
TEST(ResolveClusterJob, DefaultsAreSlurmBackfillOnTheTree) {
  const auto job = resolve_cluster_job(small(), shipped_catalog());
  EXPECT_FALSE(job.k8s);
  ASSERT_EQ(job.policies.size(), 1u);
  EXPECT_EQ(job.policies[0].name, "backfill");
  EXPECT_TRUE(job.policies[0].config.backfill);
  EXPECT_FALSE(job.policies[0].config.multifactor);
  EXPECT_EQ(job.policies[0].config.placement, orchestration::Placement::Tree);
  EXPECT_EQ(job.layout.nodes(), 8);
  EXPECT_EQ(job.jobs.size(), 20u);
}

// Words go through the vocabularies: aliases name the same setting as the canonical word.
TEST(ResolveClusterJob, AliasesAreTheSameSettings) {
  auto f = small();
  f.scheduler = "kubernetes";
  f.queueing = "StrictFIFO";
  f.placement = "none";
  f.policy = "builtin";
  const auto job = resolve_cluster_job(f, shipped_catalog());
  EXPECT_TRUE(job.k8s);
  EXPECT_TRUE(job.policies[0].options.kueue.enabled);
  EXPECT_TRUE(job.policies[0].options.kueue.strict_fifo);
  EXPECT_EQ(job.policies[0].config.placement, orchestration::Placement::Consecutive);
  EXPECT_FALSE(job.policies[0].config.backfill);
  EXPECT_EQ(job.policies[0].name, "kueue");
}

// --compare entries change one setting of the first policy each: bf_window is in minutes
// (slurm.conf SchedulerParameters), spares also reach the failure model.
TEST(ApplyCompareEntry, EachEntryChangesItsSetting) {
  const auto job = resolve_cluster_job(small(), shipped_catalog());
  const auto& base = job.policies[0];
  EXPECT_FALSE(apply_compare_entry(base, "fifo", job.layout).config.backfill);
  EXPECT_TRUE(apply_compare_entry(base, "multifactor", job.layout).config.multifactor);
  EXPECT_EQ(apply_compare_entry(base, "consecutive", job.layout).config.placement,
            orchestration::Placement::Consecutive);
  EXPECT_DOUBLE_EQ(apply_compare_entry(base, "bf_window=60", job.layout).config.bf_window_s, 3600.0);
  const auto spares = apply_compare_entry(base, "spares=3", job.layout);
  EXPECT_EQ(spares.spares, 3);
  EXPECT_EQ(spares.options.failures.spares, 3);
  EXPECT_EQ(spares.name, "spares=3");
}

TEST(ApplyCompareEntry, UnknownEntriesAndBadNumbersAreRefused) {
  const auto job = resolve_cluster_job(small(), shipped_catalog());
  EXPECT_THROW(apply_compare_entry(job.policies[0], "lottery", job.layout), core::InputError);
  EXPECT_THROW(apply_compare_entry(job.policies[0], "spares=-1", job.layout), core::InputError);
  EXPECT_THROW(apply_compare_entry(job.policies[0], "bf_window=x", job.layout), core::InputError);
  // Block placement needs NVLink blocks; p5en has none.
  EXPECT_THROW(apply_compare_entry(job.policies[0], "block", job.layout), core::InputError);
}

TEST(ResolveClusterJob, BadWordsNameTheFlag) {
  auto f = small();
  f.scheduler = "yarn";
  try {
    resolve_cluster_job(f, shipped_catalog());
    FAIL() << "accepted --scheduler yarn";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.field(), "--scheduler");
    EXPECT_NE(std::string(e.what()).find("allowed: slurm, k8s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fmsim::jobspec
