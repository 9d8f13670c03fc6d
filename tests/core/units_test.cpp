// Unit types: parsing of published notations and dimensionally checked arithmetic.
#include "core/units.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/sim_time.hpp"
#include "core/strings.hpp"

namespace fmsim::core {
namespace {

// 400 GB/s is 400e9 bytes/s (decimal prefixes).
TEST(Units, ParsesDecimalBandwidth) { EXPECT_DOUBLE_EQ(parse_bandwidth("400 GB/s").value->value(), 400e9); }

// 3200 Gbps = 3200e9 bits/s = 400e9 bytes/s (EFA per-instance figures are in bits).
TEST(Units, ParsesBitsPerSecond) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("3200 Gbps").value->value(), 400e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3.2 Tbps").value->value(), 400e9);
}

// 80 GiB = 80 * 2^30 bytes; 141 GB = 141e9 bytes; nccl-tests "16G" = 16 GiB.
TEST(Units, ParsesBinaryAndDecimalBytes) {
  EXPECT_DOUBLE_EQ(parse_bytes("80 GiB").value->value(), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bytes("141 GB").value->value(), 141e9);
  EXPECT_DOUBLE_EQ(parse_bytes("16G").value->value(), 16.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bytes("8").value->value(), 8.0);
}

// 2.25 PFLOPS = 2.25e15 FLOP/s.
TEST(Units, ParsesFlopsRate) {
  EXPECT_DOUBLE_EQ(parse_flops_rate("2.25 PFLOPS").value->value(), 2.25e15);
  EXPECT_DOUBLE_EQ(parse_flops_rate("989.4 TFLOPS").value->value(), 989.4e12);
}

TEST(Units, ParsesDurationsAndCounts) {
  EXPECT_DOUBLE_EQ(parse_duration("5 min").value->value(), 300.0);
  EXPECT_DOUBLE_EQ(parse_duration("2.5 us").value->value(), 2.5e-6);
  EXPECT_DOUBLE_EQ(*parse_count("15T").value, 15e12);
}

TEST(Units, RejectsMalformedOrUnknownUnits) {
  EXPECT_FALSE(parse_bandwidth("400"));     // a bandwidth needs a unit
  EXPECT_FALSE(parse_bandwidth("400 GB"));  // a size is not a rate
  EXPECT_FALSE(parse_bytes("eighty GiB"));
  EXPECT_FALSE(parse_flops_rate("2.25 PFLOPZ"));
  EXPECT_NE(parse_bandwidth("400 GB").error.find("unknown unit"), std::string::npos);
}

// Sizes and counts end up as 64-bit integers (bytes, elements, tokens): 2^63 = 8 EiB would wrap
// to -9223372036854775808, so it and anything larger is refused; 7 EiB (< 2^63) is accepted. NaN
// and infinities are refused too.
TEST(Units, RefusesSizesAndCountsPastTwoToThe63) {
  EXPECT_TRUE(parse_bytes("8191 PiB"));
  EXPECT_TRUE(parse_bytes("4e18"));
  EXPECT_FALSE(parse_bytes("8192 PiB"));  // 2^13 * 2^50 = 2^63
  EXPECT_FALSE(parse_bytes("1e30"));
  EXPECT_NE(parse_bytes("1e30").error.find("2^63"), std::string::npos) << parse_bytes("1e30").error;
  EXPECT_FALSE(parse_count("1e19"));
  EXPECT_TRUE(parse_count("9e18"));
  EXPECT_FALSE(parse_count("-1e19"));
  EXPECT_FALSE(parse_bytes("nan"));
  EXPECT_FALSE(parse_bytes("inf"));
  EXPECT_FALSE(parse_count("1e400"));
}

// Bytes / (Bytes/s) = seconds; FLOPs / (FLOP/s) = seconds.
TEST(Units, CrossDimensionArithmetic) {
  EXPECT_DOUBLE_EQ((gb(400) / gb_per_s(400)).value(), 1.0);
  EXPECT_DOUBLE_EQ((flops(2e15) / pflops(1)).value(), 2.0);
  EXPECT_DOUBLE_EQ(gib(2) / gib(1), 2.0);
}

// Simulated time is integer nanoseconds: 1.5 us -> 1500 ns, exactly.
TEST(SimTime, RoundsToNanoseconds) {
  EXPECT_EQ(SimTime::from_seconds(us(1.5)).ns(), 1500);
  EXPECT_EQ((SimTime::from_ns(1) + SimTime::from_ns(2)).ns(), 3);
}

TEST(Errors, InputErrorNamesFileLineAndField) {
  const InputError e("job.yaml", 12, "parallelism.tp", "6 does not divide 64 attention heads");
  EXPECT_STREQ(e.what(), "job.yaml:12: parallelism.tp: 6 does not divide 64 attention heads");
  EXPECT_STREQ(InputError::flag("--tp", "must be positive").what(), "--tp: must be positive");
}

TEST(Errors, CheckThrowsInternalError) { EXPECT_THROW(FMSIM_CHECK(1 + 1 == 3, "arithmetic"), InternalError); }

TEST(Strings, SuggestsClosestName) {
  const std::vector<std::string> names{"p5.48xlarge", "p5e.48xlarge", "p4d.24xlarge"};
  EXPECT_EQ(unknown_name_message("system", "p5.48xlarg", names),
            "unknown system 'p5.48xlarg'; did you mean p5.48xlarge or p5e.48xlarge?");
}

// Suggestions are names within edit distance max(2, |name|/3), or names one contains: the edit
// distance is at least the difference of the lengths, so a name much longer than a candidate
// matches it only by containment (and a garbled 5,000-character key is answered without the
// 5,000 x |candidate| distance table).
TEST(Strings, LongNamesMatchOnlyByContainment) {
  const std::vector<std::string> keys{"gpus", "nodes", "fabric"};
  EXPECT_EQ(closest_matches(std::string(5000, 'q') + "nodes", keys), std::vector<std::string>{"nodes"});
  EXPECT_TRUE(closest_matches(std::string(5000, 'q'), keys).empty());
  // Within the distance the edit distance still decides: "gpu" (distance 1) and "nodez" (1).
  EXPECT_EQ(closest_matches("gpu", keys), std::vector<std::string>{"gpus"});
  EXPECT_EQ(closest_matches("nodez", keys), std::vector<std::string>{"nodes"});
}

// Counts print with an SI-style suffix, three significant figures; thousands get separators.
TEST(Strings, FormatsCountsAndThousands) {
  EXPECT_EQ(format_count(355e6), "355M");
  EXPECT_EQ(format_count(8.03e9), "8.03B");
  EXPECT_EQ(format_count(70.55e9), "70.5B");
  EXPECT_EQ(format_count(1.73e12), "1.73T");
  EXPECT_EQ(format_count(42.0), "42");
  EXPECT_EQ(format_thousands(668178.4), "668,178");
  EXPECT_EQ(format_thousands(-1234.0), "-1,234");
}

}  // namespace
}  // namespace fmsim::core
