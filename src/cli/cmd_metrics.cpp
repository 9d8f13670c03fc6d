// fmsim metrics: recorded time series (--metrics-out DIR) into a real Prometheus: `load` backfills
// them as TSDB blocks (written directly, one block a file; or with promtool tsdb
// create-blocks-from openmetrics), `serve` plays them back on /metrics in accelerated wall-clock
// time for a Prometheus to scrape.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "cli/commands.hpp"
#include "cli/http.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/process.hpp"
#include "config/flag_values.hpp"
#include "config/openmetrics_reader.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "observability/prometheus.hpp"
#include "observability/tsdb_block.hpp"
#include "report/charts.hpp"
#include "report/document.hpp"
#include "telemetry/recording.hpp"
#include "telemetry/run_report.hpp"

namespace fmsim::cli {
namespace {

namespace fs = std::filesystem;

struct LoadFlags {
  std::string dir;
  std::string data;
  std::string promtool;  ///< empty: fmsim writes the blocks itself
  bool json = false;
};

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  while (pos > 0 && lines > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
    --lines;
  }
  return text.substr(pos + 1);
}

std::set<std::string> blocks_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "meta.json")) out.insert(e.path().filename().string());
  }
  return out;
}

// Backfills `file` into a block inside `staging` with promtool (--promtool PROGRAM).
void backfill_with_promtool(const std::string& promtool, const std::string& file, const fs::path& staging) {
  std::error_code ec;
  // promtool reads about 3 MiB/s (a 137 MiB file took 46 s): a minute plus 2 s a MiB is ample,
  // and a promtool that hangs is stopped rather than waited for.
  const double timeout_s = 60.0 + 2.0 * static_cast<double>(fs::file_size(file, ec)) / (1 << 20);
  const auto r = run_process({promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", file, staging.string()},
                             timeout_s);
  if (r.exit_code != 0) {
    throw core::InputError(file, 0, "",
                           fmt::format("promtool tsdb create-blocks-from openmetrics failed (exit {}):\n{}",
                                       r.exit_code, tail_lines(r.output, 8)));
  }
}

// Backfills `file` into one block inside `staging`: read a family at a time, every series with
// the samples the file holds (what promtool makes of it, at whole seconds, in one block rather
// than 2-hour ones). Progress on stderr about every second, and when the file is done.
void backfill(const std::string& file, const fs::path& staging) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  const std::string name = fs::path(file).filename().string();
  const auto t0 = std::chrono::steady_clock::now();
  auto shown = t0;
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const auto mib = [](double bytes) { return bytes / (1 << 20); };
  std::uint64_t series = 0;
  try {
    observability::TsdbBlockWriter writer(staging.string());
    // Every series of the file, to refuse one written twice (in two families, or with its labels
    // in another order): its name and sorted labels, NUL-separated.
    std::unordered_set<std::string> seen;
    config::stream_openmetrics(
        file,
        [&](telemetry::RecordedFamily&& family) {
          for (auto& s : family.series) {
            auto [metric, labels] = config::split_series_key(s.name_and_labels, file);
            if (!observability::is_valid_metric_name(metric)) {
              throw core::InputError(file, 0, "", fmt::format("\"{}\" is not a valid metric name", metric));
            }
            std::erase_if(labels, [](const auto& l) { return l.second.empty(); });  // as Prometheus drops them
            for (const auto& [key, value] : labels) {
              if (!observability::is_valid_label_name(key) || key == "__name__") {
                throw core::InputError(
                    file, 0, "",
                    fmt::format("series \"{}\": \"{}\" is not a valid label name", s.name_and_labels, key));
              }
            }
            auto sorted = labels;
            std::sort(sorted.begin(), sorted.end());
            for (std::size_t i = 1; i < sorted.size(); ++i) {
              if (sorted[i].first == sorted[i - 1].first) {
                throw core::InputError(
                    file, 0, "",
                    fmt::format("series \"{}\" names label \"{}\" twice", s.name_and_labels, sorted[i].first));
              }
            }
            std::string key = metric;
            for (const auto& [k, v] : sorted) key += '\0' + k + '=' + v;
            if (!seen.insert(std::move(key)).second) {
              throw core::InputError(
                  file, 0, "",
                  fmt::format("series \"{}\" appears twice (in another family or with its labels in another order)",
                              s.name_and_labels));
            }
            writer.raw_series(metric, labels, s.timestamps_s, s.values);
            ++series;
          }
        },
        [&](std::uint64_t bytes) {
          const auto now = std::chrono::steady_clock::now();
          if (now - shown < std::chrono::seconds(1) || bytes >= size) return;
          shown = now;
          std::cerr << fmt::format("metrics load: {}: {:.0f}% ({:.0f} of {:.0f} MiB, {:.1f} s)\n", name,
                                   size > 0 ? 100.0 * static_cast<double>(bytes) / static_cast<double>(size) : 100.0,
                                   mib(static_cast<double>(bytes)), mib(static_cast<double>(size)), elapsed());
        });
    if (writer.samples_written() == 0) {  // no block for a file without samples (the writer removes its folder)
      std::cerr << fmt::format("metrics load: {}: no samples, no block\n", name);
      return;
    }
    const std::string block = writer.finish();
    std::cerr << fmt::format("metrics load: {}: {:.1f} MiB, {} series, {} samples into block {} ({:.1f} s)\n", name,
                             mib(static_cast<double>(size)), core::format_thousands(static_cast<double>(series)),
                             core::format_thousands(static_cast<double>(writer.samples_written())),
                             fs::path(block).filename().string(), elapsed());
  } catch (const observability::WriteError& err) {
    throw core::InputError::flag("--prometheus-data", err.what());
  }
}

void load(const LoadFlags& f) {
  const auto files = config::metrics_files_in(f.dir, "DIR");
  if (!f.promtool.empty() && !on_path(f.promtool)) {
    throw core::InputError::flag("--promtool", fmt::format("\"{}\" not found on PATH; install the Debian package "
                                                           "prometheus (it ships promtool), or leave --promtool out "
                                                           "and fmsim writes the blocks itself",
                                                           f.promtool));
  }
  std::error_code ec;
  fs::create_directories(f.data, ec);
  if (!fs::is_directory(f.data)) {
    throw core::InputError::flag("--prometheus-data", fmt::format("cannot create directory \"{}\"", f.data));
  }
  // Backfill into a hidden staging folder inside the data directory (Prometheus opens only
  // block folders named by ULID), then move the finished blocks in: a failure leaves no block.
  std::string pattern = (fs::path(f.data) / ".fmsim-load-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw core::InputError::flag("--prometheus-data", fmt::format("cannot write into \"{}\"", f.data));
  }
  const fs::path staging = pattern;
  const auto cleanup = [&] { fs::remove_all(staging, ec); };
  // Whatever ends this function (an error, a promtool that never ends) removes the staging folder.
  struct RemoveStaging {
    const fs::path& dir;
    ~RemoveStaging() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_staging{staging};
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& file : files) {
    if (f.promtool.empty()) {
      backfill(file, staging);
    } else {
      backfill_with_promtool(f.promtool, file, staging);
    }
  }
  std::int64_t min_ms = 0, max_ms = 0;
  std::vector<std::string> moved;
  for (const auto& block : blocks_in(staging)) {
    std::ifstream meta(staging / block / "meta.json");
    const auto j = nlohmann::json::parse(meta, nullptr, false);
    if (!j.is_discarded() && j.contains("minTime")) {
      const auto lo = j["minTime"].get<std::int64_t>(), hi = j["maxTime"].get<std::int64_t>();
      min_ms = moved.empty() ? lo : std::min(min_ms, lo);
      max_ms = moved.empty() ? hi : std::max(max_ms, hi);
    }
    // fmsim names a block after its first sample and its contents: a block already there holds
    // the same series (the same file loaded before) and is kept as it is.
    if (fs::exists(fs::path(f.data) / block / "meta.json")) {
      moved.push_back(block);
      continue;
    }
    fs::rename(staging / block, fs::path(f.data) / block, ec);
    if (ec) {
      cleanup();
      throw core::InputError::flag("--prometheus-data",
                                   fmt::format("cannot move block {} into \"{}\": {}", block, f.data, ec.message()));
    }
    moved.push_back(block);
  }
  cleanup();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (f.json) {
    nlohmann::json out{{"data", f.data},        {"files", files},        {"blocks", moved},
                       {"min_time_ms", min_ms}, {"max_time_ms", max_ms}, {"seconds", seconds}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("Loaded {} file{} into {}: {} block{}, {} .. {} ({:.1f} s)\n", files.size(),
                           files.size() == 1 ? "" : "s", f.data, moved.size(), moved.size() == 1 ? "" : "s",
                           format_unix_time(min_ms / 1000), format_unix_time(max_ms / 1000), seconds);
  std::cout << fmt::format(
      "Open it with a stock Prometheus (blocks are kept while younger than the retention, counted from the\n"
      "newest block):\n"
      "  prometheus --storage.tsdb.path={} --storage.tsdb.retention.time=10y --config.file=prometheus.yml\n"
      "and query at those times (Graph tab: set the end time to {}).\n",
      f.data, format_unix_time(max_ms / 1000));
}

struct ServeFlags {
  std::string dir;
  std::string listen = "127.0.0.1:9464";
  double speed = 60.0;
  std::string from;
};

void serve(const ServeFlags& f) {
  const auto files = config::metrics_files_in(f.dir, "DIR");
  auto recording = std::make_shared<telemetry::Recording>();
  for (const auto& file : files) config::read_openmetrics(file, *recording);
  if (recording->samples == 0) throw core::InputError::flag("DIR", fmt::format("\"{}\" holds no samples", f.dir));
  if (!(f.speed > 0.0)) throw core::InputError::flag("--speed", "must be positive (simulated seconds per second)");
  const auto colon = f.listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      port = std::stoi(f.listen.substr(colon + 1));
    } catch (const std::exception&) {
      port = -1;
    }
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535) {
    throw core::InputError::flag("--listen", fmt::format("\"{}\" is not HOST:PORT (e.g. 127.0.0.1:9464; port 0 "
                                                         "picks a free one)",
                                                         f.listen));
  }
  const std::string host = f.listen.substr(0, colon);
  const std::int64_t begin = f.from.empty() ? recording->first_timestamp_s : config::parse_unix_time(f.from, "--from");
  const std::int64_t end = recording->last_timestamp_s;
  const auto started = std::chrono::steady_clock::now();
  const double speed = f.speed;
  const auto now_simulated = [=] {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return std::min(end, begin + static_cast<std::int64_t>(wall * speed));
  };
  std::size_t series = 0;
  for (const auto& fam : recording->families) series += fam.series.size();
  serve_metrics(
      host, port, [recording, now_simulated] { return telemetry::exposition_at(*recording, now_simulated()); },
      [&](int bound) {
        std::cout << fmt::format(
                         "Serving {} series from {} on http://{}:{}/metrics\n"
                         "simulated {} .. {} at {}x ({} s of wall time); after the end the last values stay.\n",
                         core::format_thousands(static_cast<double>(series)), f.dir, host, bound,
                         format_unix_time(begin), format_unix_time(end), speed,
                         static_cast<std::int64_t>(static_cast<double>(end - begin) / speed))
                  << std::flush;
      },
      "--listen");
}

struct ReportFlags {
  std::string dir;
  std::string html;
  std::string svg;
};

void make_report(const ReportFlags& f) {
  if (f.html.empty() && f.svg.empty()) throw core::InputError::flag("--html", "give --html FILE, --svg FILE or both");
  const auto files = config::metrics_files_in(f.dir, "DIR");
  // One family at a time, keeping only the series the report draws: a recording of any size is
  // reported in the memory of those series (the whole file was held before).
  telemetry::Recording recording;
  for (const auto& file : files) {
    config::stream_openmetrics(file, [&](telemetry::RecordedFamily&& family) {
      telemetry::keep_for_report(recording, std::move(family), file);
    });
  }
  if (recording.samples == 0) throw core::InputError::flag("DIR", fmt::format("\"{}\" holds no samples", f.dir));
  if (!f.html.empty()) {
    write_file_atomically(f.html, report::render_html(telemetry::run_report(recording, f.dir)), "--html");
    std::cout << fmt::format("Wrote {}\n", f.html);
  }
  if (!f.svg.empty()) {
    const auto panel = telemetry::throughput_panel(recording);
    if (panel.series.empty()) throw core::InputError::flag("--svg", "the recording holds no fmsim_tokens_per_second");
    write_file_atomically(f.svg, report::render_svg(panel, "throughput") + "\n", "--svg");
    std::cout << fmt::format("Wrote {}\n", f.svg);
  }
}

}  // namespace

void add_metrics_command(CLI::App& app, Context& /*ctx*/) {
  auto* metrics = app.add_subcommand(
      "metrics", "Put simulated time series (--metrics-out DIR) into a real Prometheus: backfill or scrape");
  metrics->require_subcommand(1);
  metrics->footer(
      "`fmsim run ... --metrics-out DIR` writes DIR/run.om (OpenMetrics with timestamps; names of dcgm-exporter,\n"
      "the EFA node exporter, node_exporter and fmsim_* training progress: docs/models/observability.md).\n\n"
      "Examples:\n"
      "  fmsim run --model llama3.1-8b --cluster p5.48xlarge:16 --tp 2 --gbs 256 --duration 3d --metrics-out m\n"
      "  fmsim metrics load m --prometheus-data prom-data\n"
      "  fmsim metrics serve m --listen 127.0.0.1:9464 --speed 600\n"
      "  fmsim metrics report m --html run.html");

  auto lf = std::make_shared<LoadFlags>();
  auto* l = metrics->add_subcommand("load", "Backfill DIR's series into Prometheus TSDB blocks");
  l->add_option("DIR", lf->dir, "Folder written by --metrics-out (every *.om and *.prom file is loaded)")->required();
  l->add_option("--prometheus-data", lf->data, "Prometheus data directory (--storage.tsdb.path) to add blocks to")
      ->required()
      ->type_name("PATH");
  l->add_option("--promtool", lf->promtool,
                "Backfill with this promtool (tsdb create-blocks-from openmetrics: 2-hour blocks, 30x to 800x "
                "slower) instead of fmsim's own block writer")
      ->type_name("PROGRAM");
  l->add_flag("--json", lf->json, "Print JSON");
  l->footer(
      "Writes each file as one Prometheus TSDB block (the samples the file holds, at whole seconds; what\n"
      "`promtool tsdb create-blocks-from openmetrics` makes of it, without its 2-hour split) into a staging\n"
      "folder and moves the blocks into PATH (a failure leaves none; a block already there is kept).\n"
      "Progress goes to stderr. A running Prometheus picks new blocks up at its next reload; start one on\n"
      "PATH with --storage.tsdb.retention.time long enough to keep them.\n\n"
      "Example:\n"
      "  fmsim metrics load m --prometheus-data /var/lib/prometheus/metrics2");
  l->callback([lf] { load(*lf); });

  auto sf = std::make_shared<ServeFlags>();
  auto* s = metrics->add_subcommand("serve", "Play DIR's series back live on /metrics for a Prometheus to scrape");
  s->add_option("DIR", sf->dir, "Folder written by --metrics-out")->required();
  s->add_option("--listen", sf->listen, "HOST:PORT to listen on (port 0 picks a free one)")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  s->add_option("--speed", sf->speed, "Simulated seconds per wall-clock second")->capture_default_str();
  s->add_option("--from", sf->from,
                "Simulated time to start at (ISO 8601 UTC or Unix seconds; default the first "
                "sample)")
      ->type_name("TIME");
  s->footer(
      "Each scrape of /metrics returns every series' latest value at the current simulated time (text format\n"
      "0.0.4, no timestamps: Prometheus stamps them), so dashboards show the run as it unfolds. Runs until\n"
      "stopped (Ctrl-C). Listens on 127.0.0.1 unless told otherwise.\n\n"
      "Example (scrape config: targets ['127.0.0.1:9464']):\n"
      "  fmsim metrics serve m --speed 600");
  s->callback([sf] { serve(*sf); });

  auto rf = std::make_shared<ReportFlags>();
  auto* r = metrics->add_subcommand("report",
                                    "Draw DIR's series as an offline HTML report (the training dashboard's panels)");
  r->add_option("DIR", rf->dir, "Folder written by --metrics-out")->required();
  r->add_option("--html", rf->html, "HTML file to write (self-contained, inline SVG charts)")
      ->type_name("FILE")
      ->check(output_file());
  r->add_option("--svg", rf->svg, "Also write the throughput panel alone as an SVG file")
      ->type_name("FILE")
      ->check(output_file());
  r->footer(
      "Throughput, MFU and ETTR, step time, GPU activity, power and memory of the first node over the hours\n"
      "of the run, with checkpoint, failure and restart counts: a look at a simulated run without Grafana.\n\n"
      "Example:\n"
      "  fmsim metrics report m --html run.html");
  r->callback([rf] { make_report(*rf); });
}

}  // namespace fmsim::cli
