// Golden tests of `fmsim cluster` and `fmsim topology`: text, JSON, HTML report, traces in the
// public layouts, and bad input that exits 2 naming the file, line or flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;
using ::testing::HasSubstr;

class ClusterCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fmsim-cluster-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (std::filesystem::path(dir_) / name).string();
    std::ofstream(path) << text;
    return path;
  }
  /// The command exits 2 and its message names `where`.
  static void expect_input_error(const std::vector<std::string>& args, const std::string& where) {
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_THAT(r.err, HasSubstr(where));
  }
  std::string dir_;
};

// GB200 NVL72: 18 nodes per UltraServer, one Slurm block each (BlockSizes=18).
TEST_F(ClusterCli, TopologySlurmWritesBlocksForUltraServers) {
  const auto r = run_fmsim({"topology", "slurm", "--cluster", "u-p6e-gb200x72:2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("BlockName=block1 Nodes=node[1-18]\n"));
  EXPECT_THAT(r.out, HasSubstr("BlockName=block2 Nodes=node[19-36]\n"));
  EXPECT_THAT(r.out, HasSubstr("BlockSizes=18\n"));
  const auto tree = run_fmsim({"topology", "slurm", "--cluster", "p5en.48xlarge:40"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_THAT(tree.out, HasSubstr("SwitchName=leaf1 Nodes=node[1-16]\n"));
  EXPECT_THAT(tree.out, HasSubstr("SwitchName=spine1 Switches=leaf1,leaf2,leaf3\n"));
}

TEST_F(ClusterCli, TopologyK8sLabelsAndJson) {
  const auto r = run_fmsim({"topology", "k8s", "--cluster", "p5.48xlarge:20", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"].size(), 20u);
  EXPECT_EQ(j["nodes"][16]["leaf_switch"], "leaf2");
  EXPECT_THAT(j["text"].get<std::string>(), HasSubstr("topology.k8s.aws/network-node-layer-3=leaf2"));
  const auto bad = run_fmsim({"topology", "slurm", "--cluster", "p5.48xlarge:4", "--plugin", "block"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--plugin"));
}

// FIFO (sched/builtin) never backfills; backfill starts some jobs out of order. Every job starts
// no earlier than it was submitted and ends no earlier than it started.
TEST_F(ClusterCli, SyntheticWorkloadBackfillAgainstFifoAsJson) {
  const auto r = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:32", "--synthetic", "300", "--arrival", "10m",
                            "--compare", "fifo", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["policies"].size(), 2u);
  const auto& bf = j["policies"][0];
  const auto& fifo = j["policies"][1];
  EXPECT_EQ(bf["name"], "backfill");
  EXPECT_GT(bf["summary"]["backfilled"].get<int>(), 0);
  EXPECT_EQ(fifo["summary"]["backfilled"].get<int>(), 0);
  EXPECT_LE(bf["summary"]["mean_wait_s"].get<double>(), fifo["summary"]["mean_wait_s"].get<double>());
  ASSERT_EQ(bf["jobs"].size(), 300u);
  for (const auto& job : bf["jobs"]) {
    ASSERT_TRUE(job.contains("start_s")) << job;
    EXPECT_GE(job["start_s"].get<double>(), job["submit_s"].get<double>());
    EXPECT_GE(job["end_s"].get<double>(), job["start_s"].get<double>());
  }
  const double u = bf["summary"]["utilisation"].get<double>();
  EXPECT_GT(u, 0.0);
  EXPECT_LE(u, 1.0 + 1e-9);
}

TEST_F(ClusterCli, TextTableAndHtmlReport) {
  const auto report = (std::filesystem::path(dir_) / "cluster.html").string();
  const auto r = run_fmsim({"cluster", "--cluster", "u-p6e-gb200x72:4", "--synthetic", "200", "--arrival", "15m",
                            "--compare", "tree", "--report", report});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("topology/block"));
  EXPECT_THAT(r.out, HasSubstr("utilisation (allocated)"));
  EXPECT_THAT(r.out, HasSubstr("Mean wait by job size"));
  std::ifstream in(report);
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_THAT(html.str(), HasSubstr("<svg"));
  EXPECT_THAT(html.str(), HasSubstr("Wait by job size"));
}

// Helios/Acme cluster_log.csv columns read as they are: 4 jobs, 32 GPUs = 4 nodes of 8.
TEST_F(ClusterCli, ReplaysATraceInTheHeliosLayout) {
  const auto r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--trace",
                            source_path("tests/data/orchestration/helios_layout.csv"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& jobs = j["policies"][0]["jobs"];
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[3]["id"], 104);
  EXPECT_EQ(jobs[3]["node_count"], 4);
  EXPECT_EQ(jobs[1]["submit_s"], 30);
  // Job 104 needs all 4 nodes: it waits for 101, which starts within batch_sched_delay (3 s) of
  // its submission and runs 3600 s; 101's node is COMPLETING for 0.2 s, then the main loop starts
  // 104 within batch_sched_delay again.
  EXPECT_GE(jobs[3]["start_s"].get<double>(), 3600);
  EXPECT_LE(jobs[3]["start_s"].get<double>(), 3600 + 3 + 0.2 + 3 + 1e-6);
}

// Training jobs timed on their nodes: on 2 GB200 NVL72 UltraServers (NVLink blocks of 18 nodes),
// a 10-node job holds node1-10; a gpt-oss-120b job with ep 64 (16 nodes) then gets node11-26
// with consecutive placement: its expert all-to-all spans two NVLink domains and crosses EFA, so
// its step is slower than on 16 nodes of one block, which block placement (topology/block) gives it.
TEST_F(ClusterCli, TrainingJobsAreTimedOnTheNodesTheyGet) {
  const auto trace = write("train.csv",
                           "id,submit,nodes,duration,model,tp,pp,ep,gbs,seq,tokens\n"
                           "1,0,10,36000,,,,,,,\n"
                           "2,60,16,,gpt-oss-120b,1,1,64,256,4096,2e9\n");
  auto run = [&](const std::string& placement) {
    const auto r =
        run_fmsim({"cluster", "--cluster", "u-p6e-gb200x72:2", "--trace", trace, "--placement", placement, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["policies"][0]["jobs"][1];
  };
  const auto consecutive = run("consecutive");
  EXPECT_EQ(consecutive["nodes"], "node[11-26]");
  const auto& t = consecutive["training"];
  EXPECT_GT(t["slowdown"].get<double>(), 1.2) << t;
  EXPECT_NEAR(t["step_s"].get<double>(), t["ideal_step_s"].get<double>() * t["slowdown"].get<double>(), 1e-9);
  const auto block = run("block");
  EXPECT_EQ(block["nodes"], "node[19-34]");
  EXPECT_DOUBLE_EQ(block["training"]["slowdown"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(block["training"]["step_s"].get<double>(), t["ideal_step_s"].get<double>());
  // The run time follows: 2e9 tokens in batches of 256 x 4096 = 1908 steps.
  EXPECT_NEAR(block["end_s"].get<double>() - block["start_s"].get<double>(), 1908 * t["ideal_step_s"].get<double>(),
              1e-6);
  const auto text =
      run_fmsim({"cluster", "--cluster", "u-p6e-gb200x72:2", "--trace", trace, "--placement", "consecutive"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Training jobs on the nodes they got"));
  EXPECT_THAT(text.out, HasSubstr("gpt-oss-120b tp1 pp1 ep64 gbs 256"));
  EXPECT_THAT(text.out, HasSubstr("GPU-hours added by slow placements"));
}

// A Capacity Block (nodes that exist only in its window) and a job bound to it by the trace's
// reservation column; bad reservation lines and associations files exit 2 naming where.
TEST_F(ClusterCli, CapacityBlocksReservationsAndAssociations) {
  const auto trace = write("resv.csv",
                           "id,submit,nodes,duration,time_limit,account,user,reservation\n"
                           "1,0,4,600,3600,research,alice,\n"
                           "2,0,2,600,3600,product,bob,cb1\n");
  const auto r =
      run_fmsim({"cluster", "--cluster", "p5en.48xlarge:4", "--trace", trace, "--reservation",
                 "ReservationName=cb1 StartTime=now+1hours Duration=2:00:00 NodeCnt=2 CapacityBlock=YES", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["reservations"].size(), 1u);
  EXPECT_EQ(j["reservations"][0]["nodes"], "cb1-[1-2]");
  const auto& jobs = j["policies"][0]["jobs"];
  EXPECT_EQ(jobs[1]["nodes"], "cb1-[1-2]");
  EXPECT_GE(jobs[1]["start_s"].get<double>(), 3600);
  EXPECT_EQ(jobs[1]["reservation"], "cb1");
  expect_input_error({"cluster", "--cluster", "p5en.48xlarge:4", "--reservation",
                      "ReservationName=x StartTime=later Duration=10 NodeCnt=1"},
                     "StartTime");
  expect_input_error({"cluster", "--cluster", "p5en.48xlarge:4", "--associations",
                      write("assoc.cfg", "Parent - 'root'\nAccount - 'a':Fairshare=many\n")},
                     "assoc.cfg:2");
}

TEST_F(ClusterCli, BadInputExitsTwoNamingWhere) {
  const auto trace = write("bad.csv", "id,submit,nodes,duration\n1,0,2,100\n2,soon,1,100\n");
  auto r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--trace", trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:3"));
  EXPECT_THAT(r.err, HasSubstr("soon"));
  const auto big = write("big.csv", "id,submit,nodes,duration\n1,0,9,100\n");
  r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--trace", big});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("9 nodes"));
  const auto conf = write("slurm.conf", "SchedulerType=sched/backfill\nPriorityWeightAge=lots\n");
  r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--slurm-conf", conf});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("slurm.conf:2"));
  EXPECT_THAT(r.err, HasSubstr("PriorityWeightAge"));
  r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--compare", "sjf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--compare"));
  r = run_fmsim({"cluster", "--cluster", "p5.48xlarge:4", "--trace", trace, "--trace-map", "gpus=GPUS"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("GPUS"));
}

}  // namespace
