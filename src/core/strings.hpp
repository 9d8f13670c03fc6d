// Small string helpers shared by every module: closest-name suggestions, case folding.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fmsim::core {

/// Levenshtein edit distance between a and b (case-insensitive).
int edit_distance(std::string_view a, std::string_view b);

/// Up to `limit` candidates closest to `name`, best first, for "did you mean" messages.
/// Candidates further than max(2, |name|/3) edits away are left out unless one contains the other.
std::vector<std::string> closest_matches(std::string_view name, const std::vector<std::string>& candidates,
                                         std::size_t limit = 3);

/// "unknown system 'p5.48xlarg'; did you mean p5.48xlarge?" (or the list of known names when none is close).
std::string unknown_name_message(std::string_view kind, std::string_view name,
                                 const std::vector<std::string>& candidates);

/// 1234567 -> "1,234,567" (rounded; "n/a" when not finite).
std::string format_thousands(double v);

/// A large count with an SI-style suffix, as model sizes and token budgets are written:
/// "355M", "8.03B", "70.6B", "1.73T"; below a million, digits.
std::string format_count(double v);

/// US dollars with a magnitude suffix: "$11.39M", "$12.3k", "$950" ("n/a" when not finite).
std::string format_usd(double usd);

/// `s` without the spaces and tabs around it.
std::string_view trim_blanks(std::string_view s);

/// Lower-cases ASCII.
std::string to_lower(std::string_view s);

/// Joins with a separator.
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid (overlong
/// forms, surrogates and code points above U+10FFFF are invalid, per RFC 3629); 1 for ASCII.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

}  // namespace fmsim::core
