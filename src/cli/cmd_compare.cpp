// fmsim compare: a real run's metrics (dcgm-exporter and training progress, read over the
// Prometheus HTTP API) beside fmsim's prediction for the same job, with the differences.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/http.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/training_job_flags.hpp"
#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "telemetry/training_metrics.hpp"
#include "training/step_model.hpp"

namespace fmsim::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct CompareFlags {
  jobspec::TrainingJobFlags train;
  std::string prometheus;
  std::string job;
  std::string at;  ///< "" = now
  std::string window = "1h";
  std::string tolerance;  ///< "" = report only; "10%" = exit 1 beyond
  bool json = false;
};

// One compared quantity: a PromQL query over the window and the predicted value, both in `unit`.
struct Row {
  std::string name;
  std::string unit;
  std::string query;
  double predicted = 0.0;
  std::optional<double> measured;
};

std::optional<double> query_value(const std::string& url, const std::string& promql, std::int64_t at) {
  const auto r = http_get(url, fmt::format("/api/v1/query?query={}&time={}", url_encode(promql), at), "--prometheus");
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw core::InputError::flag("--prometheus",
                                 fmt::format("{} did not answer as a Prometheus API (HTTP {})", url, r.status));
  }
  if (j.value("status", "") != "success") {
    throw core::InputError::flag("--prometheus", fmt::format("query {} failed: {}", promql, j.value("error", r.body)));
  }
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return std::nullopt;
  const double v = std::stod(result[0]["value"][1].get<std::string>());
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string format_value(double v, const std::string& unit) {
  if (unit == "s") return fmt::format("{:.4g} s", v);
  if (unit == "ratio") return fmt::format("{:.1f}%", 100.0 * v);
  if (unit == "GiB") return fmt::format("{:.2f} GiB", v);
  if (unit == "W") return fmt::format("{:.0f} W", v);
  if (unit == "GB/s") return fmt::format("{:.1f} GB/s", v);
  return core::format_thousands(std::round(v));
}

void compare(const CompareFlags& f, const CLI::App& cmd, Context& ctx) {
  const PredictedJob predicted = predict_training_job(f.train, cmd, ctx);
  const training::TrainingJob& job = predicted.setup.job;
  const training::StepResult& step = predicted.step;
  if (!step.feasible) throw core::InputError::flag("layout", step.reason);

  const double window = config::parse_duration_flag(f.window, "--window").value();
  if (window < 60.0) throw core::InputError::flag("--window", "must be at least 1m");
  const std::int64_t at =
      f.at.empty()
          ? std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                .count()
          : config::parse_unix_time(f.at, "--at");
  std::optional<double> tolerance;
  if (!f.tolerance.empty()) {
    std::string t = f.tolerance;
    const bool percent = !t.empty() && t.back() == '%';
    if (percent) t.pop_back();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size() || !(v > 0.0)) {
      throw core::InputError::flag("--tolerance",
                                   fmt::format("\"{}\" is not a positive share (e.g. 10% or 0.1)", f.tolerance));
    }
    tolerance = percent ? v / 100.0 : v;
  }

  telemetry::TrainingRun run;
  run.job = job;
  run.step = step;
  const telemetry::TrainingStates states = training_states(run);
  const auto& c = states.compute;
  std::string quoted;  // a PromQL string: backslash and double quote escaped
  for (const char ch : f.job) {
    if (ch == '\\' || ch == '"') quoted += '\\';
    quoted += ch;
  }
  const std::string sel = fmt::format("{{job=\"{}\"}}", quoted);
  const std::string w = fmt::format("{}s", static_cast<std::int64_t>(window));
  // Medians over the window: the state the job spends most time in (computing), so a checkpoint
  // stall or a restart inside the window does not read as drift.
  const auto median = [&](const std::string& metric, double scale) {
    return fmt::format("quantile(0.5, quantile_over_time(0.5, {}{}[{}])){}", metric, sel, w,
                       scale == 1.0 ? "" : fmt::format(" * {}", scale));
  };
  std::vector<Row> rows = {
      {"step time", "s", median("fmsim_step_time_seconds", 1.0), step.step_time.value(), {}},
      {"throughput (tokens/s)",
       "",
       fmt::format("quantile_over_time(0.5, sum(rate(fmsim_tokens_total{}[5m]))[{}:1m])", sel, w),
       step.tokens_per_s_per_gpu * job.job_gpus(),
       {}},
      {"MFU", "ratio", median("fmsim_mfu_ratio", 1.0), step.mfu, {}},
      {"SM active", "ratio", median("DCGM_FI_PROF_SM_ACTIVE", 1.0), c.sm_active, {}},
      {"tensor pipe active", "ratio", median("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 1.0), c.tensor_active, {}},
      {"graphics engine active", "ratio", median("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1.0), c.gr_engine_active, {}},
      {"memory used per GPU",
       "GiB",
       fmt::format("max(max_over_time(DCGM_FI_DEV_FB_USED{}[{}])) / 1024", sel, w),
       c.fb_used_bytes / kMiB / 1024.0,
       {}},
      {"power per GPU", "W", median("DCGM_FI_DEV_POWER_USAGE", 1.0), c.power_w, {}},
      {"NVLink TX per GPU", "GB/s", median("DCGM_FI_PROF_NVLINK_TX_BYTES", 1e-9), c.nvlink_tx_bytes_per_s * 1e-9, {}},
  };
  for (auto& r : rows) r.measured = query_value(f.prometheus, r.query, at);

  int beyond = 0, missing = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json j{{"quantity", r.name}, {"unit", r.unit}, {"query", r.query}, {"predicted", r.predicted}};
    if (r.measured) {
      const double diff = r.predicted != 0.0 ? (*r.measured - r.predicted) / std::abs(r.predicted) : 0.0;
      j["measured"] = *r.measured;
      j["difference"] = diff;
      if (tolerance && std::abs(diff) > *tolerance) ++beyond;
    } else {
      j["measured"] = nullptr;
      ++missing;
    }
    out.push_back(j);
  }
  if (tolerance && beyond > 0) ctx.exit_code = 1;
  if (f.json) {
    nlohmann::json doc{{"job", f.job},       {"prometheus", f.prometheus}, {"at", format_unix_time(at)},
                       {"window_s", window}, {"model", job.model.name},    {"gpus", job.job_gpus()},
                       {"rows", out},        {"beyond_tolerance", beyond}, {"no_data", missing}};
    if (tolerance) doc["tolerance"] = *tolerance;
    std::cout << doc.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("Job {} on {}: {} over {} GPUs, window {} ending {}\n\n", f.job, f.prometheus,
                           job.model.name, job.job_gpus(), f.window, format_unix_time(at));
  std::cout << fmt::format("  {:<24} {:>14} {:>14} {:>11}\n", "", "measured", "fmsim", "difference");
  for (const auto& r : rows) {
    const std::string measured = r.measured ? format_value(*r.measured, r.unit) : "no data";
    std::string diff = "";
    if (r.measured && r.predicted != 0.0) {
      const double d = (*r.measured - r.predicted) / std::abs(r.predicted);
      diff = fmt::format("{:+.1f}%{}", 100.0 * d, tolerance && std::abs(d) > *tolerance ? " !" : "");
    }
    std::cout << fmt::format("  {:<24} {:>14} {:>14} {:>11}\n", r.name, measured, format_value(r.predicted, r.unit),
                             diff);
  }
  if (missing > 0) {
    std::cout << fmt::format(
        "\n{} quantit{} without data: the job exports none of those series under job=\"{}\" "
        "in the window.\n",
        missing, missing == 1 ? "y" : "ies", f.job);
  }
  if (tolerance) {
    std::cout << fmt::format("\n{} beyond the tolerance of {:.1f}%{}\n", beyond, 100.0 * *tolerance,
                             beyond > 0 ? " (exit status 1)" : "");
  }
}

}  // namespace

void add_compare_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<CompareFlags>();
  auto* cmd = app.add_subcommand("compare", "A real run's metrics in Prometheus beside fmsim's prediction for the job");
  cmd->add_option("--prometheus", f->prometheus, "Prometheus base URL (HTTP API)")->required()->type_name("URL");
  cmd->add_option("--job-name,--job", f->job,
                  "Value of the `job` label of the run's series, as fmsim run --job-name writes it (--job says the "
                  "same here; the job file is --job-file)")
      ->required()
      ->type_name("NAME");
  add_training_job_flags(*cmd, f->train, "--job-file");
  cmd->add_option("--at", f->at, "End of the window (ISO 8601 UTC or Unix seconds; default now)")->type_name("TIME");
  cmd->add_option("--window", f->window, "Length of the window")->type_name("DURATION")->capture_default_str();
  cmd->add_option("--tolerance", f->tolerance, "Exit with status 1 when a difference exceeds this (e.g. 10%)")
      ->type_name("SHARE");
  cmd->add_flag("--json", f->json, "Print JSON");
  cmd->footer(
      "Reads over the window the series a training job and its nodes export (training progress under the\n"
      "fmsim_ names fmsim writes, e.g. fmsim_step_time_seconds and fmsim_tokens_total; dcgm-exporter's\n"
      "DCGM_FI_* per GPU) and predicts the same quantities for the job the training flags describe (as\n"
      "`fmsim train`). Gauges are medians over the window, so a checkpoint stall or a restart in it does not\n"
      "read as drift; memory is the peak; throughput the median of 5-minute rates. Run daily with\n"
      "--tolerance as a drift check.\n\n"
      "--job-name NAME is the Prometheus `job` label of the real run (the spelling `fmsim run`/`serve`/\n"
      "`cluster` use for the label of the series they write; --job NAME, as Prometheus spells it, says the\n"
      "same). Here the YAML job file is --job-file FILE: on `fmsim train` and `fmsim run` that file is --job.\n\n"
      "Examples:\n"
      "  fmsim compare --prometheus http://127.0.0.1:9090 --job-name llama70b \\\n"
      "      --job-file examples/llama70b_job.yaml --window 6h --tolerance 10%\n"
      "  fmsim compare --prometheus http://127.0.0.1:9090 --job-name llama8b --model llama3.1-8b \\\n"
      "      --cluster p5.48xlarge:2 --tp 2 --gbs 64 --at 2026-01-01T06:00:00Z --json");
  cmd->callback([f, &ctx, cmd] { compare(*f, *cmd, ctx); });
}

}  // namespace fmsim::cli
