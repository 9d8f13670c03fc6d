// Escaping, coordinate formatting and approximate text measurement for the report writers.
#include "report/svg_text.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/document.hpp"

namespace fmsim::report {

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

namespace detail {

std::string coord(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

double text_width(std::string_view text, double font_px) {
  return static_cast<double>(code_points(text)) * 0.6 * font_px;
}

std::string fit_text(std::string_view text, double max_px, double font_px) {
  if (text_width(text, font_px) <= max_px) return std::string(text);
  const double per_char = 0.6 * font_px;
  const auto keep = static_cast<std::size_t>(std::max(0.0, std::floor(max_px / per_char) - 1.0));
  std::string out;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_code_point = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_code_point) {
      if (kept == keep) break;
      ++kept;
    }
    out.push_back(text[i]);
  }
  return out + "\u2026";
}

std::vector<std::string> wrap_text(std::string_view text, double max_px, double font_px, std::size_t max_lines) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t space = text.find(' ', start);
    const std::size_t end = space == std::string_view::npos ? text.size() : space;
    if (end > start) words.emplace_back(text.substr(start, end - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  std::vector<std::string> lines;
  std::string current;
  std::size_t w = 0;
  for (; w < words.size(); ++w) {
    const std::string candidate = current.empty() ? words[w] : current + " " + words[w];
    if (current.empty() || text_width(candidate, font_px) <= max_px) {
      current = candidate;
      continue;
    }
    if (lines.size() + 1 == max_lines) break;
    lines.push_back(current);
    current = words[w];
  }
  if (w < words.size()) {
    for (; w < words.size(); ++w) current += " " + words[w];
  }
  if (!current.empty() || lines.empty()) lines.push_back(fit_text(current, max_px, font_px));
  for (auto& line : lines) line = fit_text(line, max_px, font_px);
  return lines;
}

}  // namespace detail
}  // namespace fmsim::report
