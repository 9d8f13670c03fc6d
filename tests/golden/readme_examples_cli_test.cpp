// Every `$ fmsim ...` example in README.md runs and prints what the README shows: each output line
// the README gives under a command (other than "...") is a line of the command's output, compared
// with runs of blanks folded and wall times ("in 0.38 s", "(0.01 s)") and thread counts left out. The commands run
// in a scratch folder that links the repository's examples/, tests/, data/ and validation/, so
// their outputs (build/plan.html, m/, prom-data) land there, not in the checkout.
// Left out, with the reason: `fmsim metrics serve` (a server that runs until stopped) and
// `fmsim compare --prometheus URL` (it needs a Prometheus holding a real run; tests/prometheus
// checks compare against a real one). Every example runs in under a second except the default
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

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;
using fmsim::testing::RunOptions;
using fmsim::testing::source_path;

struct Example {
  int line = 0;                    ///< README line of the `$ fmsim` prompt
  std::string command;             ///< without "$ ", continuation lines joined, trailing # comment cut
  std::vector<std::string> shown;  ///< output lines the README shows under it
};

// The `$ ` commands of README's plain ``` blocks (not ```sh or ```python), with the lines under each
// up to the next `$ ` or the end of the block.
std::vector<Example> readme_examples() {
  std::ifstream in(source_path("README.md"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<Example> out;
  bool in_block = false, plain = false, collecting = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.starts_with("```")) {
      in_block = !in_block;
      plain = in_block && l == "```";
      collecting = false;
      continue;
    }
    if (!in_block || !plain) continue;
    if (l.starts_with("$ ")) {
      Example e{static_cast<int>(i + 1), l.substr(2), {}};
      while (e.command.ends_with("\\") && i + 1 < lines.size()) {
        e.command.pop_back();
        const std::string& next = lines[++i];
        e.command += " " + next.substr(next.find_first_not_of(' '));
      }
      e.command = std::regex_replace(e.command, std::regex(R"(\s+#.*$)"), "");
      collecting = e.command.starts_with("fmsim ");
      if (collecting) out.push_back(e);
    } else if (collecting) {
      out.back().shown.push_back(l);
    }
  }
  return out;
}

// Blanks folded, ends trimmed, wall times replaced by "_".
std::string normalized(const std::string& line) {
  std::string s = std::regex_replace(line, std::regex(R"(\([0-9.]+ s\))"), "(_ s)");
  s = std::regex_replace(s, std::regex(R"(in [0-9.]+ s\b)"), "in _ s");
  s = std::regex_replace(s, std::regex(R"(\([0-9]+ threads\))"), "(_ threads)");
  std::istringstream words(s);
  std::string out, w;
  while (words >> w) out += (out.empty() ? "" : " ") + w;
  return out;
}

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
