// slurm.conf and topology.conf as users write them.
#include <gtest/gtest.h>

#include "config/slurm_conf.hpp"
#include "config/slurm_syntax.hpp"
#include "config/topology_conf.hpp"
#include "core/error.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::config {
namespace {

// slurm.conf(5): a bare number is minutes; MM:SS; HH:MM:SS; D-HH; D-HH:MM:SS; UNLIMITED.
TEST(SlurmConf, DurationsAsSlurmWritesThem) {
  EXPECT_EQ(parse_slurm_duration("30"), 1800);
  EXPECT_EQ(parse_slurm_duration("5:30"), 330);
  EXPECT_EQ(parse_slurm_duration("02:00:00"), 7200);
  EXPECT_EQ(parse_slurm_duration("1-12"), 86400 + 12 * 3600);
  EXPECT_EQ(parse_slurm_duration("7-0"), 7 * 86400);
  EXPECT_EQ(parse_slurm_duration("1-00:00:30"), 86430);
  EXPECT_EQ(parse_slurm_duration("UNLIMITED"), 0);
  EXPECT_LT(parse_slurm_duration("ten"), 0);
  // A field of more than 9 digits is malformed, not an out_of_range from std::stol.
  EXPECT_LT(parse_slurm_duration("18446744073709551616"), 0);
  EXPECT_LT(parse_slurm_duration("1-18446744073709551616"), 0);
  EXPECT_LT(parse_slurm_duration("18446744073709551616-0"), 0);
  EXPECT_EQ(parse_slurm_duration("999999999"), 999999999.0 * 60);
}

TEST(SlurmConf, ReadsSchedulerPriorityNodesAndPartitions) {
  const std::string text =
      "# a cluster\n"
      "SchedulerType=sched/backfill\n"
      "SchedulerParameters=bf_interval=15,bf_window=2880,bf_max_job_test=200,bf_continue,sched_min_interval=100000\n"
      "PriorityType=priority/multifactor\n"
      "PriorityWeightAge=1000 PriorityWeightJobSize=500 \\\n"
      "  PriorityMaxAge=1-0\n"
      "TopologyPlugin=topology/tree\n"
      "NodeName=DEFAULT CPUs=192\n"
      "NodeName=gpu[01-04] Gres=gpu:8 State=UNKNOWN\n"
      "PartitionName=train Nodes=gpu[01-04] Default=YES MaxTime=2-0 PriorityTier=1\n"
      "PartitionName=urgent Nodes=gpu[03-04] PriorityTier=5 PriorityJobFactor=10\n";
  const auto f = parse_slurm_conf(text, "slurm.conf");
  EXPECT_TRUE(f.config.backfill);
  EXPECT_EQ(f.config.bf_interval_s, 15);
  EXPECT_EQ(f.config.bf_window_s, 2880 * 60);
  EXPECT_EQ(f.config.bf_max_job_test, 200);
  EXPECT_DOUBLE_EQ(f.config.sched_min_interval_s, 0.1);  // microseconds in the file
  EXPECT_TRUE(f.config.multifactor);
  EXPECT_EQ(f.config.weight_job_size, 500);
  EXPECT_EQ(f.config.max_age_s, 86400);
  EXPECT_EQ(f.config.placement, orchestration::Placement::Tree);
  EXPECT_EQ(f.node_names, (std::vector<std::string>{"gpu01", "gpu02", "gpu03", "gpu04"}));
  EXPECT_EQ(f.config.total_cpus, 4 * 192);  // NodeName=DEFAULT CPUs=192
  ASSERT_EQ(f.config.partitions.size(), 2u);
  EXPECT_EQ(f.config.partitions[0].max_time_s, 2 * 86400);
  EXPECT_EQ(f.config.partitions[1].nodes, (std::vector<int>{2, 3}));
  EXPECT_EQ(f.config.partitions[1].priority_tier, 5);
  EXPECT_EQ(f.config.partition_index(""), 0);
  EXPECT_EQ(f.config.partition_index("urgent"), 1);
}

TEST(SlurmConf, BadValuesNameTheLineAndKey) {
  try {
    parse_slurm_conf("NodeName=n1\nPriorityMaxAge=soon\n", "my.conf");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("my.conf"), std::string::npos) << what;
    EXPECT_NE(what.find("2"), std::string::npos) << what;
    EXPECT_NE(what.find("PriorityMaxAge"), std::string::npos) << what;
  }
  EXPECT_THROW(parse_slurm_conf("SchedulerType=sched/hold\n", "x"), core::InputError);
  EXPECT_THROW(parse_slurm_conf("NodeName=n1\nPartitionName=p Nodes=n2\n", "x"), core::InputError);
  // Past 2^63 (std::stol's out_of_range was an internal error) and past the twin's 100-year clock.
  for (const char* age : {"18446744073709551616", "999999999"}) {
    try {
      parse_slurm_conf(std::string("NodeName=n1\nPriorityMaxAge=") + age + "\n", "my.conf");
      FAIL() << "no error for " << age;
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.line(), 2) << e.what();
      EXPECT_EQ(e.field(), "PriorityMaxAge") << e.what();
    }
  }
}

// slurm.conf(5) writes Default= and FavorSmall= as YES/NO; Slurm's boolean parser also takes
// TRUE/FALSE and 1/0. They are core::kYesNoWords, the one yes/no vocabulary: case-blind, and
// anything else is an error naming file:line and the key.
TEST(SlurmConf, YesNoKeysUseTheOneVocabulary) {
  const auto f = parse_slurm_conf(
      "NodeName=n[1-3]\n"
      "PartitionName=a Nodes=n1 Default=NO\n"
      "PartitionName=b Nodes=n2 Default=yes\n"
      "PartitionName=c Nodes=n3 Default=0\n",
      "slurm.conf");
  ASSERT_EQ(f.config.partitions.size(), 3u);
  EXPECT_FALSE(f.config.partitions[0].is_default);
  EXPECT_TRUE(f.config.partitions[1].is_default);
  EXPECT_FALSE(f.config.partitions[2].is_default);
  EXPECT_EQ(core::kYesNoWords.parse("TRUE"), true);
  EXPECT_EQ(core::kYesNoWords.parse("1"), true);
  try {
    parse_slurm_conf("NodeName=n1\nPartitionName=p Nodes=n1 Default=maybe\n", "my.conf");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("my.conf:2"), std::string::npos) << what;
    EXPECT_NE(what.find("Default"), std::string::npos) << what;
    EXPECT_NE(what.find("YES or NO"), std::string::npos) << what;
  }
}

// slurm.conf(5): PreemptMode=MODE[,GANG] cluster-wide or per partition; OFF, CANCEL and REQUEUE
// are modelled, SUSPEND (and GANG alone) are not, on either line.
TEST(SlurmConf, PreemptModeOnThePartitionIsSlurmsWord) {
  const auto f = parse_slurm_conf(
      "PreemptMode=CANCEL\n"
      "NodeName=n[1-2]\n"
      "PartitionName=p Nodes=n1 PreemptMode=REQUEUE,GANG\n"
      "PartitionName=q Nodes=n2\n",
      "slurm.conf");
  EXPECT_EQ(f.config.preempt_mode, orchestration::PreemptMode::Cancel);
  ASSERT_EQ(f.config.partitions.size(), 2u);
  EXPECT_EQ(f.config.partitions[0].preempt_mode, orchestration::PreemptMode::Requeue);
  EXPECT_FALSE(f.config.partitions[1].preempt_mode.has_value());  // the cluster-wide mode
  try {
    parse_slurm_conf("NodeName=n1\nPartitionName=p Nodes=n1 PreemptMode=SUSPEND\n", "my.conf");
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("my.conf:2"), std::string::npos) << what;
    EXPECT_NE(what.find("PreemptMode"), std::string::npos) << what;
    EXPECT_NE(what.find("REQUEUE"), std::string::npos) << what;
  }
}

TEST(TopologyConf, TreeAndBlocksOntoNodes) {
  orchestration::ClusterLayout layout;
  for (int i = 1; i <= 6; ++i) layout.node_names.push_back("n" + std::to_string(i));
  apply_topology_conf(layout,
                      "SwitchName=s1 Nodes=n[1-3]\nSwitchName=s2 Nodes=n[4-6]\nSwitchName=top Switches=s[1-2]\n",
                      "topology.conf");
  ASSERT_EQ(layout.switches.size(), 3u);
  EXPECT_EQ(layout.switches[2].level, 1);
  EXPECT_EQ(layout.node_leaf[4], 1);
  EXPECT_EQ(layout.switch_distance[0][1], 2);
  apply_topology_conf(layout, "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-6]\nBlockSizes=3\n", "t");
  EXPECT_EQ(layout.block_size, 3);
  EXPECT_EQ(layout.node_block[3], 1);
  EXPECT_THROW(apply_topology_conf(layout, "SwitchName=s1 Nodes=n9\n", "t"), core::InputError);
}

// A hostlist expands to at most a million names, each range of at most 9 digits: ranges of a
// million each exhausted memory, and a 20-digit bound threw std::out_of_range (exit 70).
TEST(SlurmSyntax, HostlistsAreBounded) {
  EXPECT_EQ(expand_hostlist("n[08-11],gpu7", "slurm.conf", 3, "Nodes").size(), 5u);
  EXPECT_EQ(expand_hostlist("n[08-11]", "slurm.conf", 3, "Nodes")[0], "n08");
  std::string many;
  for (int i = 0; i < 3; ++i) many += (i ? "," : "") + std::string(1, static_cast<char>('a' + i)) + "[0-499999]";
  EXPECT_THROW((void)expand_hostlist(many, "slurm.conf", 3, "Nodes"), core::InputError);
  try {
    (void)expand_hostlist("n[1-99999999999999999999]", "slurm.conf", 3, "Nodes");
    ADD_FAILURE();
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("slurm.conf:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Nodes"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)expand_hostlist("n[5-3]", "slurm.conf", 3, "Nodes"), core::InputError);
}

}  // namespace
}  // namespace fmsim::config
