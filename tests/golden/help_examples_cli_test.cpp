// Every example in every `fmsim ... --help` runs (exit status 0). The test walks the commands from
// `fmsim --help` through each "Subcommands:" list, takes each help text's `fmsim ...` lines (with
// their `\` continuation lines; a trailing "# ..." or "(...)" remark and a "> FILE" redirection
// cut off), and runs each distinct one in a scratch folder that links the repository's examples/,
// tests/, data/ and validation/. Where an example names a file the user brings (slurm.conf, jobs.csv,
// cluster_log.csv, assoc.cfg, training_jobs.csv, my_serving.yaml, path/to/config.json), the test
// puts a small one of that name there first.
//
// Not run, with the reason (the list is checked: each entry must still name an example):
//   needs a real Slurm controller: `sweep ... --slurm` without --dry-run's stand-ins;
//   a server that runs until stopped: `metrics serve`;
//   needs a Prometheus holding a real run: `compare --prometheus`;
//   slower than a few seconds on two cores (each checked by its own command's tests):
//   `validate planner` and `plan --against-csv` (15-17 s), `validate inference --csv
//   validation/inference_aic.csv` and `calibrate serving` (over 20 s), the 2048-node 30-day `run`
//   (16 s), and the two `plan-serve` examples (4-7 s).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;
using fmsim::testing::RunOptions;
using fmsim::testing::source_path;

// Examples not run (see the file comment), by a part of their command line.
const std::vector<std::string>& skipped() {
  static const std::vector<std::string> kSkipped{"fmsim sweep examples/sweep_train.yaml --slurm",
                                                 "fmsim metrics serve",
                                                 "fmsim compare --prometheus",
                                                 "fmsim validate planner",
                                                 "fmsim plan --against-csv",
                                                 "fmsim validate inference --csv validation/inference_aic.csv",
                                                 "fmsim calibrate serving --csv validation/inference_aic.csv",
                                                 "fmsim run --model llama3.1-70b --cluster p5.48xlarge:2048",
                                                 "fmsim plan-serve --model"};
  return kSkipped;
}

// The subcommands a help text lists under "Subcommands:".
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  bool listing = false;
  for (std::string l; std::getline(in, l);) {
    if (l == "Subcommands:") {
      listing = true;
    } else if (listing && l.starts_with("  ") && l.size() > 2 && l[2] != ' ') {
      out.push_back(l.substr(2, l.find(' ', 2) - 2));
    } else if (listing) {
      listing = false;
    }
  }
  return out;
}

// The `fmsim ...` lines of a help text, continuation lines joined, remarks and redirections cut.
std::vector<std::string> examples_in(const std::string& help) {
  std::vector<std::string> lines;
  std::istringstream in(help);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t at = lines[i].find_first_not_of(' ');
    if (at == std::string::npos || at == 0 || !lines[i].substr(at).starts_with("fmsim ")) continue;
    std::string command = lines[i].substr(at);
    while (command.ends_with("\\") && i + 1 < lines.size()) {
      command.pop_back();
      const std::string& next = lines[++i];
      command += " " + next.substr(std::min(next.size(), next.find_first_not_of(' ')));
    }
    command = std::regex_replace(command, std::regex(R"(\s+#.*$)"), "");
    command = std::regex_replace(command, std::regex(R"(\s+\([^()]*\)$)"), "");
    command = std::regex_replace(command, std::regex(R"(\s+>\s*\S+$)"), "");
    out.push_back(command);
  }
  return out;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// The files the examples name that a user brings, made small.
void user_files(const fs::path& dir) {
  const auto jobs = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:32", "--synthetic", "100", "--json",
                               "--job-trace-out", (dir / "jobs.csv").string()});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  write(dir / "slurm.conf",
        "SchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
        "PriorityWeightAge=1000\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n");
  fs::copy_file(source_path("tests/data/orchestration/helios_layout.csv"), dir / "cluster_log.csv");
  fs::copy_file(source_path("tests/data/orchestration/training_jobs.csv"), dir / "training_jobs.csv");
  fs::copy_file(source_path("tests/data/orchestration/associations.cfg"), dir / "assoc.cfg");
  fs::copy_file(source_path("data/calibration/serving.yaml"), dir / "my_serving.yaml");
  fs::create_directories(dir / "path/to");
  fs::copy_file(source_path("data/models/llama3.1-8b.json"), dir / "path/to/config.json");
}

// Every command's words and its --help text, walked from the top ({} is the top level).
struct CommandHelp {
  std::vector<std::string> words;
  std::string help;
};
std::vector<CommandHelp> every_help() {
  std::vector<CommandHelp> out;
  std::vector<std::vector<std::string>> pending{{}};
  while (!pending.empty()) {
    const auto words = pending.back();
    pending.pop_back();
    auto args = words;
    args.push_back("--help");
    const auto help = run_fmsim(args);
    EXPECT_EQ(help.exit_code, 0) << help.err;
    for (const auto& sub : subcommands(help.out)) {
      auto next = words;
      next.push_back(sub);
      pending.push_back(next);
    }
    out.push_back({words, help.out});
  }
  return out;
}

TEST(HelpExamples, EveryExampleInEveryHelpRuns) {
  std::vector<std::string> examples;
  std::set<std::string> seen;
  for (const auto& command : every_help()) {
    for (const auto& e : examples_in(command.help)) {
      if (seen.insert(e).second) examples.push_back(e);
    }
  }
  ASSERT_GE(examples.size(), 60u);
  for (const auto& skip : skipped()) {
    EXPECT_TRUE(std::any_of(examples.begin(), examples.end(), [&](const auto& e) { return e.starts_with(skip); }))
        << "the skip list names an example no help shows any more: " << skip;
  }
  const fs::path dir = fs::path(::testing::TempDir()) / "help_examples";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* linked : {"examples", "tests", "data", "validation"})
    fs::create_directory_symlink(source_path(linked), dir / linked);
  user_files(dir);
  fs::create_directories(dir / "docs");  // validate collectives --write-doc docs/validation.md
  int ran = 0;
  for (const auto& e : examples) {
    if (std::any_of(skipped().begin(), skipped().end(), [&](const auto& s) { return e.starts_with(s); })) continue;
    SCOPED_TRACE(e);
    auto words = fmsim::testing::shell_words(e);
    words.erase(words.begin());  // "fmsim"
    const auto r = run_fmsim(words, RunOptions{.cwd = dir.string(), .input = "", .env = {}});
    EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
    ++ran;
  }
  EXPECT_GE(ran, 50);
}

// Every command's help shows at least one example of that command itself: CLI11 hands a
// subcommand without a footer its parent's, so `fmsim validate rl --help` showed the top level's
// `fmsim catalog systems` and `fmsim catalog fabrics --help` only the other lists.
TEST(HelpExamples, EveryCommandShowsAnExampleOfItself) {
  int commands = 0;
  for (const auto& command : every_help()) {
    const auto& words = command.words;  // a reference, not a structured binding: clang 14 cannot capture those
    if (words.empty()) continue;
    ++commands;
    const auto examples = examples_in(command.help);
    const bool own = std::any_of(examples.begin(), examples.end(), [&](const std::string& e) {
      auto run = fmsim::testing::shell_words(e);
      run.erase(run.begin());                                                                 // "fmsim"
      if (run.size() >= 2 && run[0] == "--catalog") run.erase(run.begin(), run.begin() + 2);  // global option
      return run.size() >= words.size() && std::equal(words.begin(), words.end(), run.begin());
    });
    std::string path;
    for (const auto& w : words) path += " " + w;
    EXPECT_TRUE(own) << "`fmsim" << path << " --help` shows no example of itself:\n" << command.help;
  }
  EXPECT_GE(commands, 30);
}

}  // namespace
