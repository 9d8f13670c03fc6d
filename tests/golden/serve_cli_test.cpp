// fmsim serve and fmsim validate inference from the command line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

TEST(ServeCli, PrintsThroughputLatencyAndSlo) {
  const auto r = run_fmsim(
      {"serve", "--model",        "llama3.1-70b", "--precision", "fp8",  "--cluster",  "p5en.48xlarge", "--tp",
       "2",     "--engine",       "trtllm",       "--isl",       "1024", "--osl",      "256",           "--rate",
       "4",     "--num-requests", "200",          "--slo-ttft",  "2s",   "--slo-tpot", "50ms"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("output tokens/s"));
  EXPECT_THAT(r.out, HasSubstr("TTFT"));
  EXPECT_THAT(r.out, HasSubstr("TPOT"));
  EXPECT_THAT(r.out, HasSubstr("SLO"));
}

TEST(ServeCli, JsonIsDeterministicAndConsistent) {
  const std::vector<std::string> args{
      "serve", "--model", "llama3.1-8b",   "--cluster", "p5.48xlarge",    "--isl", "512",
      "--osl", "128",     "--concurrency", "16",        "--num-requests", "64",    "--json"};
  const auto a = run_fmsim(args), b = run_fmsim(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["completed_requests"].get<int>(), 64);
  // Per-GPU throughput = replica throughput / GPUs of the replica (tp 1).
  EXPECT_DOUBLE_EQ(j["throughput"]["output_tokens_per_s_per_gpu"].get<double>(),
                   j["throughput"]["output_tokens_per_s_per_replica"].get<double>());
  // Output tokens/s = 64 x 128 tokens over the run's duration.
  EXPECT_NEAR(j["throughput"]["output_tokens_per_s_per_replica"].get<double>(),
              64.0 * 128 / j["duration_s"].get<double>(), 1e-6);
}

TEST(ServeCli, BadInputIsExitTwoNamingTheFlag) {
  auto r = run_fmsim({"serve", "--tp", "3", "--model", "llama3.1-70b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--tp"));
  r = run_fmsim({"serve", "--engine", "vlm"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("vllm"));
  r = run_fmsim({"serve", "--slo-ttft", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--slo-ttft"));
}

TEST(ServeCli, FleetDisaggregationAndColdStart) {
  // 2 replicas behind a join-the-shortest-queue router: the fleet's GPUs and its whole output.
  auto r =
      run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge", "--isl", "512", "--osl", "64", "--rate",
                 "8", "--num-requests", "80", "--replicas", "2", "--router", "least-outstanding", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["topology"]["mode"], "fleet");
  EXPECT_EQ(j["topology"]["router"], "least-outstanding");
  EXPECT_EQ(j["completed_requests"].get<int>(), 80);
  EXPECT_NEAR(j["throughput"]["output_tokens_per_s_fleet"].get<double>(), 80.0 * 64 / j["duration_s"].get<double>(),
              1e-6);
  // 1 prefill + 2 decode instances of tp 1 on one 8-GPU node: the KV moves over NVLink.
  r = run_fmsim({"serve", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge", "--isl", "512", "--osl", "64", "--rate",
                 "8", "--num-requests", "80", "--disagg", "1:2", "--cold-start", "instance-nvme", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["topology"]["mode"], "disaggregated");
  EXPECT_EQ(j["topology"]["kv_link"], "NVLink");
  EXPECT_EQ(j["completed_requests"].get<int>(), 80);
  // Cold start: the BF16 weights (~16 GB) from local NVMe take seconds, not zero.
  EXPECT_NEAR(j["cold_start"]["weights_bytes"].get<double>(), 16.06e9, 0.1e9);
  EXPECT_GT(j["cold_start"]["load_s"].get<double>(), 1.0);
  // Bad values name their flag.
  for (const auto& [flag, value] :
       {std::pair{"--disagg", "1-2"}, std::pair{"--router", "random"}, std::pair{"--kv-transfer", "page"},
        std::pair{"--cold-start", "floppy"}, std::pair{"--kv-offload", "grace"}, std::pair{"--kv-offload", "tape"}}) {
    r = run_fmsim({"serve", "--disagg", "1:1", flag, value});
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_THAT(r.err, HasSubstr(flag)) << r.err;
  }
}

TEST(ServeCli, DoesNotFitIsAVerdictNotACrash) {
  // Llama 3.1 405B in BF16 (~810 GB) on one H100 (80 GB).
  const auto r = run_fmsim({"serve", "--model", "llama3.1-405b", "--cluster", "p5.48xlarge", "--tp", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("DOES NOT FIT"));
}

TEST(PlanServeCli, RanksPlansAndPrintsTheParetoFront) {
  const auto r = run_fmsim({"plan-serve",
                            "--model",
                            "llama3.1-8b",
                            "--precision",
                            "fp8",
                            "--families",
                            "p5.48xlarge,p5en.48xlarge",
                            "--isl",
                            "512",
                            "--osl",
                            "128",
                            "--rate",
                            "50",
                            "--slo-ttft",
                            "1s",
                            "--slo-tpot",
                            "40ms",
                            "--probe-requests",
                            "60",
                            "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["plans"].empty());
  const auto& best = j["plans"][0];
  EXPECT_TRUE(best["feasible"].get<bool>());
  // Enough replicas for the target: replicas x max rate >= 50 requests/s (aggregated plans).
  for (const auto& p : j["plans"]) {
    if (p["feasible"].get<bool>() && p["mode"] == "aggregated") {
      EXPECT_GE(p["replicas"].get<int>() * p["max_rate_per_replica"].get<double>(), 50.0 - 1e-6);
    }
  }
  EXPECT_FALSE(j["pareto_front"].empty());
}

TEST(PlanServeCli, UnknownFamilyIsExitTwo) {
  const auto r = run_fmsim({"plan-serve", "--families", "p5.48xlarg"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("p5.48xlarge"));
}

TEST(ServeCli, RequestPathAndClientStart) {
  // One client at a time: served over HTTP, every TTFT carries the engine's request_overhead
  // (vLLM's 9 ms) and its prefill step the per-sequence streaming cost of its one sequence
  // (19.9 us; data/calibration/serving.yaml); in the engine's process neither.
  auto ttft = [](int clients, const std::vector<std::string>& extra) {
    std::vector<std::string> args{
        "serve", "--concurrency", std::to_string(clients), "--num-requests", std::to_string(4 * clients), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_fmsim(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out)["latency_s"]["ttft"]["mean"].get<double>() : 0.0;
  };
  EXPECT_NEAR(ttft(1, {"--request-path", "server"}) - ttft(1, {"--request-path", "in-process"}), 0.009 + 19.9e-6, 1e-7);
  // Sixteen clients started together wait for each other's prefills; spread, they do not.
  EXPECT_GT(ttft(16, {}), ttft(16, {"--client-start", "spread"}));
  const auto bad = run_fmsim({"serve", "--request-path", "http2"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--request-path: unknown request path 'http2'"));
}

TEST(ServeCli, JobFileKeysApplyAndFlagsWin) {
  // examples/serve_job.yaml (named by `serve --help`): its 64 requests of 16 closed-loop clients
  // are what runs; --num-requests on the command line overrides the key.
  const auto job = fmsim::testing::source_path("examples/serve_job.yaml");
  const auto a = run_fmsim({"serve", "--job", job, "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["completed_requests"].get<int>(), 64);
  EXPECT_EQ(j["model"].get<std::string>(), "llama3.1-70b");
  const auto b = run_fmsim({"serve", "--job", job, "--num-requests", "32", "--json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(nlohmann::json::parse(b.out)["completed_requests"].get<int>(), 32);
}
