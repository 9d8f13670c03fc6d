// fmsim validate inference: predict every row of validation/inference.csv with the serving
// simulator and report the per-row error and a summary by engine, GPU and scenario.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/text_table.hpp"
#include "config/inference_csv.hpp"
#include "config/serving_calibration.hpp"
#include "core/error.hpp"
#include "jobspec/validate_inference.hpp"
#include "serving/simulator.hpp"

namespace fmsim::cli {
namespace {

// Targets of issue 14 on validation/inference.csv.
constexpr double kThroughputTargetPct = 15.0;
constexpr double kLatencyTargetPct = 20.0;
constexpr double kPredictedTargetFraction = 0.90;

struct ValidateArgs {
  std::string csv;  // empty: the copy of validation/inference.csv built into fmsim
  std::string calibration;
  bool json = false;
  bool markdown = false;
};

using Metric = jobspec::InferenceMetric;
using RowResult = jobspec::InferenceRowResult;

std::string engine_name(const config::InferenceRow& r) { return jobspec::inference_engine_name(r); }
std::string scenario_name(const config::InferenceRow& r) {
  return r.scenario ? std::string(config::kBenchmarkScenarioWords.name(*r.scenario)) : std::string();
}

struct ErrorStats {
  int n = 0;
  double median = 0, p90 = 0, worst = 0, mean_signed = 0;
};

ErrorStats error_stats(std::vector<double> signed_errors) {
  ErrorStats s;
  s.n = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return s;
  double sum = 0;
  for (double e : signed_errors) sum += e;
  s.mean_signed = sum / s.n;
  std::vector<double> a;
  for (double e : signed_errors) a.push_back(std::abs(e));
  const auto st = serving::latency_stats(a);
  s.median = st.p50;
  s.p90 = st.p90;
  s.worst = st.max;
  return s;
}

std::vector<double> errors_of(const std::vector<RowResult>& rows, Metric RowResult::*metric) {
  std::vector<double> out;
  for (const auto& r : rows) {
    if (auto e = (r.*metric).error_pct()) out.push_back(*e);
  }
  return out;
}

std::string cell(const std::optional<double>& v, int digits) { return v ? fmt::format("{:.{}f}", *v, digits) : "-"; }

std::string err_cell(const Metric& m) {
  const auto e = m.error_pct();
  return e ? fmt::format("{:+.1f}%", *e) : "-";
}

nlohmann::json metric_json(const Metric& m) {
  nlohmann::json j = nlohmann::json::object();
  if (m.measured) j["measured"] = *m.measured;
  if (m.predicted) j["predicted"] = *m.predicted;
  if (auto e = m.error_pct()) j["error_pct"] = *e;
  return j;
}

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"rows", s.n},
          {"median_abs_error_pct", s.median},
          {"p90_abs_error_pct", s.p90},
          {"worst_abs_error_pct", s.worst},
          {"mean_signed_error_pct", s.mean_signed}};
}

// Groups rows by a key and reports the throughput and latency medians of each group.
std::map<std::string, std::vector<RowResult>> group_by(const std::vector<RowResult>& rows,
                                                       std::string (*key)(const RowResult&)) {
  std::map<std::string, std::vector<RowResult>> g;
  for (const auto& r : rows) {
    if (r.predicted) g[key(r)].push_back(r);
  }
  return g;
}

std::string engine_key(const RowResult& r) { return engine_name(r.row); }
std::string gpu_key(const RowResult& r) { return r.row.gpu_text; }
std::string scenario_key(const RowResult& r) { return scenario_name(r.row); }

}  // namespace

void add_validate_inference(CLI::App& validate, Context& ctx) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = validate.add_subcommand(
      "inference", "Predict validation/inference.csv (published serving measurements) and report the error");
  cmd->footer(
      "Each row is mapped to a model preset, a catalog system, a layout and an engine profile, and played\n"
      "through the serving simulator with the row's scenario: offline (all requests queued, engine max\n"
      "batch), closed-loop concurrency, or a static batch. Predicted: output tokens/s per GPU, mean TTFT,\n"
      "mean TPOT (first token excluded) and mean end-to-end latency, where the row publishes them.\n"
      "Nothing in data/calibration/serving.yaml is fitted to these rows: every row is held out.\n\n"
      "Examples:\n"
      "  fmsim validate inference\n"
      "  fmsim validate inference --csv validation/inference.csv --json\n"
      "  fmsim validate inference --calibration my_serving.yaml");
  cmd->add_option("--csv", args->csv,
                  "Measurements in the validation/inference.csv schema (default: the built-in copy)")
      ->type_name("FILE");
  cmd->add_option("--calibration", args->calibration,
                  "Serving calibration YAML (default: data/calibration/serving.yaml)")
      ->type_name("FILE");
  cmd->add_flag("--json", args->json, "Machine-readable output; ends with \"summary\"");
  cmd->add_flag("--markdown", args->markdown,
                "The summary and per-row tables as Markdown (docs/validation.md's serving section)");
  cmd->callback([args, &ctx]() {
    const auto cal = config::load_serving_calibration(args->calibration);
    const auto rows = config::read_inference_csv(args->csv);
    const std::string shown = args->csv.empty() ? "validation/inference.csv (built in)" : args->csv;
    std::vector<RowResult> results;
    for (const auto& row : rows) results.push_back(jobspec::predict_inference_row(row, cal, ctx.catalog()));
    int predicted = 0;
    for (const auto& r : results) predicted += r.predicted ? 1 : 0;
    const auto thr = error_stats(errors_of(results, &RowResult::throughput));
    const auto ttft = error_stats(errors_of(results, &RowResult::ttft));
    const auto tpot = error_stats(errors_of(results, &RowResult::tpot));
    const auto e2e = error_stats(errors_of(results, &RowResult::e2e));
    const double predicted_fraction = results.empty() ? 0.0 : static_cast<double>(predicted) / results.size();
    const bool meets = predicted_fraction >= kPredictedTargetFraction && thr.median <= kThroughputTargetPct &&
                       ttft.median <= kLatencyTargetPct && tpot.median <= kLatencyTargetPct;
    const std::pair<const char*, std::string (*)(const RowResult&)> groupings[] = {
        {"engine", engine_key}, {"gpu", gpu_key}, {"scenario", scenario_key}};

    if (args->json) {
      nlohmann::json out;
      out["csv"] = shown;
      nlohmann::json jrows = nlohmann::json::array();
      for (const auto& r : results) {
        nlohmann::json j{{"id", r.row.id},          {"line", r.row.line},        {"engine", engine_name(r.row)},
                         {"gpu", r.row.gpu_text},   {"model", r.row.model_text}, {"scenario", scenario_name(r.row)},
                         {"predicted", r.predicted}};
        if (!r.predicted) j["reason"] = r.reason;
        j["output_tok_s_per_gpu"] = metric_json(r.throughput);
        j["ttft_ms_mean"] = metric_json(r.ttft);
        j["tpot_ms_mean"] = metric_json(r.tpot);
        j["e2e_ms_mean"] = metric_json(r.e2e);
        jrows.push_back(j);
      }
      out["rows"] = jrows;
      nlohmann::json groups = nlohmann::json::object();
      for (const auto& [name, key] : groupings) {
        for (const auto& [k, g] : group_by(results, key)) {
          groups[name][k] = {{"throughput", stats_json(error_stats(errors_of(g, &RowResult::throughput)))},
                             {"ttft", stats_json(error_stats(errors_of(g, &RowResult::ttft)))},
                             {"tpot", stats_json(error_stats(errors_of(g, &RowResult::tpot)))},
                             {"e2e", stats_json(error_stats(errors_of(g, &RowResult::e2e)))}};
        }
      }
      out["by"] = groups;
      out["errors"] = {{"throughput", stats_json(thr)},
                       {"ttft", stats_json(ttft)},
                       {"tpot", stats_json(tpot)},
                       {"e2e", stats_json(e2e)}};
      out["held_out"] = "all rows: the serving calibration is not fitted to this file";
      out["meets_targets"] = meets;
      out["summary"] = {{"rows", static_cast<int>(results.size())},
                        {"predicted", predicted},
                        {"throughput_median_abs_error_pct", thr.median},
                        {"ttft_median_abs_error_pct", ttft.median},
                        {"tpot_median_abs_error_pct", tpot.median}};
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (!args->markdown) {
      std::cout << fmt::format("fmsim validate inference: {} ({} rows, {} predicted)\n\n", shown, results.size(),
                               predicted);
    }
    TextTable t({{"id"},
                 {"engine"},
                 {"gpu"},
                 {"model"},
                 {"scenario"},
                 {"tok/s/GPU meas", true},
                 {"pred", true},
                 {"err", true},
                 {"TTFT ms meas", true},
                 {"pred", true},
                 {"err", true},
                 {"TPOT ms meas", true},
                 {"pred", true},
                 {"err", true},
                 {"E2E ms meas", true},
                 {"pred", true},
                 {"err", true}});
    for (const auto& r : results) {
      std::string scen = scenario_name(r.row);
      if (r.row.concurrency > 0) scen += fmt::format(" {}", r.row.concurrency);
      t.add({r.row.id, engine_name(r.row), r.row.gpu_text, r.row.model_text.substr(0, 24), scen,
             cell(r.throughput.measured, 1), cell(r.throughput.predicted, 1), err_cell(r.throughput),
             cell(r.ttft.measured, 0), cell(r.ttft.predicted, 0), err_cell(r.ttft), cell(r.tpot.measured, 1),
             cell(r.tpot.predicted, 1), err_cell(r.tpot), cell(r.e2e.measured, 0), cell(r.e2e.predicted, 0),
             err_cell(r.e2e)},
            r.predicted ? "" : "not predicted: " + r.reason);
    }
    if (!args->markdown) {
      t.print(std::cout);
      std::cout << "\n";
    }
    TextTable s({{"|error| %"},
                 {"rows", true},
                 {"median", true},
                 {"p90", true},
                 {"worst", true},
                 {"mean signed", true},
                 {"target"}});
    auto srow = [&](const char* name, const ErrorStats& e, std::string target) {
      s.add({name, std::to_string(e.n), fmt::format("{:.1f}", e.median), fmt::format("{:.1f}", e.p90),
             fmt::format("{:.1f}", e.worst), fmt::format("{:+.1f}", e.mean_signed), std::move(target)});
    };
    srow("output tok/s/GPU", thr, fmt::format("median <= {:.0f}%", kThroughputTargetPct));
    srow("TTFT mean", ttft, fmt::format("median <= {:.0f}%", kLatencyTargetPct));
    srow("TPOT mean", tpot, fmt::format("median <= {:.0f}%", kLatencyTargetPct));
    srow("E2E mean", e2e, "");
    if (args->markdown) {
      s.print_markdown(std::cout);
      std::cout << fmt::format("\n{} of {} rows predicted ({:.0f}%).\n\n", predicted, results.size(),
                               100 * predicted_fraction);
      t.print_markdown(std::cout);
      return;
    }
    s.print(std::cout);
    for (const auto& [name, key] : groupings) {
      std::cout << fmt::format("\nby {}:\n", name);
      TextTable g({{name},
                   {"rows", true},
                   {"tok/s median %", true},
                   {"TTFT median %", true},
                   {"TPOT median %", true},
                   {"E2E median %", true}});
      for (const auto& [k, group] : group_by(results, key)) {
        const auto& rows_k = group;  // clang 14 cannot capture a structured binding in a lambda
        auto med = [&](Metric RowResult::*mm) {
          const auto e = error_stats(errors_of(rows_k, mm));
          return e.n ? fmt::format("{:.1f} ({})", e.median, e.n) : std::string("-");
        };
        g.add({k, std::to_string(rows_k.size()), med(&RowResult::throughput), med(&RowResult::ttft),
               med(&RowResult::tpot), med(&RowResult::e2e)});
      }
      g.print(std::cout, "  ");
    }
    std::cout << fmt::format(
        "\n{} of {} rows predicted ({:.0f}%, target {:.0f}%); every row is held out (nothing fitted to this file).\n",
        predicted, results.size(), 100 * predicted_fraction, 100 * kPredictedTargetFraction);
    std::cout << (meets ? "Meets the issue-14 targets.\n" : "Does NOT meet the issue-14 targets.\n");
  });
}

}  // namespace fmsim::cli
