// Text helpers shared by the HTML and SVG writers: escaping, number rendering, text fitting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fmsim::report::detail {

/// A coordinate with at most one decimal and no trailing ".0": 12.25 -> "12.3", 40.0 -> "40".
std::string coord(double v);

/// Number of Unicode code points in UTF-8 text.
std::size_t code_points(std::string_view text);

/// Estimated rendered width in px of `text` at `font_px` in a sans-serif system font
/// (0.6 em per character: generous, so estimated text rarely overflows).
double text_width(std::string_view text, double font_px);

/// `text` cut at a code-point boundary and ended with an ellipsis so it fits `max_px`.
std::string fit_text(std::string_view text, double max_px, double font_px);

/// `text` broken at spaces into at most `max_lines` lines of at most `max_px`; the last line is
/// cut with an ellipsis when the text does not fit.
std::vector<std::string> wrap_text(std::string_view text, double max_px, double font_px, std::size_t max_lines);

}  // namespace fmsim::report::detail
