// Same input, same output: every command run twice with the same arguments prints the same bytes
// and writes the same files (simulated time is integer nanoseconds, ties broken by sequence, Monte
// Carlo seeds from the input, the planner's threads merged in a fixed order).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::slurp;
using fmsim::testing::source_path;

// "" when equal, else where the two texts first differ with a little context (the outputs are
// long; the whole of both would bury the difference).
std::string first_difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i < 80 ? 0 : i - 80;
  return "first difference at byte " + std::to_string(i) + ":\n  " + a.substr(from, 160) + "\nvs\n  " +
         b.substr(from, 160);
}

// The two runs write into different folders, which the output names ("Report written to
// .../a/plan.html"); and the wall-clock time a search took ("in 0.74 s", "predicted in 19.3 ms",
// "seconds": 0.48, "elapsed_s": 1.5, "wall_s", "search_ms", a file written "(0.02 s)") is a
// measurement of this machine, not a prediction. Both are masked; every
// other byte must match.
std::string normalise(std::string s, const std::string& dir) {
  for (auto p = s.find(dir); p != std::string::npos; p = s.find(dir, p)) s.replace(p, dir.size(), "DIR");
  s = std::regex_replace(s, std::regex(R"re("(seconds|elapsed_s|wall_s|search_ms)": [0-9.e+-]+)re"), "\"$1\": T");
  s = std::regex_replace(s, std::regex(R"(MiB \([0-9.]+ s\))"), "MiB (T s)");         // time to write the metrics
  s = std::regex_replace(s, std::regex(R"(Simulated in [^\n]*)"), "Simulated in T");  // cluster: per policy
  return std::regex_replace(s, std::regex(R"( in [0-9.]+ (s|ms)\b)"), " in T $1");
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> files;  ///< output files or folders (under the test's temporary folder) to compare too
};

// One invocation per command (and its --json form where the text and JSON paths differ).
// The first `lines` lines of a repository file, written into `to` (the validation commands on a
// few rows: the whole tables take seconds, and determinism does not need every row).
std::string head_of(const std::string& relative, int lines, const std::filesystem::path& to) {
  std::istringstream in(slurp(source_path(relative)));
  std::ofstream out(to, std::ios::binary);
  int n = 0;
  for (std::string line; n < lines && std::getline(in, line); ++n) out << line << "\n";
  return to.string();
}

std::vector<Case> cases(const std::string& dir, const std::filesystem::path& inputs) {
  const std::string training_csv = source_path("validation/training.csv");
  const std::string training_head = head_of("validation/training.csv", 12, inputs / "training.csv");
  const std::string inference_head = head_of("validation/inference.csv", 6, inputs / "inference.csv");
  return {
      {"catalog", {"catalog", "systems"}, {}},
      {"catalog_json", {"catalog", "cluster", "u-p6e-gb200x72:4", "--json"}, {}},
      {"collective", {"collective", "--cluster", "p5.48xlarge:4", "--op", "all_to_all"}, {}},
      {"collective_json", {"collective", "--cluster", "p5en.48xlarge:2", "--op", "all_reduce", "--json"}, {}},
      {"train",
       {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:4", "--tp", "8", "--pp", "2", "--gbs", "64",
        "--trace", dir + "/train.json", "--metrics", dir + "/train.prom"},
       {"train.json", "train.prom"}},
      {"train_json", {"train", "--model", "qwen3-30b-a3b", "--cluster", "dgx-h100:2", "--ep", "16", "--json"}, {}},
      {"plan",
       {"plan", "--model", "llama3.1-8b", "--gpus", "64", "--systems", "p5.48xlarge,p5en.48xlarge", "--threads", "2",
        "--report", dir + "/plan.html"},
       {"plan.html"}},
      {"plan_json", {"plan", "--model", "llama3.1-8b", "--gpus", "32", "--threads", "2", "--json"}, {}},
      {"checkpoint",
       {"checkpoint", "--params", "70B", "--gpus", "512", "--storage", "fsx-persistent2-1000", "--capacity", "120TiB",
        "--json"},
       {}},
      {"goodput", {"goodput", "--gpus", "16384", "--save-time", "30s", "--replications", "200", "--json"}, {}},
      {"run", {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--replications", "200"}, {}},
      {"models", {"models", "--json"}, {}},
      {"models_show", {"models", "show", "DeepSeek-V3", "--seq-len", "4096"}, {}},
      {"validate_collectives", {"validate", "collectives", "--csv", source_path("validation/collectives.csv")}, {}},
      {"validate_training", {"validate", "training", "--csv", training_csv, "--json"}, {}},
      {"calibrate",
       {"calibrate", "training", "--csv", training_csv, "--rounds", "1", "--write", dir + "/fit.yaml"},
       {"fit.yaml"}},
      {"sweep",
       {"sweep", source_path("examples/sweep_train.yaml"), "--out", dir + "/sweep", "--jobs", "2", "--json"},
       {"sweep/results.csv", "sweep/results.jsonl"}},
      {"validate_planner", {"validate", "planner", "--csv", training_head, "--threads", "2", "--json"}, {}},
      {"validate_memory", {"validate", "memory", "--json"}, {}},
      {"validate_rl", {"validate", "rl", "--json"}, {}},
      {"validate_inference", {"validate", "inference", "--csv", inference_head, "--json"}, {}},
      {"topology_slurm",
       {"topology", "slurm", "--cluster", "u-p6e-gb200x72:4", "-o", dir + "/topology.conf"},
       {"topology.conf"}},
      {"topology_k8s", {"topology", "k8s", "--cluster", "p5.48xlarge:20", "--json"}, {}},
      // Seeded Monte Carlo: a synthetic workload with node failures, two policies side by side.
      {"cluster",
       {"cluster", "--cluster", "p5en.48xlarge:16", "--synthetic", "150", "--seed", "7", "--node-failure-rate", "5",
        "--compare", "fifo", "--report", dir + "/cluster.html", "--jobs-csv", dir + "/jobs.csv"},
       {"cluster.html", "jobs.csv"}},
      {"cluster_json", {"cluster", "--cluster", "p5.48xlarge:8", "--synthetic", "100", "--seed", "3", "--json"}, {}},
      {"rl", {"rl", "--job", source_path("examples/grpo_qwen3_32b_rl.yaml"), "--trace", dir + "/rl.json"}, {"rl.json"}},
      {"rl_plan_json", {"rl", "--policy", "qwen3-8b", "--cluster", "p5.48xlarge:4", "--plan", "--json"}, {}},
      {"serve",
       {"serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--tp", "1", "--isl", "512", "--osl", "128",
        "--num-requests", "64", "--trace", dir + "/serve.json", "--metrics", dir + "/serve.prom"},
       {"serve.json", "serve.prom"}},
      {"serve_json",
       {"serve", "--model", "qwen3-30b-a3b", "--cluster", "p5en.48xlarge", "--tp", "2", "--rate", "20",
        "--num-requests", "100", "--json"},
       {}},
      {"plan_serve",
       {"plan-serve",
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
        "--json"},
       {}},
      // A seeded run with failures writing its metric series, then the offline report of them.
      {"run_metrics",
       {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--duration", "1d", "--metrics-out",
        dir + "/metrics"},
       {"metrics"}},
      {"metrics_report", {"metrics", "report", dir + "/metrics", "--html", dir + "/metrics.html"}, {"metrics.html"}},
  };
}

TEST(Determinism, EveryCommandPrintsAndWritesTheSameBytesTwice) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "fmsim_determinism";
  for (const std::string run : {"a", "b", "inputs"}) std::filesystem::create_directories(root / run);
  const auto first = cases((root / "a").string(), root / "inputs");
  const auto second = cases((root / "b").string(), root / "inputs");
  for (std::size_t i = 0; i < first.size(); ++i) {
    SCOPED_TRACE(first[i].name);
    const auto r1 = run_fmsim(first[i].args);
    const auto r2 = run_fmsim(second[i].args);
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    ASSERT_FALSE(r1.out.empty() && first[i].files.empty());
    EXPECT_EQ(first_difference(normalise(r1.out, (root / "a").string()), normalise(r2.out, (root / "b").string())), "");
    EXPECT_EQ(first_difference(normalise(r1.err, (root / "a").string()), normalise(r2.err, (root / "b").string())), "");
    std::vector<std::string> files;
    for (const auto& file : first[i].files) {
      if (!std::filesystem::is_directory(root / "a" / file)) {
        files.push_back(file);
        continue;
      }
      for (const auto& e : std::filesystem::recursive_directory_iterator(root / "a" / file)) {
        if (e.is_regular_file()) files.push_back(std::filesystem::relative(e.path(), root / "a").string());
      }
      EXPECT_FALSE(files.empty()) << file << " is empty";
    }
    for (const auto& file : files) {
      const std::string a = slurp(root / "a" / file);
      EXPECT_FALSE(a.empty()) << file;
      EXPECT_EQ(first_difference(normalise(a, (root / "a").string()),
                                 normalise(slurp(root / "b" / file), (root / "b").string())),
                "")
          << file;
    }
  }
}

}  // namespace
