// CSV export of tables and traces (RFC 4180).
#pragma once

#include <string>
#include <vector>

#include "engine/trace.hpp"

namespace fmsim::observability {

/// Renders a table as RFC 4180 CSV: the header line, then one line per row, each line ended by
/// CRLF. A field is quoted when it contains a comma, a double quote, CR or LF; quotes inside are
/// doubled. Precondition (FMSIM_CHECK): every row has as many fields as the header.
std::string to_csv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

/// Trace events as CSV with columns process, thread, name, category, start_ns, duration_ns, args
/// (args as "key=value; key=value"), in input order.
std::string trace_to_csv(const std::vector<engine::TraceEvent>& events);

}  // namespace fmsim::observability
