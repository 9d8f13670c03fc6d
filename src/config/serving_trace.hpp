// Request traces for `fmsim serve --requests FILE`: CSV with a header, or JSON Lines.
#pragma once

#include <string>
#include <vector>

#include "serving/workload.hpp"

namespace fmsim::config {

/// Parses a request trace. Columns / keys (aliases in brackets):
///   arrival_s [arrival, timestamp]      seconds from the start (non-negative)
///   input_tokens [input_length]         positive integer
///   output_tokens [output_length]       positive integer
///   prefix_id                           optional: requests with the same id share a prefix
///   prefix_tokens                       optional: how many leading tokens (default: the whole prompt)
/// A file ending in .jsonl/.json is JSON Lines (one object per line), anything else CSV. Errors
/// are core::InputError naming file:line: field.
std::vector<serving::TraceRequest> parse_request_trace(const std::string& text, const std::string& file);

}  // namespace fmsim::config
