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
using fmsim::testing::source_path;

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
// .../a/plan.html"); and the wall-clock time a search took ("in 0.74 s", "seconds": 0.48,
// "elapsed_s": 1.5) is a measurement of this machine, not a prediction. Both are masked; every
// other byte must match.
std::string normalise(std::string s, const std::string& dir) {
  for (auto p = s.find(dir); p != std::string::npos; p = s.find(dir, p)) s.replace(p, dir.size(), "DIR");
  s = std::regex_replace(s, std::regex(R"re("(seconds|elapsed_s)": [0-9.e+-]+)re"), "\"$1\": T");
  return std::regex_replace(s, std::regex(R"( in [0-9.]+ s\b)"), " in T s");
}

struct Case {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> files;  ///< output files (under the test's temporary folder) to compare too
};

// One invocation per command (and its --json form where the text and JSON paths differ).
std::vector<Case> cases(const std::string& dir) {
  const std::string training_csv = source_path("validation/training.csv");
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
      {"checkpoint", {"checkpoint", "--params", "70B", "--gpus", "512", "--storage", "fsx-persistent2-1000",
                      "--capacity", "120TiB", "--json"}, {}},
      {"goodput", {"goodput", "--gpus", "16384", "--save-time", "30s", "--replications", "200", "--json"}, {}},
      {"run", {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--replications", "200"}, {}},
      {"models", {"models", "--json"}, {}},
      {"models_show", {"models", "show", "DeepSeek-V3", "--seq-len", "4096"}, {}},
      {"validate_collectives", {"validate", "collectives", "--csv", source_path("validation/collectives.csv")}, {}},
      {"validate_training", {"validate", "training", "--csv", training_csv, "--json"}, {}},
      {"calibrate", {"calibrate", "training", "--csv", training_csv, "--rounds", "1", "--write", dir + "/fit.yaml"},
       {"fit.yaml"}},
  };
}

TEST(Determinism, EveryCommandPrintsAndWritesTheSameBytesTwice) {
  const std::filesystem::path root = std::filesystem::path(::testing::TempDir()) / "fmsim_determinism";
  for (const std::string run : {"a", "b"}) std::filesystem::create_directories(root / run);
  const auto first = cases((root / "a").string());
  const auto second = cases((root / "b").string());
  for (std::size_t i = 0; i < first.size(); ++i) {
    SCOPED_TRACE(first[i].name);
    const auto r1 = run_fmsim(first[i].args);
    const auto r2 = run_fmsim(second[i].args);
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    ASSERT_FALSE(r1.out.empty());
    EXPECT_EQ(first_difference(normalise(r1.out, (root / "a").string()), normalise(r2.out, (root / "b").string())), "");
    EXPECT_EQ(first_difference(r1.err, r2.err), "");
    for (const auto& file : first[i].files) {
      const std::string a = slurp(root / "a" / file);
      EXPECT_FALSE(a.empty()) << file;
      EXPECT_EQ(first_difference(normalise(a, (root / "a").string()), normalise(slurp(root / "b" / file), (root / "b").string())), "")
          << file;
    }
  }
}

}  // namespace
