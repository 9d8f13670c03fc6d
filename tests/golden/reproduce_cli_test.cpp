// The command line a report's footer shows reproduces the report: every flag that changed the
// result is on it (--precision, the SLO flags, the keys of a --job file), and running it again
// writes the same report, byte for byte (plan-serve, cluster), or the same plans (plan, whose
// report also states how long the search took).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;
using fmsim::testing::slurp;
using ::testing::HasSubstr;
using ::testing::Not;

// The text of <footer>...</footer>, with the five entities escape_html writes decoded.
std::string footer_text(const std::string& html) {
  const std::size_t open = html.find("<footer>");
  const std::size_t close = html.find("</footer>");
  if (open == std::string::npos || close == std::string::npos) return "";
  std::string text = html.substr(open + 8, close - open - 8);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool decoded = false;
    for (const auto& [entity, c] :
         {std::pair<std::string, char>{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}}) {
      if (text.compare(i, entity.size(), entity) == 0) {
        out += c;
        i += entity.size() - 1;
        decoded = true;
        break;
      }
    }
    if (!decoded) out += text[i];
  }
  return out;
}

// The footer's command without "fmsim" and anything after " (", plus --report `page`.
std::vector<std::string> rerun_words(const std::string& footer, const fs::path& page) {
  auto words = fmsim::testing::shell_words(footer.substr(0, footer.find(" (")));
  EXPECT_FALSE(words.empty());
  if (!words.empty()) {
    EXPECT_EQ(words.front(), "fmsim");
    words.erase(words.begin());
  }
  words.push_back("--report");
  words.push_back(page.string());
  return words;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ReproduceLine, PlanServeNamesEveryFlagAndJobKeyAndRerunsToTheSameReport) {
  // A job file's keys count as flags: the line spells them out and leaves --job (and the outputs)
  // out, so it stands on its own.
  const fs::path dir = fresh_dir("reproduce_plan_serve");
  std::ofstream(dir / "job.yaml") << "engine: trtllm\nosl-dist: lognormal\nosl-spread: 0.5\n";
  const auto first = run_fmsim({"plan-serve",
                                "--job",
                                (dir / "job.yaml").string(),
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
                                "40",
                                "--no-disagg",
                                "--report",
                                (dir / "a.html").string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string a = slurp((dir / "a.html").string());
  const std::string footer = footer_text(a);
  for (const char* part :
       {"fmsim plan-serve ", "--model llama3.1-8b", "--precision fp8", "--slo-ttft 1s", "--slo-tpot 40ms", "--rate 50",
        "--isl 512", "--osl 128", "--probe-requests 40", "--no-disagg", "--systems p5.48xlarge,p5en.48xlarge",
        "--engine trtllm", "--osl-dist lognormal", "--osl-spread 0.5"}) {
    EXPECT_THAT(footer, HasSubstr(part));
  }
  EXPECT_THAT(footer, Not(HasSubstr("--job")));
  EXPECT_THAT(footer, Not(HasSubstr("--report")));
  const auto again = run_fmsim(rerun_words(footer, dir / "b.html"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(slurp((dir / "b.html").string()), a) << footer;
  EXPECT_EQ(again.out, first.out);
}

TEST(ReproduceLine, ClusterRerunsToTheSameReport) {
  const fs::path dir = fresh_dir("reproduce_cluster");
  const auto first = run_fmsim({"cluster", "--cluster", "p5en.48xlarge:32", "--synthetic", "200", "--arrival", "3m",
                                "--seed", "7", "--compare", "fifo", "--reservation",
                                "ReservationName=r1 StartTime=now+1day Duration=12:00:00 NodeCnt=4", "--report",
                                (dir / "a.html").string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string a = slurp((dir / "a.html").string());
  const std::string footer = footer_text(a);
  EXPECT_THAT(footer, HasSubstr("--seed 7"));
  EXPECT_THAT(footer, HasSubstr("--reservation 'ReservationName=r1 StartTime=now+1day Duration=12:00:00 NodeCnt=4'"));
  const auto again = run_fmsim(rerun_words(footer, dir / "b.html"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(slurp((dir / "b.html").string()), a) << footer;
}

TEST(ReproduceLine, PlanRerunsToTheSamePlans) {
  // The plan report states the search's wall time, so the JSON plans are compared instead.
  const fs::path dir = fresh_dir("reproduce_plan");
  const auto first = run_fmsim({"plan", "--model", "llama3.1-8b", "--gpus", "32", "--systems", "p5.48xlarge",
                                "--precision", "bf16", "--seq", "4096", "--gbs", "128", "--task", "sft", "--threads",
                                "2", "--report", (dir / "a.html").string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string footer = footer_text(slurp((dir / "a.html").string()));
  for (const char* part : {"--precision bf16", "--seq 4096", "--gbs 128", "--task sft"}) {
    EXPECT_THAT(footer, HasSubstr(part));
  }
  auto words = rerun_words(footer, dir / "b.html");
  words.push_back("--json");
  // With --report the plan also sweeps GPU counts for the scaling chart: both runs write one.
  const auto expected =
      run_fmsim({"plan", "--model", "llama3.1-8b", "--gpus", "32", "--systems", "p5.48xlarge", "--precision", "bf16",
                 "--seq", "4096", "--gbs", "128", "--task", "sft", "--report", (dir / "c.html").string(), "--json"});
  const auto again = run_fmsim(words);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  // Everything but the search's wall time (search.seconds) and thread count is the result.
  auto plans = [](const std::string& out) {
    auto j = nlohmann::json::parse(out);
    j["search"].erase("seconds");
    j["search"].erase("threads");
    return j;
  };
  EXPECT_EQ(plans(again.out), plans(expected.out)) << footer;
}

}  // namespace
