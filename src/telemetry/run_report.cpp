// Offline report of a recorded run (see run_report.hpp).
#include "telemetry/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::telemetry {
namespace {

constexpr std::size_t kMaxPoints = 240;

const RecordedFamily* find(const Recording& rec, const std::string& name) {
  for (const auto& f : rec.families) {
    if (f.name == name && !f.series.empty()) return &f;
  }
  return nullptr;
}

// The series over hours since `t0`: a step function (a gauge holds its value until the next
// sample) when it has at most kMaxPoints samples; else, in each of kMaxPoints equal time buckets,
// the bucket's first, lowest, highest and last samples in time order (M4 aggregation, Jugel et al.,
// VLDB 2014): the line reaches every bucket's minimum and maximum, so a single sample of an
// outage (throughput 0) shows at its depth, where a mean over the bucket would hide it.
report::LineSeries steps(const RecordedSeries& s, std::int64_t t0, const std::string& name, double scale) {
  report::LineSeries out{.name = name, .x = {}, .y = {}};
  const std::size_t n = s.values.size();
  const auto hours = [&](double t) { return (t - static_cast<double>(t0)) / 3600.0; };
  if (n <= kMaxPoints || s.timestamps_s.back() == s.timestamps_s.front()) {
    for (std::size_t i = 0; i < n; ++i) {
      const double x = hours(static_cast<double>(s.timestamps_s[i]));
      if (!out.y.empty()) {
        out.x.push_back(x);
        out.y.push_back(out.y.back());
      }
      out.x.push_back(x);
      out.y.push_back(s.values[i] * scale);
    }
    return out;
  }
  const double begin = static_cast<double>(s.timestamps_s.front());
  const double width = static_cast<double>(s.timestamps_s.back() - s.timestamps_s.front()) / kMaxPoints;
  const auto bucket = [&](std::size_t i) {
    return std::min(kMaxPoints - 1, static_cast<std::size_t>((static_cast<double>(s.timestamps_s[i]) - begin) / width));
  };
  // NaN (a missing value) never wins a comparison: the extremes are of the numbers in the bucket.
  const auto lower = [&](std::size_t i, std::size_t j) { return s.values[i] < s.values[j]; };
  for (std::size_t first = 0; first < n;) {
    std::size_t last = first;
    while (last + 1 < n && bucket(last + 1) == bucket(first)) ++last;
    std::size_t lo = first, hi = first;
    for (std::size_t i = first; i <= last; ++i) {
      if (lower(i, lo) || std::isnan(s.values[lo])) lo = i;
      if (lower(hi, i) || std::isnan(s.values[hi])) hi = i;
    }
    std::size_t picks[] = {first, lo, hi, last};
    std::sort(std::begin(picks), std::end(picks));
    for (std::size_t k = 0; k < 4; ++k) {
      if (k > 0 && picks[k] == picks[k - 1]) continue;
      out.x.push_back(hours(static_cast<double>(s.timestamps_s[picks[k]])));
      out.y.push_back(s.values[picks[k]] * scale);
    }
    first = last + 1;
  }
  return out;
}

void add_line(report::LineChart& chart, const Recording& rec, const std::string& family, const std::string& name,
              double scale) {
  const auto* f = find(rec, family);
  if (f == nullptr) return;
  chart.series.push_back(steps(f->series.front(), rec.first_timestamp_s, name, scale));
  // Hundreds of points (a long run's buckets): the line alone, markers would hide it.
  if (f->series.front().values.size() > kMaxPoints) chart.markers = false;
}

report::LineChart chart(std::string id, std::string title, std::string y_label, std::string y_unit) {
  report::LineChart c;
  c.id = std::move(id);
  c.title = std::move(title);
  c.x_label = "hours of the run";
  c.x_unit = "h";
  c.y_label = std::move(y_label);
  c.y_unit = std::move(y_unit);
  return c;
}

double last_total(const Recording& rec, const std::string& family) {
  const auto* f = find(rec, family);
  if (f == nullptr) return 0.0;
  double sum = 0.0;
  for (const auto& s : f->series) sum += s.values.back();
  return sum;
}

// What run_report reads of a family: every series (the totals it sums, the failures table), the
// first series (the charts: "of the first node"), or nothing.
enum class ReportUse { None, FirstSeries, EverySeries };

ReportUse report_use(std::string_view family) {
  static constexpr std::string_view kEvery[] = {"fmsim_tokens_total", "fmsim_checkpoint_saves_total",
                                                "fmsim_failures_total", "fmsim_restarts_total"};
  static constexpr std::string_view kFirst[] = {"fmsim_tokens_per_second",
                                                "fmsim_mfu_ratio",
                                                "fmsim_ettr_ratio",
                                                "fmsim_step_time_seconds",
                                                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                                                "DCGM_FI_PROF_SM_ACTIVE",
                                                "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                                "DCGM_FI_DEV_POWER_USAGE",
                                                "DCGM_FI_DEV_FB_USED"};
  if (std::find(std::begin(kEvery), std::end(kEvery), family) != std::end(kEvery)) return ReportUse::EverySeries;
  if (std::find(std::begin(kFirst), std::end(kFirst), family) != std::end(kFirst)) return ReportUse::FirstSeries;
  return ReportUse::None;
}

// Appends `later` (the same series, from a later file) to `kept`; its timestamps must go on
// increasing, as within one file.
void continue_series(RecordedSeries& kept, const RecordedSeries& later, const std::string& path) {
  if (!later.timestamps_s.empty() && !kept.timestamps_s.empty() &&
      later.timestamps_s.front() <= kept.timestamps_s.back()) {
    throw core::InputError(path, 0, "",
                           fmt::format("timestamps of \"{}\" must increase ({} after {})", later.name_and_labels,
                                       later.timestamps_s.front(), kept.timestamps_s.back()));
  }
  kept.timestamps_s.insert(kept.timestamps_s.end(), later.timestamps_s.begin(), later.timestamps_s.end());
  kept.values.insert(kept.values.end(), later.values.begin(), later.values.end());
}

}  // namespace

void keep_for_report(Recording& rec, RecordedFamily&& family, const std::string& path) {
  std::uint64_t series_count = family.series.size();
  for (const auto& s : family.series) {
    if (s.timestamps_s.empty()) continue;
    // A series' timestamps increase (the reader refuses others): its span is front to back.
    if (rec.samples == 0) {
      rec.first_timestamp_s = s.timestamps_s.front();
      rec.last_timestamp_s = s.timestamps_s.back();
    } else {
      rec.first_timestamp_s = std::min(rec.first_timestamp_s, s.timestamps_s.front());
      rec.last_timestamp_s = std::max(rec.last_timestamp_s, s.timestamps_s.back());
    }
    rec.samples += s.timestamps_s.size();
  }
  const auto use = report_use(family.name);
  auto kept = std::find_if(rec.families.begin(), rec.families.end(),
                           [&](const RecordedFamily& f) { return f.name == family.name; });
  if (use == ReportUse::None || (use == ReportUse::FirstSeries && kept != rec.families.end())) {
    // Nothing of it is drawn, or its first series came from an earlier file; a series of that
    // first one's name would continue it.
    if (use == ReportUse::FirstSeries) {
      auto& first = kept->series.front();
      for (auto& s : family.series) {
        if (s.name_and_labels != first.name_and_labels) continue;
        continue_series(first, s, path);
        --series_count;
      }
    }
    rec.series_left_out += series_count;
    return;
  }
  if (use == ReportUse::FirstSeries && family.series.size() > 1) {
    rec.series_left_out += family.series.size() - 1;
    family.series.resize(1);
  }
  if (kept == rec.families.end()) {
    rec.families.push_back(std::move(family));
    return;
  }
  for (auto& s : family.series) {  // EverySeries from a later file: series continue or are added
    auto same = std::find_if(kept->series.begin(), kept->series.end(),
                             [&](const RecordedSeries& k) { return k.name_and_labels == s.name_and_labels; });
    if (same == kept->series.end()) {
      kept->series.push_back(std::move(s));
      continue;
    }
    continue_series(*same, s, path);
  }
}

report::LineChart throughput_panel(const Recording& rec) {
  auto c = chart("throughput", "Throughput", "tokens/s", "tokens/s");
  add_line(c, rec, "fmsim_tokens_per_second", "tokens/s", 1.0);
  return c;
}

report::Document run_report(const Recording& rec, const std::string& source) {
  report::Document doc;
  std::string job;
  if (const auto* f = find(rec, "fmsim_step_time_seconds")) {
    const auto& key = f->series.front().name_and_labels;
    const auto p = key.find("job=\"");
    if (p != std::string::npos) job = key.substr(p + 5, key.find('"', p + 5) - p - 5);
  }
  doc.title = job.empty() ? "Simulated run" : "Simulated run: " + job;
  std::size_t series = rec.series_left_out;
  for (const auto& f : rec.families) series += f.series.size();
  doc.subtitle = fmt::format("{} series, {} samples from {}", core::format_thousands(static_cast<double>(series)),
                             core::format_thousands(static_cast<double>(rec.samples)), source);
  report::Section progress{.title = "Training progress", .blocks = {}};
  progress.add(report::KeyFigures{{
      {"hours", fmt::format("{:.1f}", static_cast<double>(rec.last_timestamp_s - rec.first_timestamp_s) / 3600.0)},
      {"tokens", core::format_count(last_total(rec, "fmsim_tokens_total"))},
      {"checkpoint saves", fmt::format("{:.0f}", last_total(rec, "fmsim_checkpoint_saves_total"))},
      {"failures", fmt::format("{:.0f}", last_total(rec, "fmsim_failures_total"))},
      {"restarts", fmt::format("{:.0f}", last_total(rec, "fmsim_restarts_total"))},
  }});
  progress.add(throughput_panel(rec));
  auto ratios = chart("mfu-ettr", "MFU and ETTR", "%", "%");
  add_line(ratios, rec, "fmsim_mfu_ratio", "MFU", 100.0);
  add_line(ratios, rec, "fmsim_ettr_ratio", "ETTR so far", 100.0);
  progress.add(ratios);
  auto step = chart("step-time", "Step time", "seconds", "s");
  add_line(step, rec, "fmsim_step_time_seconds", "step time", 1.0);
  progress.add(step);
  doc.sections.push_back(progress);

  report::Section gpus{.title = "GPUs of the first node (dcgm-exporter)", .blocks = {}};
  auto activity = chart("activity", "GPU activity", "%", "%");
  add_line(activity, rec, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "graphics engine", 100.0);
  add_line(activity, rec, "DCGM_FI_PROF_SM_ACTIVE", "SM active", 100.0);
  add_line(activity, rec, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor pipe", 100.0);
  gpus.add(activity);
  auto power = chart("power", "Power draw", "W per GPU", "W");
  add_line(power, rec, "DCGM_FI_DEV_POWER_USAGE", "power", 1.0);
  gpus.add(power);
  auto memory = chart("memory", "Memory used", "GiB per GPU", "GiB");
  add_line(memory, rec, "DCGM_FI_DEV_FB_USED", "framebuffer used", 1.0 / 1024.0);
  gpus.add(memory);
  doc.sections.push_back(gpus);

  if (const auto* f = find(rec, "fmsim_failures_total")) {
    report::Section failures{.title = "Failures by cause", .blocks = {}};
    report::Table table;
    table.header = {"series", "interruptions"};
    for (const auto& s : f->series) table.rows.push_back({s.name_and_labels, fmt::format("{:.0f}", s.values.back())});
    failures.add(table);
    doc.sections.push_back(failures);
  }
  // Drop charts with no series (families the recording does not hold).
  for (auto& section : doc.sections) {
    std::erase_if(section.blocks, [](const report::Block& b) {
      const auto* line = std::get_if<report::LineChart>(&b);
      return line != nullptr && line->series.empty();
    });
  }
  return doc;
}

}  // namespace fmsim::telemetry
