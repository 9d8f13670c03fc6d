// Golden tests of `fmsim sweep` on this machine: grid expansion, chunks run by worker processes,
// one CSV and JSON Lines file equal to the single-command outputs, errors recorded per point,
// resumption that redoes only missing chunks, and grid mistakes refused before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.hpp"

namespace fmsim::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dir_);
  }
  fs::path write_grid(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

// 1 model x 5 tensor-parallel sizes x 2 sequence lengths = 10 points; tp 3 does not divide the
// model's 32 heads, so points 4 and 5 are recorded with the layout error (status 2).
const char* kGrid =
    "kind: Sweep\n"
    "command: train\n"
    "fixed: {model: llama3.1-8b, cluster: \"p5.48xlarge:2\", gbs: 64}\n"
    "grid:\n"
    "  tp: [1, 2, 3, 4, 8]\n"
    "  seq: [2048, 4096]\n"
    "columns: [step_time_s, mfu, layout.dp]\n";

TEST_F(Sweep, LocalRunGathersOneRowPerPointEqualToTheCommand) {
  const auto grid = write_grid("grid.yaml", kGrid);
  const auto out = dir_ / "out";
  const auto r =
      run_fmsim({"sweep", grid.string(), "--out", out.string(), "--chunk-size", "3", "--jobs", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["points"], 10);
  EXPECT_EQ(summary["chunks"], 4);  // ceil(10 / 3)
  EXPECT_EQ(summary["errors"], 2);
  EXPECT_THAT(r.err, HasSubstr("sweep: 4/4 chunks, 10/10 points"));

  const auto csv = lines(slurp(out / "results.csv"));
  ASSERT_EQ(csv.size(), 11u);
  EXPECT_EQ(csv[0], "point,tp,seq,status,step_time_s,mfu,layout.dp,error");
  const auto jsonl = lines(slurp(out / "results.jsonl"));
  ASSERT_EQ(jsonl.size(), 10u);
  // Point 7 = (tp index 3, seq index 1) = tp 4, seq 4096: the same numbers as the command itself.
  const auto rec = nlohmann::json::parse(jsonl[7]);
  EXPECT_EQ(rec["point"], 7);
  EXPECT_EQ(rec["params"]["tp"], "4");
  EXPECT_EQ(rec["params"]["seq"], "4096");
  const auto single = run_fmsim({"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--gbs", "64", "--tp",
                                 "4", "--seq", "4096", "--json"});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const auto want = nlohmann::json::parse(single.out);
  EXPECT_EQ(rec["values"]["step_time_s"], want["step_time_s"]);
  EXPECT_EQ(rec["values"]["layout.dp"], 4);  // 16 GPUs / tp 4
  EXPECT_EQ(csv[8].substr(0, 11), "7,4,4096,0,");
  // tp 3: the error the command prints, in the record and the CSV.
  const auto bad = nlohmann::json::parse(jsonl[4]);
  EXPECT_EQ(bad["status"], 2);
  const auto single_bad = run_fmsim(
      {"train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--gbs", "64", "--tp", "3", "--seq", "2048"});
  EXPECT_THAT(single_bad.err, HasSubstr(bad["error"].get<std::string>()));
  EXPECT_THAT(csv[5], HasSubstr(",2,,,,"));
}

TEST_F(Sweep, ResumesOnlyMissingChunksWithTheSameBytes) {
  const auto grid = write_grid("grid.yaml", kGrid);
  const auto out = dir_ / "out";
  const std::vector<std::string> args{"sweep", grid.string(), "--out", out.string(), "--chunk-size", "3", "--json"};
  ASSERT_EQ(run_fmsim(args).exit_code, 0);
  const std::string csv = slurp(out / "results.csv");
  const std::string jsonl = slurp(out / "results.jsonl");
  fs::remove(out / "chunks" / "000002.jsonl");
  fs::remove(out / "results.csv");
  const auto again = run_fmsim(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["chunks_reused"], 3);
  EXPECT_EQ(slurp(out / "results.csv"), csv);
  EXPECT_EQ(slurp(out / "results.jsonl"), jsonl);
  // A different grid cannot write into the same folder.
  const auto other = write_grid("other.yaml", std::string(kGrid) + "chunk: 5\n");
  const auto clash = run_fmsim({"sweep", other.string(), "--out", out.string()});
  EXPECT_EQ(clash.exit_code, 2);
  EXPECT_THAT(clash.err, HasSubstr("holds the results of a different sweep"));
}

TEST_F(Sweep, ColumnsIndexIntoLists) {
  // collective prints its sizes as a list of rows; rows.0.bytes is the first row's size (1 MiB).
  const auto grid = write_grid("coll.yaml",
                               "kind: Sweep\ncommand: collective\n"
                               "fixed: {cluster: \"p5.48xlarge:2\", min-bytes: 1M, max-bytes: 1M}\n"
                               "grid:\n  op: [all_reduce, all_gather]\n"
                               "columns: [rows.0.bytes, rows.1.bytes, rows.0.algorithm]\n");
  const auto r = run_fmsim({"sweep", grid.string(), "--out", (dir_ / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto csv = lines(slurp(dir_ / "out" / "results.csv"));
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], "point,op,status,rows.0.bytes,rows.1.bytes,rows.0.algorithm,error");
  EXPECT_EQ(csv[1].substr(0, 24), "0,all_reduce,0,1048576,,");  // one row only: rows.1 is empty
}

TEST_F(Sweep, DryRunCountsAMillionPoints) {
  // 10 x 10 x 10 x 10 x 10 x 10 = 10^6 points, in 1000 chunks of 1000 (Slurm's default
  // MaxArraySize is 1001 tasks).
  std::string axis = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  const auto grid = write_grid("big.yaml",
                               "kind: Sweep\ncommand: collective\nfixed: {cluster: \"p5.48xlarge:2\"}\n"
                               "grid:\n  min-bytes: " +
                                   axis + "\n  max-bytes: " + axis +
                                   "\n  step-factor: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n  group-size: " + axis +
                                   "\n  group-first: " + axis + "\n  channels-unused: " + axis + "\n");
  const auto r = run_fmsim({"sweep", grid.string(), "--dry-run", "--json"});
  EXPECT_EQ(r.exit_code, 2);  // collective has no --channels-unused: refused before anything runs
  EXPECT_THAT(r.err, HasSubstr("grid.channels-unused: 'fmsim collective' has no flag --channels-unused"));
  const auto ok = write_grid("big2.yaml", slurp(grid).replace(slurp(grid).find("channels-unused"), 15, "group-stride"));
  const auto d = run_fmsim({"sweep", ok.string(), "--dry-run", "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto s = nlohmann::json::parse(d.out);
  EXPECT_EQ(s["points"], 1000000);
  EXPECT_EQ(s["chunks"], 1000);
  EXPECT_EQ(s["chunk"], 1000);
  EXPECT_THAT(s["first_point"].get<std::string>(),
              HasSubstr("collective --cluster p5.48xlarge:2 --min-bytes 1 --max-bytes 1"));
  EXPECT_FALSE(fs::exists(dir_ / "big2.sweep"));
}

struct BadGrid {
  std::string name;
  std::string text;
  std::string message;
};

class SweepBadGrid : public Sweep, public ::testing::WithParamInterface<BadGrid> {};

TEST_P(SweepBadGrid, ExitsTwoNamingFileLineAndField) {
  const auto grid = write_grid("bad.yaml", GetParam().text);
  const auto r = run_fmsim({"sweep", grid.string(), "--out", (dir_ / "out").string()});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "nothing is written for a bad grid";
}

INSTANTIATE_TEST_SUITE_P(
    Grids, SweepBadGrid,
    ::testing::Values(
        BadGrid{"no_grid", "kind: Sweep\ncommand: train\n", "bad.yaml:1: grid: missing required field"},
        BadGrid{"unknown_key", "kind: Sweep\ncommand: train\ngrids: {tp: [1]}\n", "bad.yaml:3: grids"},
        BadGrid{"empty_list", "kind: Sweep\ncommand: train\ngrid:\n  tp: []\n", "bad.yaml:4: grid.tp: an empty list"},
        BadGrid{"unknown_flag", "kind: Sweep\ncommand: train\ngrid:\n  tpp: [1, 2]\n",
                "grid.tpp: 'fmsim train' has no flag --tpp"},
        BadGrid{"not_a_command", "kind: Sweep\ncommand: trian\ngrid:\n  tp: [1]\n",
                "'trian' is not an fmsim command with --json output"},
        BadGrid{"fixed_and_swept", "kind: Sweep\ncommand: train\nfixed: {tp: 2}\ngrid:\n  tp: [1]\n",
                "bad.yaml:5: grid.tp: 'tp' is both fixed and swept"},
        BadGrid{"nested", "kind: Sweep\ncommand: train\ngrid:\n  tp: [[1, 2]]\n", "grid.tp[0]: expected a value"},
        BadGrid{"recursive", "kind: Sweep\ncommand: sweep\ngrid:\n  tp: [1]\n", "a sweep cannot run sweeps"},
        BadGrid{"malformed", "kind: Sweep\ncommand: [train\n", "bad.yaml:3: malformed YAML"}),
    [](const auto& info) { return info.param.name; });

/// The process ids whose parent is `parent` (from /proc), not counting zombies.
std::vector<pid_t> live_children(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// Issue 43: killing `sweep` (SIGKILL: no handler runs) left its workers computing. Each local
// worker is tied to the sweep's life (PR_SET_PDEATHSIG) and stops with it.
TEST_F(Sweep, KilledSweepStopsItsWorkers) {
  const auto grid = write_grid("slow.yaml",
                               "kind: Sweep\n"
                               "command: serve\n"
                               "fixed: {num-requests: 300000}\n"
                               "grid:\n"
                               "  seed: [1, 2]\n");
  const std::string binary = fmsim::testing::fmsim_binary();
  const std::string out = (dir_ / "out").string();
  const pid_t sweep = ::fork();
  ASSERT_GE(sweep, 0);
  if (sweep == 0) {
    ::execl(binary.c_str(), binary.c_str(), "sweep", grid.c_str(), "--out", out.c_str(), "--chunk-size", "1", "--jobs",
            "2", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::vector<pid_t> workers;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (workers.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    workers = live_children(sweep);
  }
  ASSERT_EQ(workers.size(), 2u) << "the sweep did not start two workers";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past their start-up
  ::kill(sweep, SIGKILL);
  int status = 0;
  ::waitpid(sweep, &status, 0);
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool any_alive = true;
  while (any_alive && std::chrono::steady_clock::now() < gone_by) {
    any_alive = std::any_of(workers.begin(), workers.end(), alive);
    if (any_alive) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(any_alive) << "a worker outlived the killed sweep";
  for (const pid_t w : workers) ::kill(w, SIGKILL);  // in case the test failed
}

}  // namespace
}  // namespace fmsim::testing
