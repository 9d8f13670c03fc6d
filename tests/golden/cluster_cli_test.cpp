// Golden tests of `fmsim cluster` and `fmsim topology`: text, JSON, HTML report, traces in the
// public layouts, and bad input that exits 2 naming the file, line or flag. Serving deployments
// sharing the cluster: a deployment alone gives the throughput `fmsim serve` gives at its rate, a
// training job beside one the step time `fmsim train` gives; bad deployments exit 2 naming the
// file, line and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  /// The command exits 2 and its message names each of `words`.
  static void expect_input_error_all(const std::vector<std::string>& args, const std::vector<std::string>& words) {
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    for (const auto& w : words) EXPECT_THAT(r.err, HasSubstr(w));
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

// A deployment alone on its node at a constant 10 req/s (below the 18.7 req/s one replica
// sustains within its SLO) serves all of it: the requests that arrive before its replica is ready
// (its unit's start, then the cold start: R s, under the 60 s queue timeout) wait at the router and
// are served once it is, so 10 x 256 output tokens/s over the day. The queue drains at mu - 10
// (mu the replica's rate), empty at t_e = R mu / (mu - 10); those served in the drain waited from R
// down to 0, within the SLO for the share budget / R of it (budget = the 1 s TTFT bound - p99 TTFT),
// and every arrival after t_e is served at once: within = 10 (86400 - t_e) + mu (t_e - R) min(1,
// budget / R). `fmsim serve` at 10 req/s
// (Poisson, 4,000 requests) measures its steady-state output tokens/s from its own arrivals: their
// realised rate differs from 10 by sampling noise of about 1/sqrt(4000) = 1.6%, so the two agree
// within 3 sigma (5%).
TEST_F(ClusterCli, DeploymentAloneGivesWhatServeGivesAtItsRate) {
  const auto c = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:1", "--days", "1", "--deployment",
                            "name=chat,model=llama3.1-8b,isl=1024,osl=256,rate=10,slo-ttft=1s,slo-tpot=50ms,"
                            "max-replicas=1",
                            "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto doc = nlohmann::json::parse(c.out);
  const auto& fleet = doc["shared_fleet"];
  const auto& d = fleet["deployments"][0];
  EXPECT_THAT(fleet["method"].get<std::string>(), HasSubstr("not request by request"));
  const auto& unit = doc["policies"][0]["jobs"][0];  // the deployment's one replica unit
  const double ready_s = unit["start_s"].get<double>() + d["replica"]["cold_start_s"].get<double>();
  ASSERT_GT(ready_s, 0);
  ASSERT_LT(ready_s, 60);
  const double mu = d["replica"]["rate_rps"].get<double>();
  const double budget = 1.0 - d["replica"]["ttft_p99_s"].get<double>();
  const double t_e = ready_s * mu / (mu - 10);
  const double within = 10 * (86400 - t_e) + mu * (t_e - ready_s) * std::min(1.0, budget / ready_s);
  EXPECT_NEAR(d["slo_attainment"].get<double>(), within / (10 * 86400.0), 1e-9);
  EXPECT_NEAR(d["dropped_requests"].get<double>(), 0, 1e-9);
  EXPECT_NEAR(d["queued_requests"].get<double>(), 10 * t_e, 1e-6);
  EXPECT_NEAR(d["mean_wait_s"].get<double>(), ready_s / 2, 1e-9);
  const double cluster_tps = d["output_tokens_per_s"].get<double>();
  EXPECT_NEAR(cluster_tps, 10 * 256, 1e-6);
  const auto s = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--rate", "10", "--isl",
                            "1024", "--osl", "256", "--num-requests", "4000", "--json"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const double serve_tps =
      nlohmann::json::parse(s.out)["steady_state"]["output_tokens_per_s_per_replica"].get<double>();
  EXPECT_NEAR(cluster_tps / serve_tps, 1.0, 0.05) << cluster_tps << " vs " << serve_tps;
  // The replica's capacity is what plan-serve's rate search finds: above the offered 10 req/s.
  EXPECT_GT(d["replica"]["rate_rps"].get<double>(), 10);
}

// A training job on 2 nodes beside a deployment on a third, reserved node: its step time is the
// one `fmsim train` gives on 2 nodes, its 1,000 steps (2.62e8 tokens in batches of 64 x 4096)
// all done, and no preemption (the serving node is not the training partition's).
TEST_F(ClusterCli, TrainingJobBesideAReservedDeploymentGivesWhatTrainGives) {
  const auto trace = write("train.csv",
                           "id,submit,nodes,model,tp,pp,gbs,seq,tokens\n"
                           "1,0,2,llama3.1-8b,1,1,64,4096,2.62144e8\n");
  const auto c = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:3", "--trace", trace, "--days", "1", "--deployment",
                            "name=chat,rate=5,share=reserved,nodes=1", "--json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto doc = nlohmann::json::parse(c.out);
  const auto& job = doc["policies"][0]["jobs"][0];
  const auto t = run_fmsim(
      {"train", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge:2", "--gbs", "64", "--seq", "4096", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const double step = nlohmann::json::parse(t.out)["step_time_s"].get<double>();
  // Equal to a few nanoseconds (train's engine keeps integer nanoseconds).
  EXPECT_NEAR(job["training"]["step_s"].get<double>(), step, 1e-8);
  EXPECT_NEAR(job["end_s"].get<double>() - job["start_s"].get<double>(), 1000 * step, 1e-5);
  EXPECT_EQ(job["node_count"], 2);
  const auto& use = doc["shared_fleet"]["use"];
  EXPECT_DOUBLE_EQ(use["training_tokens"].get<double>(), 2.62144e8);
  EXPECT_EQ(use["preemptions"], 0);
  EXPECT_EQ(doc["shared_fleet"]["deployments"][0]["share"], "reserved");
  // Serving held its one node from its unit's start to the end of the day (8 GPUs).
  const auto& unit = doc["policies"][0]["jobs"][1];
  EXPECT_NEAR(use["gpu_hours"]["serving"].get<double>(), 8 * (86400 - unit["start_s"].get<double>()) / 3600, 1e-6);
}

// The text output states the steady-state method and the fleet's lines; the HTML report has the
// section; a YAML file and the flag give the same deployment.
TEST_F(ClusterCli, TextHtmlAndYamlCarryTheSharedFleet) {
  const auto yaml = write("fleet.yaml",
                          "deployments:\n"
                          "  - name: chat\n"
                          "    model: llama3.1-8b\n"
                          "    rate: 40\n"
                          "    shape: diurnal\n"
                          "    slo-ttft: 1s\n");
  const auto html = (std::filesystem::path(dir_) / "fleet.html").string();
  const auto r = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:8", "--synthetic", "50", "--days", "2",
                            "--deployments", yaml, "--report", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Serving deployments (steady state, not request by request"));
  EXPECT_THAT(r.out, HasSubstr("GPU-hours by use: serving"));
  EXPECT_THAT(r.out, HasSubstr("Training goodput"));
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(page, HasSubstr("Shared fleet: serving and training"));
  EXPECT_THAT(page, HasSubstr("chat served"));
  const auto flag = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:8", "--synthetic", "50", "--days", "2",
                               "--deployment", "name=chat,model=llama3.1-8b,rate=40,shape=diurnal,slo-ttft=1s"});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  auto fleet_part = [](const std::string& out) {  // up to the wall time, which differs between runs
    const auto from = out.find("Serving deployments");
    return out.substr(from, out.find("\nSimulated in") - from);
  };
  EXPECT_EQ(fleet_part(flag.out), fleet_part(r.out));
}

// A rate CSV steps the offered rate: 0 req/s until 1 h, then 20: 20 x 3600 requests offered over
// 2 h. With no replica before the step (min-replicas 0) the requests from 1 h wait for the unit the
// autoscaler asks for 1 min later to be up and loaded (ready at R = its start + the cold start,
// more than 60 s after the step): those that arrived before R - 60 s give up at the 60 s timeout,
// the last 60 s of arrivals (1,200) are served from R at the unit's capacity mu (replicas x rate),
// the queue empty at t_e = R + 1200 / (mu - 20); with no TTFT bound only the arrivals after t_e
// are within the SLO.
TEST_F(ClusterCli, RateCsvStepsTheOfferedRate) {
  const auto csv = write("rate.csv", "time_s,rate\n0,0\n3600,20\n");
  const auto r = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:2", "--days", "0.0833333333333333", "--deployment",
                            "name=chat,rate-csv=" + csv + ",min-replicas=0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& d = doc["shared_fleet"]["deployments"][0];
  EXPECT_NEAR(d["offered_requests"].get<double>(), 20 * 3600, 1e-3);
  const auto& unit = doc["policies"][0]["jobs"][0];
  EXPECT_DOUBLE_EQ(unit["submit_s"].get<double>(), 3600 + 60);
  const double ready_s = unit["start_s"].get<double>() + d["replica"]["cold_start_s"].get<double>();
  ASSERT_GT(ready_s, 3600 + 60);
  const double mu = d["peak_replicas"].get<double>() * d["replica"]["rate_rps"].get<double>();
  const double t_e = ready_s + 1200 / (mu - 20);
  EXPECT_NEAR(d["dropped_requests"].get<double>(), 20 * (ready_s - 60 - 3600), 1e-6);
  EXPECT_NEAR(d["served_requests"].get<double>(), 20 * 3600 - 20 * (ready_s - 60 - 3600), 1e-6);
  EXPECT_NEAR(d["requests_within_slo"].get<double>(), 20 * (2 * 3600.0 - t_e), 1e-6);
}

// Kueue's scheduler performance-test baseline (validation/kueue/baseline.yaml: 5 cohorts of 6
// ClusterQueues with a nominal quota of 20 CPUs each, 15,000 workloads of 1, 5 and 20 CPUs)
// replays through the CLI on as many nodes as the quotas add up to, 5 x 6 x 20 = 600, and admits
// and completes every workload; the scenario brings its own queues and workloads, so --queues,
// --synthetic and Slurm mode are refused naming the flag.
TEST_F(ClusterCli, ReplaysKueuesPerformanceTestScenario) {
  const std::string scenario = std::string(FMSIM_SOURCE_DIR) + "/validation/kueue/baseline.yaml";
  const auto r =
      run_fmsim({"cluster", "--scheduler", "k8s", "--kueue-scenario", scenario, "--cluster", "p5.48xlarge", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["cluster"]["nodes"].get<int>(), 600);
  const auto& summary = doc["policies"][0]["summary"];
  EXPECT_EQ(summary["jobs"].get<int>(), 15000);
  EXPECT_EQ(summary["completed"].get<int>(), 15000);
  EXPECT_THAT(doc["workload"].get<std::string>(), HasSubstr("Kueue's scheduler performance test"));
  const auto text =
      run_fmsim({"cluster", "--scheduler", "k8s", "--kueue-scenario", scenario, "--cluster", "p5.48xlarge"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("30 ClusterQueues in 5 cohorts"));
  expect_input_error_all({"cluster", "--kueue-scenario", scenario}, {"--kueue-scenario", "k8s"});
  expect_input_error_all({"cluster", "--scheduler", "k8s", "--kueue-scenario", scenario, "--queues", "a=10"},
                         {"--queues", "--kueue-scenario"});
  expect_input_error_all({"cluster", "--scheduler", "k8s", "--kueue-scenario", scenario, "--synthetic", "10"},
                         {"--kueue-scenario", "--synthetic"});
}

// A deployment asks for no more replicas than the nodes it may use can hold (whole-node units):
// 2 p5en nodes hold 2 x 8 replicas of Llama 3.1 8B at tp 1, so a peak of 10^6 req/s (some 76,000
// replicas at 18.7 req/s and 70% target) is capped at 16, and min-replicas 17 is refused.
TEST_F(ClusterCli, DeploymentReplicasAreBoundedByTheNodes) {
  const auto r = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:2", "--days", "0.1", "--deployment",
                            "name=big,model=llama3.1-8b,rate=1000000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& d = doc["shared_fleet"]["deployments"][0];
  EXPECT_EQ(d["autoscaling"]["max_replicas"].get<int>(), 16);
  EXPECT_LE(d["peak_replicas"].get<double>(), 16);
  expect_input_error_all({"cluster", "--cluster", "p5en.48xlarge:2", "--days", "0.1", "--deployment",
                          "name=big,model=llama3.1-8b,rate=10,min-replicas=17"},
                         {"min-replicas", "16"});
}

TEST_F(ClusterCli, BadDeploymentsExitTwoNamingFileLineAndField) {
  const auto unknown = write("unknown.yaml", "deployments:\n  - name: a\n    rate: 5\n    replicas: 3\n");
  expect_input_error_all({"cluster", "--days", "1", "--deployments", unknown},
                         {"unknown.yaml:4", "replicas", "max-replicas"});
  const auto share = write("share.yaml", "- name: a\n  rate: 5\n  share: spot\n");
  expect_input_error_all({"cluster", "--days", "1", "--deployments", share},
                         {"share.yaml:3", "share", "preempt", "reserved"});
  const auto rate = write("rate.yaml", "- name: a\n  rate: lots\n");
  expect_input_error_all({"cluster", "--days", "1", "--deployments", rate}, {"rate.yaml:2", "rate", "lots"});
  const auto model = write("model.yaml", "- name: a\n  rate: 5\n  model: gpt-9\n");
  expect_input_error_all({"cluster", "--days", "1", "--deployments", model}, {"model.yaml:1", "gpt-9"});
  expect_input_error_all({"cluster", "--deployment", "rate=5"}, {"--days"});
  expect_input_error_all({"cluster", "--days", "1", "--deployment", "model=llama3.1-8b"}, {"--deployment", "rate"});
  expect_input_error_all({"cluster", "--days", "1", "--deployment", "rate=5,scale-up-delay=10m,scale-down-delay=1m"},
                         {"scale-down-delay"});
  expect_input_error_all(
      {"cluster", "--cluster", "p5en.48xlarge:4", "--days", "1", "--deployment", "rate=5,share=reserved,nodes=9"},
      {"--deployment", "9 reserved nodes"});
  expect_input_error_all({"cluster", "--days", "1", "--scheduler", "k8s", "--deployment", "rate=5"},
                         {"--deployment", "slurm"});
  const auto csv = write("bad_rate.csv", "time_s,rate\n0,5\n60,-1\n");
  expect_input_error_all({"cluster", "--days", "1", "--deployment", "rate-csv=" + csv}, {"bad_rate.csv:3", "rate"});
}

}  // namespace
