// YamlNode: file/line/field-aware conversions that every config loader shares.
#include "config/yaml_reader.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hardware/specs.hpp"

namespace fmsim::config {
namespace {

// yaml-cpp nodes share ownership of their document's memory, so the node outlives the document.
YamlNode parse(const char* text) { return load_yaml_text(text, "t.yaml").node(); }

// Expects `f` to throw InputError with this line, field and a message containing `part`.
template <class F>
void expect_error(F&& f, int line, const std::string& field, const std::string& part) {
  try {
    f();
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), "t.yaml");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(e.message().find(part), std::string::npos) << e.what();
  }
}

// Lines are 1-based (yaml-cpp marks are 0-based); paths are dotted with [i] for list items.
TEST(YamlNode, LinesAndPaths) {
  const YamlNode root = parse("a: 1\nitems:\n  - x: 2\n  - x: 3\n");
  EXPECT_EQ(root["a"].line(), 1);
  const auto items = root["items"].items();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1]["x"].line(), 4);
  EXPECT_EQ(items[1]["x"].path(), "items[1].x");
  EXPECT_EQ(items[1]["x"].as_int(), 3);
}

// A missing field reports the line of the mapping that should hold it.
TEST(YamlNode, MissingFieldUsesTheParentLine) {
  const YamlNode root = parse("# c\nentry:\n  a: 1\n");
  expect_error([&] { (void)root["entry"]["b"].as_string(); }, 3, "entry.b", "missing required field");
  EXPECT_FALSE(root["entry"].find("b").has_value());
}

TEST(YamlNode, UnknownKeysSuggestTheClosest) {
  const YamlNode root = parse("name: x\ncuont: 3\n");
  expect_error([&] { root.check_keys({"name", "count"}); }, 2, "cuont", "did you mean count?");
  expect_error([&] { parse("a: 1\na: 2\n").check_keys({"a"}); }, 2, "a", "more than once");
}

TEST(YamlNode, NumbersAndBounds) {
  const YamlNode root = parse("i: 64\nf: 1.5\nneg: -2\nz: 0\ntext: abc\n");
  EXPECT_EQ(root["i"].as_int(Bound::Positive), 64);
  expect_error([&] { (void)root["f"].as_int(); }, 2, "f", "not a whole number");
  // Whole numbers past an int's safe range name the range, not "not a whole number".
  expect_error([&] { (void)parse("big: 2147483647\n")["big"].as_int(); }, 1, "big",
               "out of range; allowed: a whole number from -2000000000 to 2000000000");
  expect_error([&] { (void)root["neg"].as_number(Bound::NonNegative); }, 3, "neg", "zero or more");
  expect_error([&] { (void)root["z"].as_int(Bound::Positive); }, 4, "z", "greater than zero");
  expect_error([&] { (void)root["text"].as_number(); }, 5, "text", "not a number");
}

// Quantities must name their unit: "80" in a size field is a forgotten "GB", not 80 bytes.
// Text values end up in JSON output, which must be UTF-8 (RFC 3629): a lone continuation byte
// (0x8B) or an overlong form (0xC0 0xAF) is refused where it stands; "µs" and "H100 – SXM" are
// fine. (Found by fuzz/catalog_yaml: the byte crashed `catalog --json`.)
TEST(YamlNode, TextMustBeUtf8) {
  const YamlNode root = parse("ok: \"H100 \u2013 SXM \u00b5s\"\nbad: \"ab\x8b\"\noverlong: \"\xc0\xaf\"\n");
  EXPECT_EQ(root["ok"].as_string(), "H100 \u2013 SXM \u00b5s");
  expect_error([&] { (void)root["bad"].as_string(); }, 2, "bad", "not UTF-8 text (byte 3 of the value)");
  expect_error([&] { (void)root["overlong"].as_string(); }, 3, "overlong", "not UTF-8 text (byte 1");
}

TEST(YamlNode, QuantitiesNeedUnits) {
  const YamlNode root = parse("a: 80 GiB\nb: 80\nc: 400 Gbps\nd: 2.5 us\ne: 10 furlongs\n");
  EXPECT_DOUBLE_EQ(root["a"].as_bytes().value(), 80.0 * 1024 * 1024 * 1024);
  expect_error([&] { (void)root["b"].as_bytes(); }, 2, "b", "has no unit");
  EXPECT_DOUBLE_EQ(root["c"].as_bandwidth().value(), 50e9);  // 400 Gbit/s = 50 GB/s
  EXPECT_DOUBLE_EQ(root["d"].as_duration().value(), 2.5e-6);
  expect_error([&] { (void)root["e"].as_bytes(); }, 5, "e", "unknown unit");
  const YamlNode rate = parse("r: 5500 req/s\n");
  EXPECT_DOUBLE_EQ(rate["r"].as_number_with_unit({{"req/s", 1.0}}), 5500.0);
}

// A non-zero quantity outside its kind's PhysicalRange is refused with the range: 1e-30 TB/s of
// HBM would time a 16 GB read at 1.6e16 s, past the integer clock's 2^63 ns (292 years); the
// ends of each range are accepted, zero is left to the Bound.
TEST(YamlNode, QuantitiesOutsideAnyRealDeviceAreRefused) {
  const YamlNode root = parse(
      "hbm: 1e-30 TB/s\nfast: 1e30 TB/s\nslow: 1 MB/s\nflops: 1e30 PFLOPS\ntiny: 1e-300 GB\n"
      "zero: 0 GB\nforever: 10000 w\nwatts: 1e12 W\nnano: 1 ns\n");
  expect_error([&] { (void)root["hbm"].as_bandwidth(); }, 1, "hbm", "allowed 1 MB/s to 1 EB/s");
  expect_error([&] { (void)root["fast"].as_bandwidth(); }, 2, "fast", "outside the range of any real bandwidth");
  EXPECT_DOUBLE_EQ(root["slow"].as_bandwidth().value(), kBandwidthRange.lo);
  expect_error([&] { (void)root["flops"].as_flops_rate(); }, 4, "flops", "allowed 1 GFLOPS to 1 ZFLOPS");
  expect_error([&] { (void)root["tiny"].as_bytes(); }, 5, "tiny", "allowed 1 B to 1 ZB");
  EXPECT_DOUBLE_EQ(root["zero"].as_bytes(Bound::NonNegative).value(), 0.0);
  expect_error([&] { (void)root["forever"].as_duration(); }, 7, "forever", "allowed 1 ns to 100 years");
  expect_error([&] { (void)root["watts"].as_power(); }, 8, "watts", "allowed 1 mW to 100 MW");
  EXPECT_DOUBLE_EQ(root["nano"].as_duration().value(), 1e-9);
}

TEST(YamlNode, EnumsAndBooleans) {
  const YamlNode root = parse("k: Hopper\nb: yes\nbad: hoper\n");
  EXPECT_EQ(root["k"].as_word(hardware::kArchitectureWords), hardware::Architecture::Hopper);
  EXPECT_TRUE(root["b"].as_bool());
  expect_error([&] { (void)root["bad"].as_word(hardware::kArchitectureWords); }, 3, "bad", "did you mean hopper?");
}

TEST(YamlNode, MalformedYamlNamesTheLine) {
  try {
    load_yaml_text("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.file(), "bad.yaml");
    EXPECT_GT(e.line(), 1);
    EXPECT_NE(e.message().find("malformed YAML"), std::string::npos);
  }
}

// Assigning a YamlNode rebinds it; the document it pointed into is unchanged. (yaml-cpp's own
// Node assignment would overwrite the referenced node.)
TEST(YamlNode, AssignmentRebindsWithoutWritingThrough) {
  const YamlNode root = parse("a: first\nb: second\n");
  YamlNode n = root["a"];
  n = root["b"];
  EXPECT_EQ(n.as_string(), "second");
  EXPECT_EQ(root["a"].as_string(), "first");
}

TEST(SourcedValue, RequiresSourceOnlyWhenAsked) {
  const YamlNode root = parse("a: {value: 700 W, source: \"[GK-H100]\", verified: false}\nb: 500 W\nc: {value: 1 W}\n");
  const SourcedValue a = read_sourced(root["a"], true);
  EXPECT_EQ(a.source, "[GK-H100]");
  EXPECT_FALSE(a.verified);
  EXPECT_DOUBLE_EQ(a.value.as_power().value(), 700.0);
  EXPECT_TRUE(read_sourced(root["b"], false).source.empty());
  expect_error([&] { (void)read_sourced(root["b"], true); }, 2, "b", "needs a unit and a source");
  expect_error([&] { (void)read_sourced(root["c"], true); }, 3, "c", "missing 'source'");
}

}  // namespace
}  // namespace fmsim::config
