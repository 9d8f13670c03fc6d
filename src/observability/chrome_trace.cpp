// Chrome Trace Event Format writer: track assignment, lane splitting and JSON rendering.
#include "observability/chrome_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "observability/json_text.hpp"

namespace fmsim::observability {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Orders `names` with the listed ones first (in list order), then the rest naturally.
std::vector<std::string> ordered_names(const std::set<std::string>& names, const std::vector<std::string>& preferred) {
  std::vector<std::string> result;
  std::set<std::string> placed;
  for (const auto& name : preferred) {
    if (names.contains(name) && placed.insert(name).second) result.push_back(name);
  }
  std::vector<std::string> rest;
  for (const auto& name : names) {
    if (!placed.contains(name)) rest.push_back(name);
  }
  std::sort(rest.begin(), rest.end(), natural_less);
  result.insert(result.end(), rest.begin(), rest.end());
  return result;
}

struct Interval {
  std::int64_t start;
  std::int64_t end;
};

// Assigns each event of one track to a lane such that events within a lane nest properly
// (each one either ends before the next starts or contains it). `order` is sorted by start,
// longer first. Returns the lane per event, indexed like `order`.
std::vector<std::size_t> assign_lanes(const std::vector<engine::TraceEvent>& events,
                                      const std::vector<std::size_t>& order) {
  std::vector<std::vector<Interval>> lanes;  // one stack of open intervals per lane
  std::vector<std::size_t> lane_of(order.size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& e = events[order[k]];
    const Interval span{e.start.ns(), e.start.ns() + e.duration.ns()};
    std::size_t lane = 0;
    for (; lane < lanes.size(); ++lane) {
      auto& stack = lanes[lane];
      while (!stack.empty() && stack.back().end <= span.start) stack.pop_back();
      if (stack.empty() || (stack.back().start <= span.start && span.end <= stack.back().end)) break;
    }
    if (lane == lanes.size()) lanes.emplace_back();
    lanes[lane].push_back(span);
    lane_of[k] = lane;
  }
  return lane_of;
}

struct Track {
  std::string process;
  std::string thread;  // the stream name shown, "<thread> #k" for overflow lanes
  int pid = 0;
  int tid = 0;
};

void append_args(std::string& out, const std::vector<std::pair<std::string, std::string>>& args) {
  out += "{";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ",";
    append_json_string(out, args[i].first);
    out += ":";
    append_json_string(out, args[i].second);
  }
  out += "}";
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      // Compare the digit runs by value: skip leading zeros, then longer is larger, then lexically.
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      std::size_t is = i;
      std::size_t js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      const std::size_t alen = ie - is;
      const std::size_t blen = je - js;
      if (alen != blen) return alen < blen;
      const int cmp = a.compare(is, alen, b, js, blen);
      if (cmp != 0) return cmp < 0;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if ((i < a.size()) != (j < b.size())) return i == a.size();
  return a < b;
}

std::string to_chrome_trace_json(const std::vector<engine::TraceEvent>& events, const TraceMetadata& metadata) {
  FMSIM_CHECK(metadata.display_time_unit == "ms" || metadata.display_time_unit == "ns",
              "display_time_unit must be \"ms\" or \"ns\", got \"" + metadata.display_time_unit + "\"");
  for (const auto& e : events) {
    FMSIM_CHECK(e.duration.ns() >= 0, "trace event \"" + e.name + "\" has a negative duration");
  }

  // Sort by start, longer first (an enclosing span precedes what it contains), then input order.
  std::vector<std::size_t> order(events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (events[a].start != events[b].start) return events[a].start < events[b].start;
    return events[a].duration > events[b].duration;
  });

  // Lanes per (process, thread) track.
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_track;  // positions in `order`
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& e = events[order[k]];
    by_track[{e.process, e.thread}].push_back(k);
  }
  std::vector<std::size_t> lane_at(order.size(), 0);
  std::map<std::pair<std::string, std::string>, std::size_t> lane_count;
  for (const auto& [key, positions] : by_track) {
    std::size_t lanes = 1;
    if (metadata.split_overlapping) {
      std::vector<std::size_t> track_order;
      track_order.reserve(positions.size());
      for (std::size_t pos : positions) track_order.push_back(order[pos]);
      const auto lanes_of = assign_lanes(events, track_order);
      for (std::size_t m = 0; m < positions.size(); ++m) {
        lane_at[positions[m]] = lanes_of[m];
        lanes = std::max(lanes, lanes_of[m] + 1);
      }
    }
    lane_count[key] = lanes;
  }

  // Tracks in display order; pids 1.. per process, tids 1.. unique across the file (Perfetto
  // keys threads by tid, so a tid reused under two pids could merge their names).
  std::set<std::string> process_names;
  std::map<std::string, std::set<std::string>> threads_of;
  for (const auto& e : events) {
    process_names.insert(e.process);
    threads_of[e.process].insert(e.thread);
  }
  std::vector<Track> tracks;
  std::map<std::tuple<std::string, std::string, std::size_t>, std::size_t> track_index;
  const auto processes = ordered_names(process_names, metadata.process_order);
  int next_tid = 1;
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const auto& process = processes[p];
    for (const auto& thread : ordered_names(threads_of[process], metadata.thread_order)) {
      const std::size_t lanes = lane_count[{process, thread}];
      for (std::size_t lane = 0; lane < lanes; ++lane) {
        track_index[{process, thread, lane}] = tracks.size();
        tracks.push_back(Track{.process = process,
                               .thread = lane == 0 ? thread : fmt::format("{} #{}", thread, lane + 1),
                               .pid = static_cast<int>(p) + 1,
                               .tid = next_tid++});
      }
    }
  }

  std::string out;
  out.reserve(256 + events.size() * 160);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  const auto begin_event = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const int pid = static_cast<int>(p) + 1;
    begin_event();
    out +=
        fmt::format("{{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":0,\"args\":{{\"name\":", pid);
    append_json_string(out, processes[p]);
    out += "}}";
    begin_event();
    out += fmt::format(
        "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":0,\"args\":{{\"sort_index\":{}}}}}",
        pid, p);
  }
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    const auto& track = tracks[t];
    begin_event();
    out += fmt::format("{{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},\"args\":{{\"name\":",
                       track.pid, track.tid);
    append_json_string(out, track.thread);
    out += "}}";
    begin_event();
    out += fmt::format(
        "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
        track.pid, track.tid, t);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& e = events[order[k]];
    const auto& track = tracks[track_index.at({e.process, e.thread, lane_at[k]})];
    begin_event();
    out += "{\"name\":";
    append_json_string(out, e.name);
    out += ",\"cat\":";
    append_json_string(out, e.category);
    out += ",\"ph\":\"X\",\"ts\":";
    append_ns_as_us(out, e.start.ns());
    out += ",\"dur\":";
    append_ns_as_us(out, e.duration.ns());
    out += fmt::format(",\"pid\":{},\"tid\":{},\"args\":", track.pid, track.tid);
    append_args(out, e.args);
    out += "}";
  }
  out += "\n],\n\"displayTimeUnit\":";
  append_json_string(out, metadata.display_time_unit);
  out += ",\n\"otherData\":{\"generator\":\"fmsim\"";
  for (const auto& [key, value] : metadata.other_data) {
    if (key == "generator") continue;
    out += ",";
    append_json_string(out, key);
    out += ":";
    append_json_string(out, value);
  }
  out += "}\n}\n";
  return out;
}

}  // namespace fmsim::observability
