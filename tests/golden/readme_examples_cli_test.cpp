// Every `$ fmsim ...` example in README.md runs and prints what the README shows: each output line
// the README gives under a command (other than "...") is a line of the command's output, compared
// with runs of blanks folded and wall times ("in 0.38 s", "(0.01 s)") and thread counts left out. The commands run
// in a scratch folder that links the repository's examples/, tests/, data/ and validation/, so
// their outputs (build/plan.html, m/, prom-data) land there, not in the checkout.
// Left out, with the reason: `fmsim metrics serve` (a server that runs until stopped) and
// `fmsim compare --prometheus URL` (it needs a Prometheus holding the run: tests/prometheus/
// readme_compare_test.cpp runs that block against a real one). Every example runs in under a second except the default
// `fmsim plan` (about 1 s on two cores) and `fmsim sweep` (about 1 s).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "readme_examples.hpp"
#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::normalized;
using fmsim::testing::readme_examples;
using fmsim::testing::run_fmsim;
using fmsim::testing::RunOptions;
using fmsim::testing::source_path;

TEST(ReadmeExamples, EveryCommandRunsAndPrintsWhatTheReadmeShows) {
  const auto examples = readme_examples();
  ASSERT_GE(examples.size(), 14u) << "README.md's examples were not found";
  const fs::path dir = fs::path(::testing::TempDir()) / "readme_examples";
  fs::remove_all(dir);
  fs::create_directories(dir / "build");
  for (const char* linked : {"examples", "tests", "data", "validation"})
    fs::create_directory_symlink(source_path(linked), dir / linked);
  int ran = 0;
  for (const auto& e : examples) {
    SCOPED_TRACE("README.md:" + std::to_string(e.line) + ": " + e.command);
    if (e.command.starts_with("fmsim metrics serve") || e.command.starts_with("fmsim compare")) continue;
    auto words = fmsim::testing::shell_words(e.command);
    words.erase(words.begin());  // "fmsim"
    const auto r = run_fmsim(words, RunOptions{.cwd = dir.string(), .input = "", .env = {}});
    ++ran;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> printed;
    std::istringstream all(r.out + "\n" + r.err);
    for (std::string l; std::getline(all, l);) printed.push_back(normalized(l));
    for (const auto& shown : e.shown) {
      const std::string want = normalized(shown);
      if (want.empty() || want == "...") continue;
      EXPECT_NE(std::find(printed.begin(), printed.end(), want), printed.end())
          << "the README shows a line the command does not print:\n  " << shown;
    }
  }
  EXPECT_EQ(ran, static_cast<int>(examples.size()) - 2);
}

}  // namespace
