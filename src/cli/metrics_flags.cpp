// --metrics-out and friends (see metrics_flags.hpp).
#include "cli/metrics_flags.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "observability/tsdb_block.hpp"
#include "telemetry/cluster_metrics.hpp"

namespace fmsim::cli {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

void add_metrics_flags(CLI::App& cmd, MetricsFlags& flags) {
  cmd.add_option("--metrics-out", flags.out,
                 "Write the run's metrics over simulated time as OpenMetrics into DIR (dcgm-exporter, node "
                 "exporter and fmsim_* names; load with `fmsim metrics load`)")
      ->type_name("DIR");
  cmd.add_flag("--metrics-per-gpu", flags.per_gpu, "Metrics per GPU (dcgm-exporter's shape) instead of per node");
  cmd.add_option("--metrics-resolution", flags.resolution, "Sampling interval of the metrics (a scrape interval)")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--metrics-heartbeat", flags.heartbeat,
                 "Longest gap between written samples of a series; between changes nothing else is written. "
                 "4m keeps series inside Prometheus' 5-minute lookback; 0 writes changes only")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_option("--metrics-start", flags.start, "Wall-clock time of simulated time 0 (ISO 8601 UTC or Unix seconds)")
      ->type_name("TIME")
      ->capture_default_str();
  cmd.add_option("--metrics-format", flags.format,
                 "openmetrics: DIR/<file>.om, text with timestamps (backfill with `fmsim metrics load`); tsdb: a "
                 "Prometheus TSDB block DIR/<ULID>/ with a sample every resolution (start Prometheus with "
                 "--storage.tsdb.path=DIR); the compact choice for long runs on many nodes")
      ->type_name("FORMAT")
      ->capture_default_str();
  cmd.add_option("--job-name,--metrics-job", flags.job,
                 "Value of the `job` label of the metrics (default: model and system); `fmsim compare --job NAME` "
                 "reads the same label back")
      ->type_name("NAME");
}

std::int64_t parse_unix_time(const std::string& text, const std::string& flag) {
  const std::string t = trimmed(text);
  if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() <= 12) {
    return std::stoll(t);
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  const int n = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z);
  const bool date_only = std::sscanf(t.c_str(), "%4d-%2d-%2d", &y, &mo, &d) == 3 && t.size() == 10;
  if (!(date_only || (n == 7 && z == 'Z' && t.size() == 20)) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
      mi > 59 || s > 59 || y < 1970) {
    throw core::InputError::flag(flag, fmt::format("\"{}\" is not a time; use ISO 8601 UTC (2026-01-01T00:00:00Z, "
                                                   "2026-01-01) or Unix seconds",
                                                   text));
  }
  if (date_only) h = mi = s = 0;
  const auto days = std::chrono::sys_days(std::chrono::year(y) / std::chrono::month(static_cast<unsigned>(mo)) /
                                          std::chrono::day(static_cast<unsigned>(d)));
  return days.time_since_epoch().count() * 86400LL + h * 3600LL + mi * 60LL + s;
}

std::string format_unix_time(std::int64_t unix_s) {
  const std::int64_t days = unix_s >= 0 ? unix_s / 86400 : (unix_s - 86399) / 86400;
  const std::int64_t rest = unix_s - days * 86400;
  const std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(days))};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), rest / 3600, rest / 60 % 60,
                     rest % 60);
}

telemetry::SeriesOptions resolve_metrics_options(const MetricsFlags& flags, const std::string& default_job) {
  telemetry::SeriesOptions o;
  o.job = flags.job.empty() ? default_job : flags.job;
  const double res = config::parse_duration_flag(flags.resolution, "--metrics-resolution").value();
  if (res < 1.0 || res != std::floor(res)) {
    throw core::InputError::flag(
        "--metrics-resolution", fmt::format("\"{}\" must be a whole number of seconds, at least 1s", flags.resolution));
  }
  o.resolution_s = static_cast<std::int64_t>(res);
  const std::string hb = trimmed(flags.heartbeat);
  const double heartbeat =
      hb == "0" ? 0.0 : config::parse_duration_flag(flags.heartbeat, "--metrics-heartbeat").value();
  if (heartbeat != 0.0 && heartbeat < res) {
    throw core::InputError::flag("--metrics-heartbeat",
                                 fmt::format("\"{}\" is shorter than --metrics-resolution {}; use 0 "
                                             "(changes only) or at least the resolution",
                                             flags.heartbeat, flags.resolution));
  }
  o.heartbeat_s = static_cast<std::int64_t>(heartbeat);
  o.start_unix_s = parse_unix_time(flags.start, "--metrics-start");
  o.granularity = flags.per_gpu ? telemetry::Granularity::Gpu : telemetry::Granularity::Node;
  if (flags.format != "openmetrics" && flags.format != "tsdb") {
    throw core::InputError::flag("--metrics-format",
                                 fmt::format("unknown format '{}'; allowed: openmetrics, tsdb", flags.format));
  }
  return o;
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
  if (flags.format == "tsdb") return write_block(dir, write);
  const fs::path path = fs::path(dir) / file;
  const fs::path partial = fs::path(dir) / ("." + file + ".partial");
  const auto t0 = std::chrono::steady_clock::now();
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
  fs::rename(partial, path, ec);
  if (ec)
    throw core::InputError::flag("--metrics-out",
                                 fmt::format("cannot rename into \"{}\": {}", path.string(), ec.message()));
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

std::optional<nlohmann::json> write_cluster_metrics_file(const MetricsFlags& flags,
                                                         const orchestration::ClusterLayout& layout,
                                                         const orchestration::SlurmConfig& config,
                                                         const std::vector<orchestration::JobSpec>& jobs,
                                                         const orchestration::SimulationOptions& simulation) {
  if (flags.out.empty()) return std::nullopt;
  const auto options = resolve_metrics_options(flags, "slurm");
  auto metrics = write_metrics_file(flags, "cluster.om", [&](observability::MetricsOutput& w) {
    return telemetry::write_cluster_metrics(layout, config, jobs, simulation, options, w);
  });
  metrics["job"] = options.job;
  return metrics;
}

std::string metrics_line(const nlohmann::json& m) {
  if (m.value("format", "") == "tsdb") {
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
