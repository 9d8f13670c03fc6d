// `fmsim validate inference` as a JSON document and text tables (documents/validate_inference.hpp).
#include "documents/validate_inference.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/words.hpp"
#include "documents/text_table.hpp"
#include "documents/validation_summary.hpp"
#include "serving/simulator.hpp"

namespace fmsim::documents {
namespace {

// Targets of issue 39: latency on measured serving data nobody tuned the model to.
constexpr double kTtftMedianTarget = 15.0, kTtftP90Target = 40.0;
constexpr double kTpotMedianTarget = 8.0, kTpotP90Target = 25.0;
constexpr double kThroughputTargetPct = 15.0;

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

ErrorStats error_stats(const std::vector<RowResult>& rows, Metric RowResult::*metric) {
  std::vector<double> signed_errors, a;
  for (const auto& r : rows) {
    if (auto e = (r.*metric).error_pct()) signed_errors.push_back(*e);
  }
  ErrorStats s;
  s.n = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return s;
  double sum = 0;
  for (double e : signed_errors) {
    sum += e;
    a.push_back(std::abs(e));
  }
  s.mean_signed = sum / s.n;
  const auto st = serving::latency_stats(a);
  s.median = st.p50;
  s.p90 = st.p90;
  s.worst = st.max;
  return s;
}

std::string optional_cell(const std::optional<double>& v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : "-";
}

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

// A median over zero rows is null, never 0.
nlohmann::json stats_json(const ErrorStats& s) {
  auto v = [&](double x) { return s.n > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"rows", s.n},
          {"median_abs_error_pct", v(s.median)},
          {"p90_abs_error_pct", v(s.p90)},
          {"worst_abs_error_pct", v(s.worst)},
          {"mean_signed_error_pct", v(s.mean_signed)}};
}

std::string concurrency_band(const config::InferenceRow& r) {
  if (r.scenario == config::BenchmarkScenario::Offline) return "offline";
  const int c = r.concurrency;
  if (c <= 1) return "c1";
  if (c <= 8) return "c2-8";
  if (c <= 64) return "c9-64";
  if (c <= 256) return "c65-256";
  return "c257+";
}

using Key = std::string (*)(const RowResult&);
std::string engine_key(const RowResult& r) { return engine_name(r.row); }
std::string gpu_key(const RowResult& r) { return r.row.gpu_text; }
std::string mode_key(const RowResult& r) { return r.row.disaggregated ? "disagg" : "agg"; }
std::string model_key(const RowResult& r) { return r.row.model_text; }
std::string band_key(const RowResult& r) { return concurrency_band(r.row); }
std::string scenario_key(const RowResult& r) { return scenario_name(r.row); }
std::string cell_key(const RowResult& r) {
  return fmt::format("{} / {} / {}", r.row.gpu_text, engine_name(r.row), mode_key(r));
}
constexpr std::pair<const char*, Key> kGroupings[] = {{"engine", engine_key},
                                                      {"gpu", gpu_key},
                                                      {"mode", mode_key},
                                                      {"model", model_key},
                                                      {"concurrency", band_key},
                                                      {"scenario", scenario_key},
                                                      {"gpu x engine x mode", cell_key}};

std::map<std::string, std::vector<RowResult>> group_by(const std::vector<RowResult>& rows, Key key) {
  std::map<std::string, std::vector<RowResult>> g;
  for (const auto& r : rows) {
    if (r.predicted) g[key(r)].push_back(r);
  }
  return g;
}

struct Summary {
  int rows = 0, predicted = 0;
  ErrorStats throughput, ttft, tpot, e2e;
  [[nodiscard]] bool meets() const {
    return predicted == rows && (ttft.n == 0 || (ttft.median <= kTtftMedianTarget && ttft.p90 <= kTtftP90Target)) &&
           (tpot.n == 0 || (tpot.median <= kTpotMedianTarget && tpot.p90 <= kTpotP90Target)) &&
           (throughput.n == 0 || throughput.median <= kThroughputTargetPct);
  }
};

Summary summarize(const std::vector<RowResult>& results) {
  Summary s;
  s.rows = static_cast<int>(results.size());
  for (const auto& r : results) s.predicted += r.predicted ? 1 : 0;
  s.throughput = error_stats(results, &RowResult::throughput);
  s.ttft = error_stats(results, &RowResult::ttft);
  s.tpot = error_stats(results, &RowResult::tpot);
  s.e2e = error_stats(results, &RowResult::e2e);
  return s;
}

nlohmann::json summary_json(const Summary& s) {
  return {{"rows", s.rows},
          {"predicted", s.predicted},
          {"errors",
           {{"throughput", stats_json(s.throughput)},
            {"ttft", stats_json(s.ttft)},
            {"tpot", stats_json(s.tpot)},
            {"e2e", stats_json(s.e2e)}}},
          {"meets_targets", s.meets()}};
}

void print_summary(std::ostream& out, const Summary& s, bool markdown) {
  TextTable t({{"|error| %"},
               {"rows", true},
               {"median", true},
               {"p90", true},
               {"worst", true},
               {"mean signed", true},
               {"target"}});
  auto add = [&](const char* name, const ErrorStats& e, std::string target) {
    auto v = [&](double x, const char* f) { return e.n ? fmt::format(fmt::runtime(f), x) : std::string("-"); };
    t.add({name, std::to_string(e.n), v(e.median, "{:.1f}"), v(e.p90, "{:.1f}"), v(e.worst, "{:.1f}"),
           v(e.mean_signed, "{:+.1f}"), std::move(target)});
  };
  add("output tok/s/GPU", s.throughput, fmt::format("median <= {:.0f}%", kThroughputTargetPct));
  add("TTFT mean", s.ttft, fmt::format("median <= {:.0f}%, p90 <= {:.0f}%", kTtftMedianTarget, kTtftP90Target));
  add("TPOT mean", s.tpot, fmt::format("median <= {:.0f}%, p90 <= {:.0f}%", kTpotMedianTarget, kTpotP90Target));
  add("E2E mean", s.e2e, "");
  if (markdown)
    t.print_markdown(out);
  else
    t.print(out);
}

void print_groups(std::ostream& out, const std::vector<RowResult>& results, bool markdown) {
  for (const auto& [name, key] : kGroupings) {
    out << (markdown ? fmt::format("\nBy {}:\n\n", name) : fmt::format("\nby {}:\n", name));
    TextTable g({{name},
                 {"rows", true},
                 {"TTFT median %", true},
                 {"TTFT p90 %", true},
                 {"TPOT median %", true},
                 {"TPOT p90 %", true},
                 {"tok/s median %", true}});
    for (const auto& [k, group] : group_by(results, key)) {
      const auto& rows_k = group;  // clang 14 cannot capture a structured binding in a lambda
      auto stat = [&](Metric RowResult::*m, bool p90) {
        const auto e = error_stats(rows_k, m);
        return e.n ? fmt::format("{:.1f}", p90 ? e.p90 : e.median) : std::string("-");
      };
      g.add({k, std::to_string(rows_k.size()), stat(&RowResult::ttft, false), stat(&RowResult::ttft, true),
             stat(&RowResult::tpot, false), stat(&RowResult::tpot, true), stat(&RowResult::throughput, false)});
    }
    if (markdown)
      g.print_markdown(out);
    else
      g.print(out, "  ");
  }
}

// The held-out figures beside the in-sample ones, one line each (docs/validation.md's table).
void print_held_out(std::ostream& out, const Summary& in_sample, const Summary& held, const std::string& partition) {
  TextTable t(
      {{"held out"}, {"TTFT median %", true}, {"TTFT p90 %", true}, {"TPOT median %", true}, {"TPOT p90 %", true}});
  auto add = [&](const std::string& name, const Summary& s) {
    auto v = [](const ErrorStats& e, double x) { return e.n ? fmt::format("{:.1f}", x) : std::string("-"); };
    t.add({name, v(s.ttft, s.ttft.median), v(s.ttft, s.ttft.p90), v(s.tpot, s.tpot.median), v(s.tpot, s.tpot.p90)});
  };
  add("none (in-sample)", in_sample);
  add("each " + partition, held);
  t.print_markdown(out);
}

nlohmann::json row_json(const RowResult& r) {
  nlohmann::json j{{"id", r.row.id},
                   {"line", r.row.line},
                   {"engine", engine_name(r.row)},
                   {"gpu", r.row.gpu_text},
                   {"model", r.row.model_text},
                   {"mode", mode_key(r)},
                   {"scenario", scenario_name(r.row)},
                   {"concurrency", r.row.concurrency},
                   {"predicted", r.predicted}};
  if (!r.predicted) j["reason"] = r.reason;
  j["output_tok_s_per_gpu"] = metric_json(r.throughput);
  j["ttft_ms_mean"] = metric_json(r.ttft);
  j["tpot_ms_mean"] = metric_json(r.tpot);
  j["e2e_ms_mean"] = metric_json(r.e2e);
  return j;
}

void print_rows(std::ostream& out, const std::vector<RowResult>& results, bool markdown) {
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
    std::string scen = scenario_name(r.row) + (r.row.disaggregated ? " disagg" : "");
    if (r.row.concurrency > 0) scen += fmt::format(" {}", r.row.concurrency);
    t.add({r.row.id, engine_name(r.row), r.row.gpu_text, r.row.model_text.substr(0, 28), scen,
           optional_cell(r.throughput.measured, 1), optional_cell(r.throughput.predicted, 1), err_cell(r.throughput),
           optional_cell(r.ttft.measured, 0), optional_cell(r.ttft.predicted, 0), err_cell(r.ttft),
           optional_cell(r.tpot.measured, 1), optional_cell(r.tpot.predicted, 1), err_cell(r.tpot),
           optional_cell(r.e2e.measured, 0), optional_cell(r.e2e.predicted, 0), err_cell(r.e2e)},
          r.predicted ? "" : "not predicted: " + r.reason);
  }
  if (markdown)
    t.print_markdown(out);
  else
    t.print(out);
}

}  // namespace

nlohmann::json validate_inference_json(const InferenceValidation& v, const hardware::Catalog& catalog) {
  const Summary all = summarize(v.results);
  nlohmann::json out;
  out["csv"] = v.csv;
  nlohmann::json jrows = nlohmann::json::array();
  for (const auto& r : v.results) jrows.push_back(row_json(r));
  out["rows"] = jrows;
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [name, key] : kGroupings) {
    for (const auto& [k, g] : group_by(v.results, key)) {
      groups[name][k] = {{"throughput", stats_json(error_stats(g, &RowResult::throughput))},
                         {"ttft", stats_json(error_stats(g, &RowResult::ttft))},
                         {"tpot", stats_json(error_stats(g, &RowResult::tpot))},
                         {"e2e", stats_json(error_stats(g, &RowResult::e2e))}};
    }
  }
  out["by"] = groups;
  out["errors"] = summary_json(all)["errors"];
  if (v.holdout) {
    nlohmann::json h = summary_json(summarize(v.held));
    h["partition"] = v.holdout_word;
    std::map<std::string, std::vector<RowResult>> parts;
    for (const auto& r : v.held) {
      if (r.predicted) parts[jobspec::partition_of(r.row, *v.holdout, catalog)].push_back(r);
    }
    for (const auto& [k, g] : parts) {
      h["by_partition"][k] = {{"ttft", stats_json(error_stats(g, &RowResult::ttft))},
                              {"tpot", stats_json(error_stats(g, &RowResult::tpot))},
                              {"throughput", stats_json(error_stats(g, &RowResult::throughput))}};
    }
    out["held_out"] = h;
  }
  out["meets_targets"] = all.meets();
  // The common errors pool every compared number: TTFT, TPOT, end-to-end latency, throughput.
  std::vector<double> abs_errors;
  for (const auto& r : v.results) {
    for (const auto metric : {&RowResult::ttft, &RowResult::tpot, &RowResult::e2e, &RowResult::throughput}) {
      if (const auto e = (r.*metric).error_pct()) abs_errors.push_back(std::abs(*e));
    }
  }
  out["summary"] =
      validation_summary(static_cast<std::size_t>(all.rows), static_cast<std::size_t>(all.predicted), abs_errors,
                         {{"throughput_median_abs_error_pct", stats_json(all.throughput)["median_abs_error_pct"]},
                          {"ttft_median_abs_error_pct", stats_json(all.ttft)["median_abs_error_pct"]},
                          {"ttft_p90_abs_error_pct", stats_json(all.ttft)["p90_abs_error_pct"]},
                          {"tpot_median_abs_error_pct", stats_json(all.tpot)["median_abs_error_pct"]},
                          {"tpot_p90_abs_error_pct", stats_json(all.tpot)["p90_abs_error_pct"]}});
  return out;
}

void print_validate_inference(std::ostream& out, const InferenceValidation& v, bool markdown, bool rows) {
  const Summary all = summarize(v.results);
  if (markdown) {
    print_summary(out, all, true);
    out << fmt::format("\n{} of {} rows predicted.\n", all.predicted, all.rows);
    if (v.holdout) {
      out << "\n";
      print_held_out(out, all, summarize(v.held), v.holdout_word);
    }
    if (rows) {
      out << "\n";
      print_rows(out, v.results, true);
    } else {
      print_groups(out, v.results, true);
    }
    return;
  }
  out << fmt::format("fmsim validate inference: {} ({} rows, {} predicted)\n\n", v.csv, all.rows, all.predicted);
  if (rows) {
    print_rows(out, v.results, false);
    out << "\n";
  }
  print_summary(out, all, false);
  print_groups(out, v.results, false);
  if (v.holdout) {
    out << fmt::format("\nheld out by {} (engine host costs refitted without each {}, its rows predicted with them):\n",
                       v.holdout_word, v.holdout_word);
    print_summary(out, summarize(v.held), false);
  }
  out << fmt::format("\n{} of {} rows predicted.\n", all.predicted, all.rows);
  out << (all.meets() ? "Meets the issue-39 targets.\n" : "Does NOT meet the issue-39 targets.\n");
}

}  // namespace fmsim::documents
