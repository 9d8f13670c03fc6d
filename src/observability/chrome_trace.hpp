// Export of engine trace events as Chrome Trace Event Format JSON (chrome://tracing, ui.perfetto.dev).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/trace.hpp"

namespace fmsim::observability {

/// What the trace file says about itself, and how tracks are ordered.
struct TraceMetadata {
  /// Key/values written, in this order, to the file's "otherData" block (shown by chrome://tracing
  /// under "Metadata"), e.g. {"command", "fmsim train ..."}, {"model", "llama3-70b"}.
  /// A "generator": "fmsim" entry always comes first.
  std::vector<std::pair<std::string, std::string>> other_data;
  /// "ms" or "ns": the unit the viewer displays. Timestamps in the file are always microseconds.
  std::string display_time_unit = "ms";
  /// Process names listed here come first, in this order; the rest follow in natural order
  /// ("rank 2" before "rank 10").
  std::vector<std::string> process_order;
  /// Thread (stream) names listed here come first inside each process, in this order; the rest
  /// follow in natural order.
  std::vector<std::string> thread_order = {"compute", "tp", "cp", "sp", "ep", "pp", "dp", "optimizer"};
  /// When events on one track overlap without nesting (which Perfetto cannot draw on one track),
  /// move the later ones to extra tracks named "<thread> #2", "<thread> #3", ... in the same process.
  bool split_overlapping = true;
};

/// Renders events in the Chrome Trace Event Format, JSON object form:
///
///     {"traceEvents":[...], "displayTimeUnit":"ms", "otherData":{...}}
///
/// - Every event becomes a complete event ("ph":"X") with "ts" and "dur" in microseconds, written
///   exactly from the integer nanoseconds (up to three decimals), "cat" = category and "args" = the
///   event's args in their given order.
/// - Each distinct process string gets an integer pid (1, 2, ... in track order) and each
///   (process, thread) pair a tid that is unique across the whole file; "ph":"M" metadata events
///   name them (process_name, thread_name) and fix their order (process_sort_index,
///   thread_sort_index), so the viewer shows one named track per stream in a stable order.
/// - Events are sorted by start time, longer first on ties (so enclosing spans precede the spans
///   they contain), then by input order.
/// Output is a pure function of the input: byte-identical for identical input.
/// Precondition (FMSIM_CHECK): no event has a negative duration.
std::string to_chrome_trace_json(const std::vector<engine::TraceEvent>& events, const TraceMetadata& metadata = {});

/// Orders strings with embedded numbers by value: "rank 2" < "rank 10" < "rank 10b".
/// Ties between equal-valued numbers ("01" and "1") fall back to plain byte order, so the order
/// is total. Exposed for the exporters and their tests.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace fmsim::observability
