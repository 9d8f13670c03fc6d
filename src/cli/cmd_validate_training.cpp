// fmsim validate training: predict every published training run of a CSV and report the error
// (jobspec::validate_training predicts; this prints).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/train_report.hpp"
#include "core/strings.hpp"
#include "documents/validation_summary.hpp"
#include "jobspec/validate_training.hpp"

namespace fmsim::cli {
using documents::validation_summary;
namespace {

using Outcome = jobspec::TrainingRowOutcome;
using RepeatGroup = jobspec::TrainingRepeatGroup;

}  // namespace

void add_validate_training(CLI::App& validate, Context& ctx) {
  auto opts = std::make_shared<jobspec::TrainingValidationOptions>();
  auto json = std::make_shared<bool>(false);
  auto markdown = std::make_shared<bool>(false);
  auto* cmd = validate.add_subcommand("training", "Predict published training runs (step time) and report the error");
  cmd->footer(
      "Reads the column schema of validation/training.csv; every row with a step time or\n"
      "tokens/s/GPU is built (model, catalog system, layout) and simulated. Rows that cannot be\n"
      "simulated are listed with the reason. Error = (predicted - measured) / measured step time.\n\n"
      "Examples:\n"
      "  fmsim validate training\n"
      "  fmsim validate training --holdout\n"
      "  fmsim validate training --markdown");
  cmd->add_option("--csv", opts->csv,
                  "Measurements CSV (training.csv schema; default: the built-in validation/training.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", *json, "Rows and summary as JSON");
  cmd->add_flag("--markdown", *markdown, "Markdown tables (for docs/validation.md)");
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
  cmd->callback([opts, json, markdown, &ctx]() {
    const auto start = std::chrono::steady_clock::now();
    const auto result = jobspec::validate_training(*opts, ctx.catalog());
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!*json) {
      for (const auto& [source, n] : result.refits)
        std::cerr << fmt::format("refitted without {} ({} rows)\n", source, n);
      for (const auto& o : result.outcomes) {
        if (!o.step) continue;
        const std::string reference =
            o.row.measured_step_time_s
                ? fmt::format("measured {:.3f} s", *o.row.measured_step_time_s)
                : fmt::format("derived {:.3f} s from {}", o.row.derived_step_time_s.value_or(0.0), o.row.derived_from);
        fmt::print("=== {} ({}, {} on {} GPUs of {}): {}\n", o.row.row_id, o.row.source_id, o.row.model, o.row.num_gpus,
                   o.row.system, reference);
        print_step(*o.row.job, *o.step);
        fmt::print("\n");
      }
    }
    const auto& outcomes = result.outcomes;
    const auto& derived = result.derived;
    const auto& all = result.all;
    const auto& derived_summary = result.derived_summary;
    const auto& repeats = result.repeats;
    const auto& oom_ids = result.oom_ids;
    const auto fitting = result.fitting;
    const auto over_25 = result.repeats_over_25;
    const auto& by_source = result.by_source;
    const auto& by_gpu = result.by_system;
    const auto& by_arch = result.by_arch;
    using jobspec::summarise_training;
    auto repeat_ids = [](const RepeatGroup& g) { return g.ids(); };

    if (*json) {
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
        if (!o.row.recompute_assumed.empty()) r["recompute_assumed"] = o.row.recompute_assumed;
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
          const auto s = summarise_training(v);
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
      std::vector<double> abs_errors;
      for (const auto* o : result.measured) {
        if (o->ok) abs_errors.push_back(std::fabs(o->error_pct));
      }
      j["summary"] = validation_summary(static_cast<std::size_t>(all.rows), static_cast<std::size_t>(all.predicted),
                                        abs_errors, {{"fit_memory", fitting}, {"does_not_fit", oom_ids}});
      j["derived_summary"] = {{"rows", derived_summary.rows},
                              {"predicted", derived_summary.predicted},
                              {"median_abs_error_pct", derived_summary.median},
                              {"p90_abs_error_pct", derived_summary.p90},
                              {"max_abs_error_pct", derived_summary.max}};
      std::cout << j.dump(2) << "\n";
      return;
    }

    const bool md = *markdown;
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
        const auto s = summarise_training(v);
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
    // Rows whose source names no recompute: predicted with their stack's default, grouped by it.
    std::map<std::string, std::vector<std::string>> assumed;
    for (const auto& o : outcomes) {
      if (o.row.recompute_assumed.empty() || !o.row.measured_step_time_s) continue;
      assumed[o.row.recompute_assumed].push_back(o.row.row_id + (o.ok && o.oom ? " (out of memory)" : ""));
    }
    for (const auto& [what, ids] : assumed) {
      std::cout << fmt::format("{}recompute {}: {} rows: {}\n", md ? "- " : "  ", what, ids.size(),
                               core::join(ids, " "));
    }
    std::cout << fmt::format(
        "\n{}summary: {} rows with a measurement, {} predicted ({:.0f}%), median |error| {:.1f}%, p90 {:.1f}%, max "
        "{:.1f}%, "
        "mean signed {:+.1f}% ({:.2f} s){}\n",
        md ? "**" : "", all.rows, all.predicted, all.rows ? 100.0 * all.predicted / all.rows : 0.0, all.median, all.p90,
        all.max, all.mean_signed, elapsed, md ? "**" : "");
  });
}

}  // namespace fmsim::cli
