// fmsim validate training: predict every published training run of a CSV and report the error.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/stats.hpp"
#include "cli/train_report.hpp"
#include "cli/training_fit_data.hpp"
#include "config/training_calibration.hpp"
#include "config/training_csv.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "training/calibration_fit.hpp"
#include "training/comm_adapter.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {
namespace {

struct Options {
  std::string csv;
  bool json = false;
  bool markdown = false;
  bool analytical = false;
  std::string calibration;
  std::vector<std::string> rows;
  bool holdout = false;
  double anchor = training::FitOptions{}.anchor;
};

struct Outcome {
  config::TrainingRow row;
  double predicted = 0.0;
  double error_pct = 0.0;  // signed: (predicted - measured) / measured
  bool ok = false;
  bool oom = false;
  double memory_gib = 0.0;    // predicted peak per GPU (device total)
  double capacity_gib = 0.0;  // usable HBM
  int peak_stage = 0;
};

/// Rows the simulator cannot tell apart (same model, system, GPU count, layout, sequence length,
/// task and stack) whose measurements still differ, e.g. the same recipe in two container
/// releases. A model that sees only these inputs predicts one time p for all of them; the worst
/// |error| in the group, max(p / m_min - 1, 1 - p / m_max), is smallest at
/// p = 2 m_min m_max / (m_min + m_max), where it is (m_max - m_min) / (m_max + m_min): the floor.
struct RepeatGroup {
  std::vector<const Outcome*> rows;
  double min_s = 0.0, max_s = 0.0;
  [[nodiscard]] double spread_pct() const { return 100.0 * (max_s / min_s - 1.0); }
  [[nodiscard]] double floor_pct() const { return 100.0 * (max_s - min_s) / (max_s + min_s); }
};

/// Groups of indistinguishable rows whose measurements differ by more than `min_spread_pct`.
std::vector<RepeatGroup> repeat_groups(const std::vector<const Outcome*>& measured, double min_spread_pct) {
  std::map<std::string, RepeatGroup> by_inputs;
  for (const Outcome* o : measured) {
    if (!o->ok || !o->row.job) continue;
    const auto& job = *o->row.job;
    const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", o->row.model, o->row.system, o->row.num_gpus,
                                        o->row.layout_summary, job.seq_len, static_cast<int>(job.task), job.stack);
    RepeatGroup& g = by_inputs[key];
    const double m = *o->row.measured_step_time_s;
    g.min_s = g.rows.empty() ? m : std::min(g.min_s, m);
    g.max_s = g.rows.empty() ? m : std::max(g.max_s, m);
    g.rows.push_back(o);
  }
  std::vector<RepeatGroup> out;
  for (auto& [key, g] : by_inputs) {
    if (g.rows.size() > 1 && g.spread_pct() > min_spread_pct) out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const RepeatGroup& a, const RepeatGroup& b) { return a.spread_pct() > b.spread_pct(); });
  return out;
}

struct Summary {
  int rows = 0;
  int predicted = 0;
  double median = 0, p90 = 0, max = 0, mean_signed = 0;
};

Summary summarise(const std::vector<const Outcome*>& outcomes) {
  Summary s;
  std::vector<double> abs;
  double signed_sum = 0;
  for (const auto* o : outcomes) {
    ++s.rows;
    if (!o->ok) continue;
    ++s.predicted;
    abs.push_back(std::fabs(o->error_pct));
    signed_sum += o->error_pct;
  }
  s.median = quantile(abs, 0.5);
  s.p90 = quantile(abs, 0.9);
  s.max = abs.empty() ? 0.0 : *std::max_element(abs.begin(), abs.end());
  s.mean_signed = s.predicted ? signed_sum / s.predicted : 0.0;
  return s;
}

}  // namespace

void add_validate_training(CLI::App& validate, Context& ctx) {
  auto opts = std::make_shared<Options>();
  auto* cmd = validate.add_subcommand("training", "Predict published training runs (step time) and report the error");
  cmd->footer(
      "Reads the column schema of validation/training.csv; every row with a step time or\n"
      "tokens/s/GPU is built (model, catalog system, layout) and simulated. Rows that cannot be\n"
      "simulated are listed with the reason. Error = (predicted - measured) / measured step time.");
  cmd->add_option("--csv", opts->csv,
                  "Measurements CSV (training.csv schema; default: the built-in validation/training.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", opts->json, "Rows and summary as JSON");
  cmd->add_flag("--markdown", opts->markdown, "Markdown tables (for docs/validation.md)");
  cmd->add_flag("--analytical", opts->analytical, "Closed-form schedule instead of the event simulation");
  cmd->add_flag("--holdout", opts->holdout,
                "Leave-one-source-out: refit the calibration without each source, then predict that source");
  auto* holdout_flag = cmd->get_option("--holdout");
  cmd->add_option("--anchor", opts->anchor,
                  "With --holdout: weight of the priors in each refit (as in fmsim calibrate training)")
      ->check(real_range(0.0, 10.0))
      ->capture_default_str()
      ->needs(holdout_flag);
  cmd->add_option("--rows", opts->rows, "Only these row ids (e.g. V041,V280), each with its full breakdown")
      ->delimiter(',');
  cmd->add_option("--calibration", opts->calibration, "Calibration YAML replacing the shipped one")
      ->check(CLI::ExistingFile);
  cmd->callback([opts, &ctx]() {
    const auto start = std::chrono::steady_clock::now();
    const auto rows = config::read_training_csv(opts->csv, ctx.catalog());
    for (const auto& id : opts->rows) {
      if (std::none_of(rows.begin(), rows.end(), [&](const config::TrainingRow& r) { return r.row_id == id; })) {
        throw core::InputError::flag("--rows", "no row '" + id + "' in " + opts->csv);
      }
    }
    const auto calibration = config::load_training_calibration(opts->calibration);
    // Leave-one-source-out: the calibration used for a row's source is fitted without that source.
    std::map<std::string, training::Calibration> held_out;
    if (opts->holdout) {
      std::map<std::string, int> sources;
      for (const auto& row : rows) {
        if (row.job && row.measured_step_time_s) ++sources[row.source_id];
      }
      for (const auto& [source, n] : sources) {
        auto cal = calibration;
        auto data = measurements_from_csv(opts->csv, ctx, {source});
        (void)training::fit_calibration(cal, data, training::FitOptions{.anchor = opts->anchor});
        held_out.emplace(source, std::move(cal));
        if (!opts->json) std::cerr << fmt::format("refitted without {} ({} rows)\n", source, n);
      }
    }
    std::vector<Outcome> outcomes;
    std::map<std::string, training::CommCostFn> comm_by_cluster;
    for (const auto& row : rows) {
      if (!opts->rows.empty() && std::find(opts->rows.begin(), opts->rows.end(), row.row_id) == opts->rows.end())
        continue;
      Outcome o;
      o.row = row;
      if (row.job) {
        const auto& job = *row.job;
        const std::string key =
            fmt::format("{}:{}:{}", job.cluster.system.name, job.cluster.count, job.cluster.gpu.name);
        auto it = comm_by_cluster.find(key);
        if (it == comm_by_cluster.end()) it = comm_by_cluster.emplace(key, training::make_comm_cost(job.cluster)).first;
        // Derived rows are never fitted, so a source with only those has no held-out calibration.
        const auto held = held_out.find(row.source_id);
        const auto& cal = opts->holdout && held != held_out.end() ? held->second : calibration;
        const auto r = opts->analytical ? training::estimate_step(job, cal, it->second)
                                        : training::simulate_step(job, cal, it->second);
        if (!opts->rows.empty() && !opts->json) {
          fmt::print("=== {} ({}, {} on {} GPUs of {}): measured {:.3f} s\n", row.row_id, row.source_id, row.model,
                     row.num_gpus, row.system, row.measured_step_time_s.value_or(0.0));
          print_step(job, r);
          fmt::print("\n");
        }
        if (r.feasible) {
          o.ok = true;
          o.predicted = r.step_time.value();
          const double reference =
              row.measured_step_time_s ? *row.measured_step_time_s : row.derived_step_time_s.value_or(0.0);
          o.error_pct = reference > 0.0 ? 100.0 * (o.predicted - reference) / reference : 0.0;
          o.oom = !r.fits_memory;
          o.memory_gib = r.memory.total().value() / (1024.0 * 1024.0 * 1024.0);
          o.capacity_gib = r.memory_capacity.value() / (1024.0 * 1024.0 * 1024.0);
          o.peak_stage = r.memory.peak_stage;
        } else {
          o.row.reason = "simulator: " + r.reason;
        }
      }
      outcomes.push_back(std::move(o));
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Only rows with a measurement count as rows to predict.
    std::vector<const Outcome*> measured;
    std::map<std::string, std::vector<const Outcome*>> by_source, by_gpu, by_arch;
    for (const auto& o : outcomes) {
      if (!o.row.measured_step_time_s) continue;
      measured.push_back(&o);
      by_source[o.row.source_id].push_back(&o);
      by_gpu[o.row.system.empty() ? o.row.hardware : o.row.system].push_back(&o);
      by_arch[o.row.arch_type].push_back(&o);
    }
    const Summary all = summarise(measured);
    // Rows whose step time is derived from published TFLOP/s by the source's FLOP formula.
    std::vector<const Outcome*> derived;
    for (const auto& o : outcomes) {
      if (!o.row.measured_step_time_s && o.row.derived_step_time_s) derived.push_back(&o);
    }
    const Summary derived_summary = summarise(derived);
    const auto repeats = repeat_groups(measured, 5.0);
    auto repeat_ids = [](const RepeatGroup& g) {
      std::vector<std::string> ids;
      for (const Outcome* o : g.rows) ids.push_back(o->row.row_id);
      return ids;
    };
    // Every measured run ran: each predicted "DOES NOT FIT" is a wrong memory verdict.
    std::vector<std::string> oom_ids;
    std::size_t fitting = 0;
    for (const Outcome* o : measured) {
      if (!o->ok) continue;
      if (o->oom)
        oom_ids.push_back(o->row.row_id);
      else
        ++fitting;
    }
    const auto over_25 =
        std::count_if(repeats.begin(), repeats.end(), [](const RepeatGroup& g) { return g.floor_pct() > 25.0; });

    if (opts->json) {
      nlohmann::json j;
      j["rows"] = nlohmann::json::array();
      for (const auto& o : outcomes) {
        nlohmann::json r{{"row_id", o.row.row_id},        {"source_id", o.row.source_id}, {"model", o.row.model},
                         {"hardware", o.row.hardware},    {"system", o.row.system},       {"gpus", o.row.num_gpus},
                         {"layout", o.row.layout_summary}};
        if (o.row.measured_step_time_s) r["measured_step_time_s"] = *o.row.measured_step_time_s;
        if (o.row.derived_step_time_s) {
          r["derived_step_time_s"] = *o.row.derived_step_time_s;
          r["derived_from"] = o.row.derived_from;
        }
        if (o.ok) {
          r["predicted_step_time_s"] = o.predicted;
          r["error_pct"] = o.error_pct;
          r["fits_memory"] = !o.oom;
          r["memory_gib"] = o.memory_gib;
          r["capacity_gib"] = o.capacity_gib;
          r["memory_peak_stage"] = o.peak_stage;
        } else {
          r["skipped"] = o.row.reason;
        }
        j["rows"].push_back(r);
      }
      auto group_json = [](const std::map<std::string, std::vector<const Outcome*>>& groups) {
        nlohmann::json g = nlohmann::json::object();
        for (const auto& [k, v] : groups) {
          const auto s = summarise(v);
          g[k] = {{"rows", s.rows},
                  {"predicted", s.predicted},
                  {"median_abs_error_pct", s.median},
                  {"p90_abs_error_pct", s.p90},
                  {"mean_signed_error_pct", s.mean_signed}};
        }
        return g;
      };
      j["by_source"] = group_json(by_source);
      j["by_system"] = group_json(by_gpu);
      j["by_arch"] = group_json(by_arch);
      j["repeatability"] = nlohmann::json::array();
      for (const auto& g : repeats) {
        j["repeatability"].push_back({{"rows", repeat_ids(g)},
                                      {"measured_min_s", g.min_s},
                                      {"measured_max_s", g.max_s},
                                      {"spread_pct", g.spread_pct()},
                                      {"floor_abs_error_pct", g.floor_pct()}});
      }
      j["elapsed_s"] = elapsed;
      j["summary"] = {{"rows", all.rows},
                      {"predicted", all.predicted},
                      {"median_abs_error_pct", all.median},
                      {"p90_abs_error_pct", all.p90},
                      {"fit_memory", fitting},
                      {"does_not_fit", oom_ids}};
      j["derived_summary"] = {{"rows", derived_summary.rows},
                              {"predicted", derived_summary.predicted},
                              {"median_abs_error_pct", derived_summary.median},
                              {"p90_abs_error_pct", derived_summary.p90},
                              {"max_abs_error_pct", derived_summary.max}};
      std::cout << j.dump(2) << "\n";
      return;
    }

    const bool md = opts->markdown;
    auto table_row = [&](const std::vector<std::string>& cells) {
      if (md) {
        std::cout << "| " << core::join(cells, " | ") << " |\n";
      } else {
        std::cout << fmt::format("{:<6}{:<5}{:<20.20}{:<15.15}{:>6}  {:<44.44}{:>11}{:>12}{:>9}", cells[0], cells[1],
                                 cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8])
                  << "\n";
      }
    };
    if (md) std::cout << "### Per row\n\n";
    table_row({"row", "src", "model", "system", "gpus", "layout", "measured s", "predicted s", "error"});
    if (md) std::cout << "|---|---|---|---|---:|---|---:|---:|---:|\n";
    for (const auto& o : outcomes) {
      if (!o.row.measured_step_time_s || !o.ok) continue;
      table_row({o.row.row_id, o.row.source_id, o.row.model, o.row.system, std::to_string(o.row.num_gpus),
                 o.row.layout_summary + (o.oom ? " (OOM)" : ""), fmt::format("{:.3f}", *o.row.measured_step_time_s),
                 fmt::format("{:.3f}", o.predicted), fmt::format("{:+.1f}%", o.error_pct)});
    }
    if (!derived.empty()) {
      std::cout << (md ? "\n### Rows derived from published TFLOP/s\n\n"
                         "Their step time is the source's FLOP count over its TFLOP/s per GPU: derived, not measured, "
                         "so they are outside the summary and the calibration.\n\n"
                       : "\nrows derived from published TFLOP/s (the source's FLOP formula; outside the summary):\n");
      table_row({"row", "src", "model", "system", "gpus", "layout", "derived s", "predicted s", "error"});
      if (md) std::cout << "|---|---|---|---|---:|---|---:|---:|---:|\n";
      for (const Outcome* o : derived) {
        if (!o->ok) continue;
        table_row({o->row.row_id, o->row.source_id, o->row.model, o->row.system, std::to_string(o->row.num_gpus),
                   o->row.layout_summary + (o->oom ? " (OOM)" : ""), fmt::format("{:.3f}", *o->row.derived_step_time_s),
                   fmt::format("{:.3f}", o->predicted), fmt::format("{:+.1f}%", o->error_pct)});
      }
      std::cout << fmt::format("{}derived: {} rows, {} predicted, median |error| {:.1f}%, p90 {:.1f}%, max {:.1f}%\n",
                               md ? "\n" : "  ", derived_summary.rows, derived_summary.predicted,
                               derived_summary.median, derived_summary.p90, derived_summary.max);
    }
    std::cout << (md ? "\n### Rows not predicted\n\n" : "\nrows not predicted:\n");
    for (const auto& o : outcomes) {
      if (o.ok) continue;
      std::cout << (md ? "- " : "  ") << o.row.row_id << " (" << o.row.model << ", " << o.row.hardware
                << "): " << o.row.reason << "\n";
    }
    auto print_groups = [&](const char* title, const std::map<std::string, std::vector<const Outcome*>>& groups) {
      std::cout << (md ? fmt::format("\n### By {}\n\n| {} | rows | predicted | median abs error | p90 abs error | mean "
                                     "signed error |\n|---|---:|---:|---:|---:|---:|\n",
                                     title, title)
                       : fmt::format("\nby {}:\n", title));
      for (const auto& [k, v] : groups) {
        const auto s = summarise(v);
        if (md) {
          std::cout << fmt::format("| {} | {} | {} | {:.1f}% | {:.1f}% | {:+.1f}% |\n", k, s.rows, s.predicted,
                                   s.median, s.p90, s.mean_signed);
        } else {
          std::cout << fmt::format(
              "  {:<22}{:>5} rows {:>5} predicted   median {:5.1f}%   p90 {:5.1f}%   mean {:+6.1f}%\n", k, s.rows,
              s.predicted, s.median, s.p90, s.mean_signed);
        }
      }
    };
    print_groups("source", by_source);
    print_groups("system", by_gpu);
    print_groups("arch", by_arch);
    std::cout << (md ? "\n### Same inputs, different measurements\n\n"
                     : "\nsame inputs, different measurements (spread > 5%):\n");
    std::cout << (md ? "Rows the simulator cannot tell apart (same model, system, GPUs, layout, sequence length, task "
                       "and stack) whose published step times differ, mostly the same recipe in different container "
                       "releases. Any model given only these inputs predicts one time for the group, so at least one "
                       "of its rows has an |error| of at least the floor, (max - min) / (max + min).\n\n"
                       "| rows | measured min s | measured max s | spread | floor |\n|---|---:|---:|---:|---:|\n"
                     : "");
    for (const auto& g : repeats) {
      const std::string ids = core::join(repeat_ids(g), " ");
      if (md) {
        std::cout << fmt::format("| {} | {:.3f} | {:.3f} | {:.1f}% | {:.1f}% |\n", ids, g.min_s, g.max_s,
                                 g.spread_pct(), g.floor_pct());
      } else {
        std::cout << fmt::format("  {:<40} {:>9.3f} .. {:>9.3f} s   spread {:5.1f}%   floor {:5.1f}%\n", ids, g.min_s,
                                 g.max_s, g.spread_pct(), g.floor_pct());
      }
    }
    std::cout << fmt::format("{}{} groups; in {} of them no single prediction is within 25% of every row\n",
                             md ? "\n" : "  ", repeats.size(), over_25);
    std::cout << fmt::format("\nmemory: {} of {} predicted runs fit{}{}\n", fitting, fitting + oom_ids.size(),
                             oom_ids.empty() ? "" : "; judged out of memory: ", core::join(oom_ids, " "));
    std::cout << fmt::format(
        "\n{}summary: {} rows with a measurement, {} predicted ({:.0f}%), median |error| {:.1f}%, p90 {:.1f}%, max "
        "{:.1f}%, "
        "mean signed {:+.1f}% ({:.2f} s){}\n",
        md ? "**" : "", all.rows, all.predicted, all.rows ? 100.0 * all.predicted / all.rows : 0.0, all.median, all.p90,
        all.max, all.mean_signed, elapsed, md ? "**" : "");
  });
}

}  // namespace fmsim::cli
