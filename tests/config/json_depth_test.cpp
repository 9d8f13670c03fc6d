// The nesting bound checked before JSON is parsed (config/json_depth.hpp): brackets count only
// outside strings, the deepest allowed document passes, one level more fails with its line.
#include "config/json_depth.hpp"

#include <gtest/gtest.h>

#include <string>

#include "config/yaml_reader.hpp"
#include "expect_input_error.hpp"

namespace fmsim::testing {
namespace {

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonDepth, AllowsTheBoundAndRefusesOneLevelMoreWithItsLine) {
  EXPECT_NO_THROW(config::check_json_depth(nested(config::kMaxJsonDepth), "ok.json"));
  expect_input_error([] { config::check_json_depth("{\n\"a\":\n" + nested(config::kMaxJsonDepth) + "}", "deep.json"); },
                     "deep.json", 3, "", "JSON nested deeper than 256 levels");
  // JSON Lines: the record's own line number is the first line.
  expect_input_error([] { config::check_json_depth(nested(100000), "t.jsonl", 7); }, "t.jsonl", 7, "",
                     "allowed: at most 256");
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  const std::string brackets(1000, '[');
  EXPECT_NO_THROW(config::check_json_depth("{\"name\": \"" + brackets + "\"}", "s.json"));
  // An escaped quote does not end the string; an escaped backslash before the quote does.
  EXPECT_NO_THROW(config::check_json_depth("[\"\\\"" + brackets + "\"]", "e.json"));
  EXPECT_THROW(config::check_json_depth("[\"\\\\\"" + brackets + "\"]", "e.json"), core::InputError);
}

// The YAML checks the same loader applies: a quote never closed, and aliases that expand a small
// document into a large one.
TEST(YamlBounds, RefusesAnOpenQuoteAndAliasBombs) {
  expect_input_error([] { (void)config::load_yaml_text("a: 1\nmodel: \"llama\nb: 2\n", "q.yaml"); }, "q.yaml", 2, "",
                     "the quote (\") opened here is never closed");
  expect_input_error([] { (void)config::load_yaml_text("model: 'it''s\n", "s.yaml"); }, "s.yaml", 1, "",
                     "the quote (') opened here is never closed");
  EXPECT_NO_THROW((void)config::load_yaml_text("a: \"x\"\nb: 'it''s'\nc: it's\nd: \"say \\\"hi\\\"\"\n", "ok.yaml"));
  std::string bomb = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n";
  for (int i = 1; i < 8; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ",*a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  EXPECT_THROW((void)config::load_yaml_text(bomb, "bomb.yaml"), core::InputError);
  EXPECT_NO_THROW((void)config::load_yaml_text("base: &b {tp: 8}\njob: *b\n", "alias.yaml"));
}

}  // namespace
}  // namespace fmsim::testing
