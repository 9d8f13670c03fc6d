// fmsim validate collectives: predict every row of validation/collectives.csv and report
// the per-row error and a summary against the targets of the collective model.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "collectives/cost_model.hpp"
#include "config/cluster_loader.hpp"
#include "config/collectives_calibration.hpp"
#include "config/collectives_csv.hpp"
#include "core/error.hpp"
#include "topology/group.hpp"

namespace fmsim::cli {
namespace {

// Targets of the collective model (docs/models/collectives.md).
constexpr double kMedianTargetPct = 10.0;
constexpr double kLargeTargetPct = 15.0;
constexpr double kSmallTargetPct = 30.0;
// Rows at or above this size are "large-message" rows; smaller ones and latency rows are "small".
constexpr double kLargeMessageBytes = 64.0 * 1024 * 1024;
// A row that says only "large" is predicted at the largest size its sources use.
constexpr double kLargeDefaultBytes = 16.0 * 1024 * 1024 * 1024;

struct ValidateArgs {
  std::string csv;
  std::string calibration;
  std::string write_doc;
  bool json = false;
  bool markdown = false;
};

struct RowResult {
  config::CollectiveMeasurement m;
  bool predicted = false;
  std::string reason;      // why not predicted
  std::string metric;      // "busbw_GBps" or "time_us"
  std::string size_class;  // "large" or "small"
  double bytes = 0.0;
  double measured = 0.0;
  double prediction = 0.0;
  double error_pct = 0.0;  // signed
  double band_pct = 0.0;
  std::string algorithm;
  std::string protocol;
};

struct Summary {
  int rows = 0;
  int predicted = 0;
  double median = 0.0;
  double max = 0.0;
  int large_rows = 0;
  int large_within = 0;
  int small_rows = 0;
  int small_within = 0;
  [[nodiscard]] bool met() const {
    return predicted == rows && median <= kMedianTargetPct && large_within == large_rows && small_within == small_rows;
  }
};

RowResult predict(const config::CollectiveMeasurement& m, const hardware::Catalog& catalog,
                  const collectives::Calibration& cal) {
  RowResult r;
  r.m = m;
  const auto op = collectives::op_from_name(m.collective);
  if (!op) {
    r.reason = fmt::format("unknown collective '{}'", m.collective);
    return r;
  }
  collectives::Options options;
  if (!m.algorithm.empty()) {
    const auto a = collectives::algorithm_from_name(m.algorithm);
    if (!a) {
      r.reason = fmt::format("unknown algorithm '{}'", m.algorithm);
      return r;
    }
    options.algorithm = *a;
  }
  if (!m.busbw_gbps && !m.time_us) {
    r.reason = "row gives neither busbw_GBps nor time_us";
    return r;
  }
  hardware::ClusterSpec cluster;
  try {
    cluster = config::cluster_for_gpus(catalog, m.instance_type, m.gpus, "instance_type");
  } catch (const core::InputError& e) {
    r.reason = e.what();
    return r;
  }
  const topology::Topology topo = topology::build_topology(cluster);
  if (topo.gpus != m.gpus || topo.nodes != m.nodes) {
    r.reason = fmt::format("{} GPUs on {} nodes do not match whole units of {} ({} GPUs, {} nodes)", m.gpus, m.nodes,
                           m.instance_type, topo.gpus, topo.nodes);
    return r;
  }
  r.bytes = m.bytes ? *m.bytes : kLargeDefaultBytes;
  const collectives::CollectiveCost c =
      collectives::estimate(topo, cal, topology::Group::all(topo), *op, core::Bytes(r.bytes), options);
  if (!c.feasible) {
    r.reason = fmt::format("algorithm {} cannot run on this group", m.algorithm);
    return r;
  }
  r.predicted = true;
  r.algorithm = collectives::algorithm_name(c.algorithm);
  r.protocol = collectives::protocol_name(c.protocol);
  if (m.time_us) {
    r.metric = "time_us";
    r.measured = *m.time_us;
    r.prediction = c.time.value() * 1e6;
  } else {
    r.metric = "busbw_GBps";
    r.measured = *m.busbw_gbps;
    r.prediction = c.busbw.value() / 1e9;
  }
  const bool large = !m.time_us && r.bytes >= kLargeMessageBytes;
  r.size_class = large ? "large" : "small";
  r.band_pct = large ? kLargeTargetPct : kSmallTargetPct;
  r.error_pct = 100.0 * (r.prediction - r.measured) / r.measured;
  return r;
}

Summary summarize(const std::vector<RowResult>& rows) {
  Summary s;
  std::vector<double> errs;
  for (const RowResult& r : rows) {
    ++s.rows;
    if (!r.predicted) continue;
    ++s.predicted;
    const double e = std::abs(r.error_pct);
    errs.push_back(e);
    s.max = std::max(s.max, e);
    const bool within = e <= r.band_pct;
    if (r.size_class == "large") {
      ++s.large_rows;
      s.large_within += within ? 1 : 0;
    } else {
      ++s.small_rows;
      s.small_within += within ? 1 : 0;
    }
  }
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    const std::size_t k = errs.size();
    s.median = k % 2 == 1 ? errs[k / 2] : 0.5 * (errs[k / 2 - 1] + errs[k / 2]);
  }
  return s;
}

std::string size_text(const RowResult& r) {
  if (!r.m.bytes) return fmt::format("{} ({})", r.m.bytes_text, core::format_bytes(core::Bytes(r.bytes)));
  return core::format_bytes(core::Bytes(r.bytes));
}

std::string markdown(const std::vector<RowResult>& rows, const Summary& s) {
  std::ostringstream o;
  o << "Generated by `fmsim validate collectives --csv validation/collectives.csv --markdown`.\n"
    << "Error = (predicted - measured) / measured. Bands: large-message rows (>= 64 MiB) " << kLargeTargetPct
    << "%, small-message and latency rows " << kSmallTargetPct << "%; median target " << kMedianTargetPct << "%.\n\n"
    << "In-sample rows: the few global calibrations were fitted on some of these rows (ring efficiency per GPU "
       "generation: C04, C08; NVLS channel budget: C02, C07; NVL72 NVLS start-up: C10-C11; EFA efficiency per "
       "generation: C16-C18 v2, C19 v1, C21 v4; EFA small-message latency: C12 v2, C23 v4). The other rows are "
       "predictions from those fits; see docs/models/collectives.md.\n\n";
  o << "| id | system | GPUs | collective | forced algo | size | metric | measured | predicted | error | band | model "
       "algo/proto |\n";
  o << "|---|---|---:|---|---|---:|---|---:|---:|---:|---:|---|\n";
  for (const RowResult& r : rows) {
    if (!r.predicted) continue;
    o << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:+.1f}% | {:.0f}% | {}/{} |\n", r.m.id,
                     r.m.system, r.m.gpus, r.m.collective, r.m.algorithm.empty() ? "-" : r.m.algorithm, size_text(r),
                     r.metric, r.measured, r.prediction, r.error_pct, r.band_pct, r.algorithm, r.protocol);
  }
  for (const RowResult& r : rows) {
    if (!r.predicted) o << fmt::format("\nNot predicted: {} ({}): {}\n", r.m.id, r.m.system, r.reason);
  }
  o << fmt::format(
      "\n**Summary:** {} rows, {} predicted; median |error| {:.1f}%, max |error| {:.1f}%; large-message rows within "
      "{:.0f}%: {}/{}; small-message and latency rows within {:.0f}%: {}/{}; targets {}.\n",
      s.rows, s.predicted, s.median, s.max, kLargeTargetPct, s.large_within, s.large_rows, kSmallTargetPct,
      s.small_within, s.small_rows, s.met() ? "met" : "missed");
  return o.str();
}

/// Replaces the text between the collectives markers of `path` (creating the file or the
/// section when missing), leaving the rest of the file as it is.
void write_doc(const std::string& path, const std::string& table) {
  const std::string begin = "<!-- collectives:begin -->";
  const std::string end = "<!-- collectives:end -->";
  std::string doc;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream ss;
      ss << in.rdbuf();
      doc = ss.str();
    }
  }
  const std::string block = begin + "\n" + table + end;
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  if (b != std::string::npos && e != std::string::npos && e > b) {
    doc.replace(b, e + end.size() - b, block);
  } else {
    if (doc.empty()) doc = "# Validation\n\nPredictions of fmsim against published measurements.\n";
    doc += "\n## Collectives\n\n" + block + "\n";
  }
  write_file_atomically(path, doc, "--write-doc");
}

void run_validate(const ValidateArgs& a, Context& ctx) {
  const std::vector<config::CollectiveMeasurement> measurements = config::read_collectives_csv(a.csv, "--csv");
  const collectives::Calibration cal = config::load_collectives_calibration(a.calibration);
  std::vector<RowResult> rows;
  for (const auto& m : measurements) rows.push_back(predict(m, ctx.catalog(), cal));
  const Summary s = summarize(rows);
  if (!a.write_doc.empty()) write_doc(a.write_doc, markdown(rows, s));

  if (a.json) {
    nlohmann::ordered_json out;
    out["csv"] = a.csv.empty() ? "validation/collectives.csv" : a.csv;
    out["rows"] = nlohmann::ordered_json::array();
    out["unpredicted"] = nlohmann::ordered_json::array();
    for (const RowResult& r : rows) {
      if (!r.predicted) {
        out["unpredicted"].push_back({{"id", r.m.id}, {"line", r.m.line}, {"reason", r.reason}});
        continue;
      }
      out["rows"].push_back({{"id", r.m.id},
                             {"system", r.m.system},
                             {"gpus", r.m.gpus},
                             {"collective", r.m.collective},
                             {"forced_algorithm", r.m.algorithm},
                             {"bytes", r.bytes},
                             {"metric", r.metric},
                             {"class", r.size_class},
                             {"measured", r.measured},
                             {"predicted", r.prediction},
                             {"error_pct", r.error_pct},
                             {"band_pct", r.band_pct},
                             {"within_band", std::abs(r.error_pct) <= r.band_pct},
                             {"algorithm", r.algorithm},
                             {"protocol", r.protocol}});
    }
    out["targets"] = {{"median_abs_error_pct", kMedianTargetPct},
                      {"large_message_pct", kLargeTargetPct},
                      {"small_message_pct", kSmallTargetPct},
                      {"large_within", s.large_within},
                      {"large_rows", s.large_rows},
                      {"small_within", s.small_within},
                      {"small_rows", s.small_rows},
                      {"met", s.met()}};
    out["summary"] = {
        {"rows", s.rows}, {"predicted", s.predicted}, {"median_abs_error_pct", s.median}, {"max_abs_error_pct", s.max}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  if (a.markdown) {
    std::cout << markdown(rows, s);
    return;
  }
  std::cout << fmt::format("{:<4} {:<26} {:>4} {:<15} {:<5} {:>18} {:<10} {:>9} {:>9} {:>8} {:>5}  {}\n", "id",
                           "system", "gpus", "collective", "algo", "size", "metric", "measured", "predicted", "error",
                           "band", "model");
  for (const RowResult& r : rows) {
    if (!r.predicted) continue;
    std::cout << fmt::format(
        "{:<4} {:<26} {:>4} {:<15} {:<5} {:>18} {:<10} {:>9.2f} {:>9.2f} {:>+7.1f}% {:>4.0f}%  {}/{}{}\n", r.m.id,
        r.m.system, r.m.gpus, r.m.collective, r.m.algorithm.empty() ? "-" : r.m.algorithm, size_text(r), r.metric,
        r.measured, r.prediction, r.error_pct, r.band_pct, r.algorithm, r.protocol,
        std::abs(r.error_pct) <= r.band_pct ? "" : "  OUTSIDE BAND");
  }
  for (const RowResult& r : rows) {
    if (!r.predicted) std::cout << fmt::format("not predicted: {} (line {}): {}\n", r.m.id, r.m.line, r.reason);
  }
  std::cout << fmt::format(
      "summary: {} rows, {} predicted, median |error| {:.1f}% (target {:.0f}%), max |error| {:.1f}%; large-message "
      "rows within {:.0f}%: {}/{}; small/latency rows within {:.0f}%: {}/{}; targets {}\n",
      s.rows, s.predicted, s.median, kMedianTargetPct, s.max, kLargeTargetPct, s.large_within, s.large_rows,
      kSmallTargetPct, s.small_within, s.small_rows, s.met() ? "met" : "missed");
}

}  // namespace

void add_validate_collectives(CLI::App& validate, Context& ctx) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = validate.add_subcommand("collectives",
                                      "Predict every row of a collectives CSV (nccl-tests busbw or time) and report "
                                      "per-row error and a summary");
  cmd->add_option("--csv", args->csv, "Measurements (default: the built-in validation/collectives.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--calibration", args->calibration, "Collective calibration YAML (default: the shipped one)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--write-doc", args->write_doc,
                  "Also write the Markdown table into this file between <!-- collectives:begin/end --> markers")
      ->check(output_file());
  cmd->add_flag("--json", args->json, "Print rows and summary as JSON");
  cmd->add_flag("--markdown", args->markdown, "Print a Markdown table");
  cmd->footer(
      "Examples:\n"
      "  fmsim validate collectives\n"
      "  fmsim validate collectives --csv validation/collectives.csv --json\n"
      "  fmsim validate collectives --csv validation/collectives.csv --write-doc docs/validation.md");
  cmd->callback([args, &ctx] { run_validate(*args, ctx); });
}

}  // namespace fmsim::cli
