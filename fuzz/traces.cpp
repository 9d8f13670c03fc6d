// Fuzz target: the traces users bring: `fmsim cluster --job-trace` job CSVs (fmsim's layout and
// column maps: config::parse_trace_csv) and `fmsim serve --requests` request traces, read as
// CSV and as JSON Lines (config::parse_request_trace), each on the text in memory.
#include <string>

#include "config/job_trace.hpp"
#include "config/serving_trace.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fmsim::config::TraceOptions options;
  options.max_nodes = 64;
  fmsim::fuzz::parse_or_finding("parse_trace_csv",
                                [&] { (void)fmsim::config::parse_trace_csv(text, "jobs.csv", options); });
  fmsim::fuzz::parse_or_finding("parse_request_trace (CSV)",
                                [&] { (void)fmsim::config::parse_request_trace(text, "requests.csv"); });
  fmsim::fuzz::parse_or_finding("parse_request_trace (JSON Lines)",
                                [&] { (void)fmsim::config::parse_request_trace(text, "requests.jsonl"); });
  return 0;
}
