// Chrome/Perfetto trace JSON: structure, exact timestamps, track naming and ordering, escaping.
#include "observability/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace fmsim::observability {
namespace {

using engine::TraceEvent;
using nlohmann::json;

TraceEvent event(std::string process, std::string thread, std::string name, std::int64_t start_ns,
                 std::int64_t duration_ns, std::string category = "compute") {
  return TraceEvent{.process = std::move(process),
                    .thread = std::move(thread),
                    .name = std::move(name),
                    .category = std::move(category),
                    .start = core::SimTime::from_ns(start_ns),
                    .duration = core::SimTime::from_ns(duration_ns),
                    .args = {}};
}

std::vector<TraceEvent> sample_events() {
  std::vector<TraceEvent> events;
  for (int stage = 0; stage < 3; ++stage) {
    const std::string process = "pp stage " + std::to_string(stage) + " (rank " + std::to_string(stage * 8) + ")";
    events.push_back(event(process, "compute", "fwd mb0", 1000 * stage, 5000));
    events.push_back(event(process, "tp", "all_reduce 64 MiB", 1000 * stage + 2000, 1500, "comm"));
    events.push_back(event(process, "dp", "reduce_scatter 1 GiB", 20000 + stage, 7000, "comm"));
  }
  events[0].args = {{"layers", "0-9"}, {"flops", "1.2e12"}};
  return events;
}

// A parsed trace: the X events and the names given to each pid and (pid, tid).
struct Parsed {
  json doc;
  std::vector<json> slices;
  std::map<int, std::string> process_names;
  std::map<int, int> process_sort;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<std::pair<int, int>, int> thread_sort;
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = json::parse(text);
  for (const auto& e : p.doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      p.slices.push_back(e);
      continue;
    }
    EXPECT_EQ(ph, "M");
    const std::string name = e.at("name");
    const int pid = e.at("pid");
    const int tid = e.at("tid");
    if (name == "process_name") p.process_names[pid] = e.at("args").at("name");
    if (name == "process_sort_index") p.process_sort[pid] = e.at("args").at("sort_index");
    if (name == "thread_name") p.thread_names[{pid, tid}] = e.at("args").at("name");
    if (name == "thread_sort_index") p.thread_sort[{pid, tid}] = e.at("args").at("sort_index");
  }
  return p;
}

// Trace Event Format: a complete event has ph "X", a name, integer pid and tid, and numeric ts and
// dur in microseconds; every pid and (pid, tid) used is named by a process_name / thread_name
// metadata event, and has a sort index, so each stream is one named, ordered track.
TEST(ChromeTrace, EveryCompleteEventHasFieldsAndNamedTracks) {
  const Parsed p = parse(to_chrome_trace_json(sample_events()));
  ASSERT_EQ(p.slices.size(), 9u);
  for (const auto& e : p.slices) {
    ASSERT_TRUE(e.at("name").is_string());
    ASSERT_TRUE(e.at("cat").is_string());
    ASSERT_TRUE(e.at("pid").is_number_integer());
    ASSERT_TRUE(e.at("tid").is_number_integer());
    ASSERT_TRUE(e.at("ts").is_number());
    ASSERT_TRUE(e.at("dur").is_number());
    ASSERT_TRUE(e.at("args").is_object());
    const int pid = e.at("pid");
    const int tid = e.at("tid");
    EXPECT_TRUE(p.process_names.contains(pid)) << e;
    EXPECT_TRUE(p.process_sort.contains(pid)) << e;
    EXPECT_TRUE(p.thread_names.contains({pid, tid})) << e;
    EXPECT_TRUE(p.thread_sort.contains({pid, tid})) << e;
  }
  EXPECT_EQ(p.process_names.size(), 3u);
  EXPECT_EQ(p.thread_names.size(), 9u);
  EXPECT_EQ(p.doc.at("displayTimeUnit"), "ms");
  EXPECT_EQ(p.doc.at("otherData").at("generator"), "fmsim");
}

// ts and dur are microseconds written exactly from nanoseconds: 1,234,567 ns = 1234.567 us,
// 2,000 ns = 2 us, 1 ns = 0.001 us, and a 1e15 ns (11.6 days) start keeps its last nanosecond.
TEST(ChromeTrace, TimesAreExactMicroseconds) {
  const std::vector<TraceEvent> events = {event("p", "compute", "a", 1234567, 2000),
                                          event("p", "compute", "b", 1'000'000'000'000'001, 1)};
  const std::string text = to_chrome_trace_json(events);
  EXPECT_NE(text.find("\"ts\":1234.567,\"dur\":2,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":1000000000000.001,\"dur\":0.001,"), std::string::npos) << text;
  const Parsed p = parse(text);
  EXPECT_DOUBLE_EQ(p.slices[0].at("ts").get<double>(), 1234.567);
}

// Tracks with the same thread name in different processes get different tids (tids are unique
// across the file; Perfetto keys threads by tid).
TEST(ChromeTrace, TidsAreUniqueAcrossProcesses) {
  const Parsed p = parse(to_chrome_trace_json(sample_events()));
  std::set<int> tids;
  for (const auto& [key, name] : p.thread_names) EXPECT_TRUE(tids.insert(key.second).second) << name;
}

// Processes sort naturally ("rank 2" before "rank 10"); threads follow the preferred stream order
// compute, tp, ..., dp, then the rest naturally; process_order overrides.
TEST(ChromeTrace, TracksAreSortedNaturallyAndByPreferredOrder) {
  std::vector<TraceEvent> events = {event("rank 10", "dp", "x", 0, 1), event("rank 2", "zeta", "x", 0, 1),
                                    event("rank 2", "dp", "x", 0, 1), event("rank 2", "compute", "x", 0, 1),
                                    event("rank 2", "alpha", "x", 0, 1)};
  Parsed p = parse(to_chrome_trace_json(events));
  std::map<int, std::string> by_sort;
  for (const auto& [pid, name] : p.process_names) by_sort[p.process_sort.at(pid)] = name;
  EXPECT_EQ(by_sort[0], "rank 2");
  EXPECT_EQ(by_sort[1], "rank 10");
  std::map<int, std::string> threads;
  for (const auto& [key, name] : p.thread_names) {
    if (p.process_names.at(key.first) == "rank 2") threads[p.thread_sort.at(key)] = name;
  }
  std::vector<std::string> order;
  for (const auto& [index, name] : threads) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string>{"compute", "dp", "alpha", "zeta"}));

  TraceMetadata metadata;
  metadata.process_order = {"rank 10"};
  p = parse(to_chrome_trace_json(events, metadata));
  for (const auto& [pid, name] : p.process_names) {
    EXPECT_EQ(p.process_sort.at(pid), name == "rank 10" ? 0 : 1);
  }
}

// Digit runs compare by numeric value ("2" < "10"), other characters bytewise; a prefix sorts first.
TEST(ChromeTrace, NaturalLessComparesNumbersByValue) {
  EXPECT_TRUE(natural_less("rank 2", "rank 10"));
  EXPECT_FALSE(natural_less("rank 10", "rank 2"));
  EXPECT_TRUE(natural_less("stage 1 rank 8", "stage 1 rank 16"));
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_TRUE(natural_less("rank", "rank 0"));
  EXPECT_FALSE(natural_less("x", "x"));
  // Equal values with different spellings still order strictly (total order).
  EXPECT_NE(natural_less("r01", "r1"), natural_less("r1", "r01"));
}

// Within one track, slices must nest (Perfetto drops partially overlapping ones): [0,10) and
// [5,15) overlap without nesting, so the second moves to "compute #2"; [1,3) nests in [0,10) and
// stays. After splitting, every track's slices nest properly.
TEST(ChromeTrace, PartialOverlapsMoveToExtraTracks) {
  const std::vector<TraceEvent> events = {event("p", "compute", "outer", 0, 10000),
                                          event("p", "compute", "other", 5000, 10000),
                                          event("p", "compute", "inner", 1000, 2000)};
  const Parsed p = parse(to_chrome_trace_json(events));
  std::map<std::string, std::string> track_of;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  for (const auto& e : p.slices) {
    const std::pair<int, int> key{e.at("pid"), e.at("tid")};
    track_of[e.at("name")] = p.thread_names.at(key);
    spans[key].push_back({e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>()});
  }
  EXPECT_EQ(track_of["outer"], "compute");
  EXPECT_EQ(track_of["inner"], "compute");
  EXPECT_EQ(track_of["other"], "compute #2");
  for (const auto& [key, list] : spans) {
    for (const auto& a : list) {
      for (const auto& b : list) {
        const bool disjoint = a.second <= b.first || b.second <= a.first;
        const bool nested =
            (a.first <= b.first && b.second <= a.second) || (b.first <= a.first && a.second <= b.second);
        EXPECT_TRUE(disjoint || nested);
      }
    }
  }

  TraceMetadata keep;
  keep.split_overlapping = false;
  EXPECT_EQ(parse(to_chrome_trace_json(events, keep)).thread_names.size(), 1u);
}

// Slices are written by start time, longer first on equal starts (parents before children).
TEST(ChromeTrace, SlicesAreSortedByStartThenLongerFirst) {
  const std::vector<TraceEvent> events = {event("p", "compute", "late", 9000, 1), event("p", "compute", "child", 0, 10),
                                          event("p", "compute", "parent", 0, 5000)};
  const Parsed p = parse(to_chrome_trace_json(events));
  ASSERT_EQ(p.slices.size(), 3u);
  EXPECT_EQ(p.slices[0].at("name"), "parent");
  EXPECT_EQ(p.slices[1].at("name"), "child");
  EXPECT_EQ(p.slices[2].at("name"), "late");
}

// JSON string escaping: quotes, backslashes, newlines and control characters survive a round
// trip; invalid UTF-8 bytes become U+FFFD; valid multi-byte UTF-8 passes through.
TEST(ChromeTrace, EscapesStrings) {
  TraceEvent e = event("rank \"0\"\\", "compute\n", "fwd\t\x01 \xE2\x86\x92 end", 0, 1);
  e.name += "\xFF";
  e.args = {{"k\"", "v\\\n"}};
  TraceMetadata metadata;
  metadata.other_data = {{"command", "fmsim train --model \"x\""}};
  const Parsed p = parse(to_chrome_trace_json({e}, metadata));
  ASSERT_EQ(p.slices.size(), 1u);
  EXPECT_EQ(p.slices[0].at("name"), "fwd\t\x01 \xE2\x86\x92 end\xEF\xBF\xBD");
  EXPECT_EQ(p.slices[0].at("args").at("k\""), "v\\\n");
  EXPECT_EQ(p.process_names.begin()->second, "rank \"0\"\\");
  EXPECT_EQ(p.thread_names.begin()->second, "compute\n");
  EXPECT_EQ(p.doc.at("otherData").at("command"), "fmsim train --model \"x\"");
}

// Same input, same bytes; with distinct start times the output does not depend on input order.
TEST(ChromeTrace, IsDeterministic) {
  auto events = sample_events();
  const std::string first = to_chrome_trace_json(events);
  EXPECT_EQ(first, to_chrome_trace_json(events));
  std::reverse(events.begin(), events.end());
  EXPECT_EQ(first, to_chrome_trace_json(events));
}

// No events: still a valid object with an empty traceEvents array.
TEST(ChromeTrace, EmptyTraceIsValidJson) {
  const Parsed p = parse(to_chrome_trace_json({}));
  EXPECT_TRUE(p.doc.at("traceEvents").empty());
}

// A negative duration and a display unit other than "ms"/"ns" are programming errors.
TEST(ChromeTrace, RejectsNegativeDurationAndBadDisplayUnit) {
  EXPECT_THROW(to_chrome_trace_json({event("p", "t", "n", 10, -1)}), core::InternalError);
  TraceMetadata metadata;
  metadata.display_time_unit = "s";
  EXPECT_THROW(to_chrome_trace_json({}, metadata), core::InternalError);
}

}  // namespace
}  // namespace fmsim::observability
