// RFC 4180 CSV: quoting rules and CRLF line ends.
#include "observability/csv.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace fmsim::observability {
namespace {

// RFC 4180: lines end in CRLF; fields with a comma, quote, CR or LF are enclosed in double quotes
// and a quote inside is written twice; other fields are written as they are.
TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(
      to_csv({"layout", "step time (s)"}, {{"tp8, pp4", "1.5"}, {"say \"x\"", "2"}, {"a\nb", ""}, {"plain", "3"}}),
      "layout,step time (s)\r\n"
      "\"tp8, pp4\",1.5\r\n"
      "\"say \"\"x\"\"\",2\r\n"
      "\"a\nb\",\r\n"
      "plain,3\r\n");
}

// A row with fewer fields than the header is a programming error.
TEST(Csv, RejectsRaggedRows) { EXPECT_THROW(to_csv({"a", "b"}, {{"1"}}), core::InternalError); }

// Trace rows: process, thread, name, category, start_ns, duration_ns, args joined as "k=v; k=v".
TEST(Csv, WritesTraceEvents) {
  engine::TraceEvent e{.process = "rank 0",
                       .thread = "tp",
                       .name = "all_reduce, 64 MiB",
                       .category = "comm",
                       .start = core::SimTime::from_ns(1500),
                       .duration = core::SimTime::from_ns(250),
                       .args = {{"bytes", "67108864"}, {"algo", "ring"}}};
  EXPECT_EQ(trace_to_csv({e}),
            "process,thread,name,category,start_ns,duration_ns,args\r\n"
            "rank 0,tp,\"all_reduce, 64 MiB\",comm,1500,250,bytes=67108864; algo=ring\r\n");
}

}  // namespace
}  // namespace fmsim::observability
