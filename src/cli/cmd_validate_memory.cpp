// `fmsim validate memory`: predicted per-GPU training memory against published measurements
// (jobspec::validate_memory predicts; this prints).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "documents/text_table.hpp"
#include "documents/validation_summary.hpp"
#include "jobspec/validate_memory.hpp"

namespace fmsim::cli {
using documents::kGiB;
using documents::TextTable;
using documents::validation_summary;
namespace {

struct Options {
  std::string csv;
  bool json = false;
  std::vector<std::string> rows;
};

nlohmann::ordered_json breakdown_json(const parallelism::MemoryBreakdown& m) {
  return {{"weights", m.weights.value() / kGiB},     {"gradients", m.gradients.value() / kGiB},
          {"optimizer", m.optimizer.value() / kGiB}, {"activations", m.activations.value() / kGiB},
          {"buffers", m.buffers.value() / kGiB},     {"fragmentation", m.fragmentation.value() / kGiB},
          {"cache", m.cache.value() / kGiB},         {"context", m.context.value() / kGiB}};
}

std::string breakdown_line(std::string_view what, const parallelism::MemoryBreakdown& m) {
  return fmt::format(
      "    {}stage {} ({:.1f} micro-batches in flight): weights {:.2f}, gradients {:.2f}, optimizer {:.2f}, "
      "activations {:.2f}{}, buffers {:.2f}, fragmentation {:.2f}, cache {:.2f}, context {:.2f}, host {:.2f} GiB\n",
      what, m.peak_stage, m.in_flight, m.weights.value() / kGiB, m.gradients.value() / kGiB, m.optimizer.value() / kGiB,
      m.activations.value() / kGiB,
      // At the optimizer step's peak the activations are freed: their backward peak beside the 0.
      m.optimizer_step_peak && m.backward_activations.value() > 0
          ? fmt::format(" ({:.2f} at the backward peak)", m.backward_activations.value() / kGiB)
          : std::string(),
      m.buffers.value() / kGiB, m.fragmentation.value() / kGiB, m.cache.value() / kGiB, m.context.value() / kGiB,
      m.host.value() / kGiB);
}

}  // namespace

void add_validate_memory(CLI::App& validate, Context& ctx) {
  auto opts = std::make_shared<Options>();
  auto* cmd = validate.add_subcommand("memory", "Predict published per-GPU training memory and out-of-memory verdicts");
  cmd->footer(
      "Reads the column schema of validation/memory.csv. Each row is predicted in the quantity it\n"
      "reports (memory_kind): torch max reserved, max allocated/active, a device reading (nvidia-smi,\n"
      "and the 'unspecified' rows), or a paper's component (states, activations). Rows marked OOM\n"
      "must be predicted not to fit; every other row must be predicted to fit.\n"
      "A figure read on the first node (column measured_gpus = first_node, or notes that say so) is\n"
      "predicted on the pipeline stages that node's GPUs hold; the verdict is always the job's peak.\n"
      "What a row does not publish is derived and listed: a dense GPT's layer count from its stated\n"
      "size (params_total or '200B' in the name; P = L (12h^2 + 13h) + (V + s) h, the nearest multiple\n"
      "of pp); an OOM row without a batch is judged at one sequence per GPU (none fits if that does not).\n"
      "Error = (predicted - measured) / measured GiB.\n\n"
      "Examples:\n"
      "  fmsim validate memory\n"
      "  fmsim validate memory --json\n"
      "  fmsim validate memory --rows M001,M013");
  cmd->add_option("--csv", opts->csv,
                  "Measurements CSV (memory.csv schema; default: the built-in validation/memory.csv)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", opts->json, "Rows and summary as JSON");
  cmd->add_option("--rows", opts->rows, "Only these row ids (e.g. M001,M013), each with its breakdown")->delimiter(',');
  cmd->callback([opts, &ctx]() {
    const auto v = jobspec::validate_memory(opts->csv, opts->rows, ctx.catalog());
    const auto& outcomes = v.outcomes;
    const auto& abs = v.abs_errors;
    if (opts->json) {
      nlohmann::ordered_json j;
      j["csv"] = opts->csv.empty() ? "validation/memory.csv" : opts->csv;
      j["rows"] = nlohmann::ordered_json::array();
      for (const auto& o : outcomes) {
        const auto& r = *o.row;
        nlohmann::ordered_json x{{"row_id", r.run.row_id},
                                 {"model", r.run.model},
                                 {"hardware", r.run.hardware},
                                 {"gpus", r.run.num_gpus},
                                 {"framework", r.framework},
                                 {"memory_kind", r.memory_kind},
                                 {"quantity", jobspec::memory_quantity_name(r.quantity)}};
        if (r.measured_gib) x["measured_gib"] = *r.measured_gib;
        if (!r.run.job) {
          x["skipped"] = r.run.reason;
        } else {
          x["layout"] = r.run.layout_summary;
          if (!r.run.layers_derived_from.empty()) x["layers_derived_from"] = r.run.layers_derived_from;
          if (r.batch_assumed) x["batch_assumed"] = true;  // no batch published: micro-batch 1 per rank
          if (r.measured_gib) {
            x["predicted_gib"] = o.predicted_gib;
            x["error_pct"] = o.error_pct;
          }
          x["required_gib"] = o.memory.total().value() / kGiB;
          x["capacity_gib"] = o.capacity_gib;
          x["fits_memory"] = o.fits;
          x["fits"] = o.fits;  // the older key, kept for one release (docs/cli.md)
          x["verdict_agrees"] = o.verdict_right;
          x["peak_stage"] = o.memory.peak_stage;
          x["breakdown_gib"] = breakdown_json(o.memory);
          // At an optimizer-step peak the activations are freed (0 in the breakdown, which sums to
          // the prediction); what they were at the backward's peak, beside it.
          if (o.memory.optimizer_step_peak)
            x["backward_activations_gib"] = o.memory.backward_activations.value() / kGiB;
          x["measured_gpus"] = r.first_node ? "first_node" : "max";
          if (o.reading_apart) {
            x["reading_stage"] = o.reading.peak_stage;
            x["reading_breakdown_gib"] = breakdown_json(o.reading);
          }
        }
        j["rows"].push_back(x);
      }
      j["summary"] = validation_summary(outcomes.size(), static_cast<std::size_t>(v.predicted), abs,
                                        {{"with_number", abs.size()},
                                         {"oom_rows", v.oom_rows},
                                         {"oom_agreed", v.oom_agreed},
                                         {"run_rows", v.run_rows},
                                         {"run_agreed", v.run_agreed}});
      std::cout << j.dump(2) << "\n";
      return;
    }

    std::cout << fmt::format("{:<6}{:<18.17}{:<22.21}{:>6}  {:<40.39}{:<12}{:>9}{:>10}{:>9}  {}\n", "row", "model",
                             "framework", "gpus", "layout", "quantity", "meas GiB", "pred GiB", "error", "verdict");
    std::vector<std::string> skipped, derived;
    for (const auto& o : outcomes) {
      const auto& r = *o.row;
      if (!r.run.job) {
        skipped.push_back(fmt::format("  {} ({}): {}", r.run.row_id, r.run.model, r.run.reason));
        continue;
      }
      if (!r.run.layers_derived_from.empty())
        derived.push_back(fmt::format("  {}: {}", r.run.row_id, r.run.layers_derived_from));
      if (r.batch_assumed)
        derived.push_back(
            fmt::format("  {}: no batch published; judged at one sequence per GPU (micro-batch 1): "
                        "if that does not fit, no batch does",
                        r.run.row_id));
      const std::string verdict =
          fmt::format("{} {:.1f}/{:.0f} GiB{}", o.fits ? "fits" : "OOM", o.memory.total().value() / kGiB,
                      o.capacity_gib, o.verdict_right ? "" : "  WRONG");
      std::cout << fmt::format("{:<6}{:<18.17}{:<22.21}{:>6}  {:<40.39}{:<12}{:>9}{:>10}{:>9}  {}\n", r.run.row_id,
                               r.run.model, r.framework, r.run.num_gpus, r.run.layout_summary,
                               jobspec::memory_quantity_name(r.quantity),
                               r.measured_gib ? fmt::format("{:.1f}", *r.measured_gib) : "-",
                               r.measured_gib ? fmt::format("{:.1f}", o.predicted_gib) : "-",
                               r.measured_gib ? fmt::format("{:+.1f}%", o.error_pct) : "-", verdict);
      if (!opts->rows.empty()) {
        std::cout << breakdown_line(o.reading_apart ? "peak, " : "", o.memory);
        if (o.reading_apart) std::cout << breakdown_line("read on the first node, ", o.reading);
      }
    }
    if (!derived.empty()) {
      std::cout << fmt::format("\nnot published, derived ({}):\n{}\n", derived.size(), core::join(derived, "\n"));
    }
    if (!skipped.empty()) {
      std::cout << fmt::format("\nnot predicted ({}):\n{}\n", skipped.size(), core::join(skipped, "\n"));
    }
    std::cout << fmt::format(
        "\nsummary: {} rows, {} predicted; {} with a number: median |error| {:.1f}%, p90 {:.1f}%; out-of-memory rows "
        "{}, agreed {}; rows that ran {}, predicted to fit {}\n",
        outcomes.size(), v.predicted, abs.size(), v.median, v.p90, v.oom_rows, v.oom_agreed, v.run_rows, v.run_agreed);
  });
}

}  // namespace fmsim::cli
