// --metrics-out and friends (see metrics_flags.hpp).
#include "cli/metrics_flags.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "observability/tsdb_block.hpp"
#include "telemetry/cluster_metrics.hpp"

namespace fmsim::cli {

namespace {

/// The check of one companion flag: its value in otherwise default, mutually consistent flags
/// through the same reader the run uses (resolve_metrics_options), so a bad value exits 2 when
/// given, with or without --metrics-out, and before the simulation rather than after it.
CLI::Validator metrics_value(std::string MetricsFlags::*field, const char* type) {
  return parsed_by(
      [field](const std::string& value) {
        MetricsFlags probe;
        probe.heartbeat = "0";
        probe.*field = value;
        if (field == &MetricsFlags::heartbeat) probe.resolution = "1s";
        (void)resolve_metrics_options(probe, "probe");
      },
      type);
}

}  // namespace

void add_metrics_flags(CLI::App& cmd, MetricsFlags& flags) {
  cmd.add_option("--metrics-out", flags.out,
                 "Write the run's metrics over simulated time as OpenMetrics into DIR (dcgm-exporter, node "
                 "exporter and fmsim_* names; load with `fmsim metrics load`)")
      ->type_name("DIR");
  cmd.add_flag("--metrics-per-node", flags.per_node,
               "One dcgm-exporter series per node (the node's identical GPUs as one, without the gpu and UUID "
               "labels) instead of dcgm-exporter's series per GPU; the dashboards need per-GPU series");
  cmd.add_flag("--metrics-per-gpu", flags.per_gpu, "Metrics per GPU, as dcgm-exporter writes them (the default)");
  cmd.add_option("--metrics-resolution", flags.resolution, "Sampling interval of the metrics (a scrape interval)")
      ->check(metrics_value(&MetricsFlags::resolution, "DURATION"))
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--metrics-heartbeat", flags.heartbeat,
                 "Longest gap between written samples of a series; between changes nothing else is written. "
                 "4m keeps series inside Prometheus' 5-minute lookback; 0 writes changes only")
      ->check(metrics_value(&MetricsFlags::heartbeat, "DURATION"))
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--metrics-start", flags.start, "Wall-clock time of simulated time 0 (ISO 8601 UTC or Unix seconds)")
      ->check(metrics_value(&MetricsFlags::start, "TIME"))
      ->type_name("TIME")
      ->capture_default_str();
  cmd.add_option("--metrics-format", flags.format,
                 "openmetrics: DIR/<file>.om, text with timestamps (backfill with `fmsim metrics load`); tsdb: a "
                 "Prometheus TSDB block DIR/<ULID>/ with a sample every resolution (start Prometheus with "
                 "--storage.tsdb.path=DIR); the compact choice for long runs on many nodes")
      ->check(metrics_value(&MetricsFlags::format, "FORMAT"))
      ->type_name("FORMAT")
      ->capture_default_str();
  cmd.add_option("--metrics-max-size", flags.max_size,
                 "Largest OpenMetrics file to write: the text is sized before it is written and a larger one is "
                 "refused (per-GPU series of 64 p5 nodes for a day are 650 MiB; a TSDB block of them 2 MiB)")
      ->check(metrics_value(&MetricsFlags::max_size, "SIZE"))
      ->type_name("SIZE")
      ->capture_default_str();
  cmd.add_option("--job-name,--metrics-job", flags.job,
                 "Value of the `job` label of the metrics (default: model and system); `fmsim compare --job NAME` "
                 "reads the same label back")
      ->type_name("NAME");
}

std::string format_unix_time(std::int64_t unix_s) {
  const std::int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const std::int64_t rest = unix_s - days * 86400;
  const std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(days))};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), rest / 3600, rest / 60 % 60,
                     rest % 60);
}

namespace {

nlohmann::json write_block(const std::string& dir,
                           const std::function<telemetry::WriteSummary(observability::MetricsOutput&)>& write) {
  const auto t0 = std::chrono::steady_clock::now();
  telemetry::WriteSummary summary;
  std::string block;
  std::uint64_t bytes = 0;
  try {
    observability::TsdbBlockWriter writer(dir);
    summary = write(writer);
    block = writer.finish();
    bytes = writer.bytes_written();
    summary.series = writer.series_written();  // a histogram is a series per bucket, _count and _sum
    summary.samples = writer.samples_written();
  } catch (const observability::WriteError& err) {
    throw core::InputError::flag("--metrics-out", err.what());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"file", block},
          {"format", "tsdb"},
          {"series", summary.series},
          {"samples", summary.samples},
          {"bytes", bytes},
          {"first_timestamp_s", summary.first_timestamp_s},
          {"last_timestamp_s", summary.last_timestamp_s},
          {"write_seconds", seconds}};
}

}  // namespace

nlohmann::json write_metrics_file(const MetricsFlags& flags, const std::string& file,
                                  const std::function<telemetry::WriteSummary(observability::MetricsOutput&)>& write) {
  namespace fs = std::filesystem;
  const std::string& dir = flags.out;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw core::InputError::flag("--metrics-out", fmt::format("cannot create directory \"{}\": {}", dir, ec.message()));
  }
  if (jobspec::resolve_metrics_format(flags) == observability::MetricsFormat::Tsdb) return write_block(dir, write);
  const fs::path path = fs::path(dir) / file;
  const fs::path partial = fs::path(dir) / ("." + file + ".partial");
  const auto t0 = std::chrono::steady_clock::now();
  // Sized before a byte is written (the same calls into a writer that only counts): per-GPU text
  // of a long run on many nodes runs to hundreds of GB, which filled disks.
  {
    observability::OpenMetricsWriter sizer(nullptr, path.string());
    (void)write(sizer);
    sizer.finish();
    const double need = static_cast<double>(sizer.bytes_written());
    const auto limit = config::parse_bytes_flag(flags.max_size, "--metrics-max-size");
    if (need > limit.value()) {
      throw core::InputError::flag(
          "--metrics-max-size",
          fmt::format("the OpenMetrics text would take {} ({} samples), above the limit of {}; write a Prometheus TSDB "
                      "block instead (--metrics-format tsdb, well under a byte per sample), one series per node "
                      "(--metrics-per-node) or fewer samples (--metrics-resolution, --metrics-heartbeat), or raise "
                      "--metrics-max-size",
                      core::format_bytes(core::Bytes(need)),
                      core::format_thousands(static_cast<double>(sizer.samples_written())), core::format_bytes(limit)));
    }
    const auto space = fs::space(dir, ec);
    if (!ec && need > static_cast<double>(space.available)) {
      throw core::InputError::flag(
          "--metrics-out",
          fmt::format("the OpenMetrics text would take {}; \"{}\" has {} free", core::format_bytes(core::Bytes(need)),
                      dir, core::format_bytes(core::Bytes(static_cast<double>(space.available)))));
    }
  }
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) throw core::InputError::flag("--metrics-out", fmt::format("cannot write \"{}\"", partial.string()));
  telemetry::WriteSummary summary;
  std::uint64_t bytes = 0;
  try {
    observability::OpenMetricsWriter writer(f, path.string());
    summary = write(writer);
    writer.finish();
    bytes = writer.bytes_written();
  } catch (const observability::WriteError& err) {
    std::fclose(f);
    fs::remove(partial, ec);
    throw core::InputError::flag("--metrics-out", err.what());
  } catch (...) {
    std::fclose(f);
    fs::remove(partial, ec);
    throw;
  }
  if (std::fclose(f) != 0) {
    fs::remove(partial, ec);
    throw core::InputError::flag("--metrics-out", fmt::format("write of \"{}\" failed", path.string()));
  }
  OutputBatch::publish(partial.string(), path.string(), "--metrics-out");  // with the command's other outputs
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"file", path.string()},
          {"series", summary.series},
          {"samples", summary.samples},
          {"bytes", bytes},
          {"first_timestamp_s", summary.first_timestamp_s},
          {"last_timestamp_s", summary.last_timestamp_s},
          {"write_seconds", seconds},
          {"format", "openmetrics"}};
}

std::optional<nlohmann::json> write_cluster_metrics_file(const MetricsFlags& flags, const jobspec::ClusterJob& job) {
  if (flags.out.empty()) return std::nullopt;
  const auto options = resolve_metrics_options(flags, "slurm");
  const auto& first = job.policies[0];
  auto metrics = write_metrics_file(flags, "cluster.om", [&](observability::MetricsOutput& w) {
    return telemetry::write_cluster_metrics(job.layout, first.config, job.jobs, first.options, options, w);
  });
  metrics["job"] = options.job;
  return metrics;
}

std::string metrics_line(const nlohmann::json& m) {
  if (observability::kMetricsFormatWords.parse(m.value("format", "")) == observability::MetricsFormat::Tsdb) {
    const auto block = std::filesystem::path(m["file"].get<std::string>());
    return fmt::format(
        "Metrics: {}: Prometheus TSDB block, {} series, {} samples, {} ({:.2f} s); open it with "
        "`prometheus --storage.tsdb.path={}`\n",
        block.string(), core::format_thousands(m["series"].get<double>()),
        core::format_thousands(m["samples"].get<double>()), core::format_bytes(core::Bytes(m["bytes"].get<double>())),
        m["write_seconds"].get<double>(), block.parent_path().string());
  }
  return fmt::format("Metrics: {}: {} series, {} samples, {} ({:.2f} s); load with `fmsim metrics load {}`\n",
                     m["file"].get<std::string>(), core::format_thousands(m["series"].get<double>()),
                     core::format_thousands(m["samples"].get<double>()),
                     core::format_bytes(core::Bytes(m["bytes"].get<double>())), m["write_seconds"].get<double>(),
                     std::filesystem::path(m["file"].get<std::string>()).parent_path().string());
}

}  // namespace fmsim::cli
