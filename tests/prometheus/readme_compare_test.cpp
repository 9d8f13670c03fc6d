// README.md's `fmsim compare` example, run as the README runs it: the block's `fmsim run ...
// --metrics-out m` and `fmsim metrics load m --prometheus-data prom-data`, then a real Prometheus
// on loopback opening prom-data (its own free port instead of the README's 9090; stopped by pid),
// then the README's `fmsim compare` against it. Every output line the README shows under compare
// (other than "...") is a line compare prints, and compare exits 1 as the README's last line says
// (one quantity beyond the tolerance: the README compares --gbs 128 with a run at --gbs 64).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../golden/readme_examples.hpp"
#include "../golden/run_cli.hpp"
#include "support/prometheus_loopback.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::normalized;
using fmsim::testing::run_fmsim;
using fmsim::testing::RunOptions;

std::vector<std::string> printed_lines(const fmsim::testing::CliResult& r) {
  std::vector<std::string> out;
  std::istringstream all(r.out + "\n" + r.err);
  for (std::string l; std::getline(all, l);) out.push_back(normalized(l));
  return out;
}

TEST(ReadmeCompare, CompareExampleAgainstARealPrometheusPrintsWhatTheReadmeShows) {
  FMSIM_SKIP_WITHOUT_PROMETHEUS();
  const auto examples = fmsim::testing::readme_examples();
  const auto compare = std::find_if(examples.begin(), examples.end(),
                                    [](const auto& e) { return e.command.starts_with("fmsim compare "); });
  ASSERT_NE(compare, examples.end()) << "README.md has no `fmsim compare` example";
  // The run and the load the example compares: the README's commands before it that write m/ and
  // prom-data/.
  const auto run = std::find_if(examples.begin(), compare, [](const auto& e) {
    return e.command.starts_with("fmsim run ") && e.command.find("--metrics-out m ") != std::string::npos;
  });
  const auto load = std::find_if(examples.begin(), compare, [](const auto& e) {
    return e.command.starts_with("fmsim metrics load m --prometheus-data prom-data");
  });
  ASSERT_NE(run, compare) << "no `fmsim run ... --metrics-out m` before the compare example";
  ASSERT_NE(load, compare) << "no `fmsim metrics load m --prometheus-data prom-data` before the compare example";

  const fs::path dir = fs::path(::testing::TempDir()) / "readme_compare";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto* e : {&*run, &*load}) {
    auto words = fmsim::testing::shell_words(e->command);
    words.erase(words.begin());  // "fmsim"
    const auto r = run_fmsim(words, RunOptions{.cwd = dir.string(), .input = "", .env = {}});
    ASSERT_EQ(r.exit_code, 0) << "README.md:" << e->line << ": " << e->command << "\n" << r.all();
  }
  fmsim::testing::PrometheusLoopbackOptions options;
  options.data_dir = dir / "prom-data";
  fmsim::testing::PrometheusLoopback prom(options);

  auto words = fmsim::testing::shell_words(compare->command);
  words.erase(words.begin());
  const auto url = std::find(words.begin(), words.end(), "--prometheus");
  ASSERT_NE(url, words.end());
  ASSERT_NE(url + 1, words.end());
  *(url + 1) = prom.url();
  const auto r = run_fmsim(words, RunOptions{.cwd = dir.string(), .input = "", .env = {}});
  SCOPED_TRACE("README.md:" + std::to_string(compare->line) + ": " + compare->command);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  const auto printed = printed_lines(r);
  int checked = 0;
  for (const auto& shown : compare->shown) {
    const std::string want = normalized(shown);
    if (want.empty() || want == "...") continue;
    ++checked;
    EXPECT_NE(std::find(printed.begin(), printed.end(), want), printed.end())
        << "the README shows a line compare does not print:\n  " << shown << "\nprinted:\n"
        << r.all();
  }
  EXPECT_GE(checked, 5) << "the README's compare example shows too few lines to check";
}

}  // namespace
