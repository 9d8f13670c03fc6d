// A bound on the nesting of JSON text, checked before it is parsed: nlohmann::json's dump() and
// the loaders that walk a document recurse once per level, so a file nested 100,000 deep
// overflowed the stack (SIGSEGV) through the CLI and took the Python interpreter down.
#pragma once

#include <string>
#include <string_view>

namespace fmsim::config {

/// Deepest nesting real JSON inputs need (HF config.json files nest 3 to 4 levels, request
/// traces 2) with room to spare; far below what overflows an 8 MiB stack.
inline constexpr int kMaxJsonDepth = 256;

/// Throws core::InputError `file:line: JSON nested deeper than 256 levels` when the arrays and
/// objects of `text` (brackets outside strings, escapes honoured) nest deeper than kMaxJsonDepth.
/// `first_line` is the line number of the text's first line in `file` (JSON Lines: the record's).
/// Linear in the text's length; says nothing about whether the text is otherwise valid JSON.
void check_json_depth(std::string_view text, const std::string& file, int first_line = 1);

}  // namespace fmsim::config
