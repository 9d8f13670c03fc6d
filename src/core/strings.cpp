// Closest-name suggestions and small string utilities.
#include "core/strings.hpp"

#include "core/precision.hpp"
#include "core/vocabulary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

namespace fmsim::core {

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

int edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = to_lower(a_in);
  const std::string b = to_lower(b_in);
  std::vector<int> prev(b.size() + 1);
  std::vector<int> cur(b.size() + 1);
  std::iota(prev.begin(), prev.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_matches(std::string_view name, const std::vector<std::string>& candidates,
                                         std::size_t limit) {
  const std::string lname = to_lower(name);
  const int max_distance = std::max<int>(2, static_cast<int>(name.size()) / 3);
  std::vector<std::pair<int, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = to_lower(c);
    const bool contains =
        !lname.empty() && (lc.find(lname) != std::string::npos || lname.find(lc) != std::string::npos);
    // The edit distance is at least the difference of the lengths: past max_distance only
    // containment can match (and scores max_distance), so the O(|name| |candidate|) distance of a
    // long mistyped or garbled key is not computed.
    const auto gap = lname.size() > lc.size() ? lname.size() - lc.size() : lc.size() - lname.size();
    if (gap > static_cast<std::size_t>(max_distance)) {
      if (contains) scored.emplace_back(max_distance, c);
      continue;
    }
    const int d = edit_distance(lname, lc);
    if (d <= max_distance || contains) scored.emplace_back(contains ? std::min(d, max_distance) : d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() >= limit) break;
    out.push_back(c);
  }
  return out;
}

std::string unknown_name_message(std::string_view kind, std::string_view name,
                                 const std::vector<std::string>& candidates) {
  const auto close = closest_matches(name, candidates);
  std::string msg = "unknown " + std::string(kind) + " '" + std::string(name) + "'";
  if (!close.empty()) {
    msg += "; did you mean " + join(close, " or ") + "?";
  } else {
    msg += "; known: " + join(candidates, ", ");
  }
  return msg;
}

std::string format_count(double v) {
  if (v >= 1e12) return fmt::format("{:.2f}T", v / 1e12);
  if (v >= 1e10) return fmt::format("{:.1f}B", v / 1e9);
  if (v >= 1e9) return fmt::format("{:.2f}B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.0f}M", v / 1e6);
  return fmt::format("{:.0f}", v);
}

std::string format_thousands(double v) {
  if (!std::isfinite(v)) return "n/a";
  const auto n = static_cast<long long>(std::llround(v));
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return "n/a";
  if (usd >= 1e6) return fmt::format("${:.2f}M", usd / 1e6);
  if (usd >= 1e3) return fmt::format("${:.1f}k", usd / 1e3);
  return fmt::format("${:.0f}", usd);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<Precision> parse_precision(std::string_view text) { return kPrecisionWords.parse(text); }

std::string precision_label(Precision p, Fp8Recipe r) {
  std::string out(to_string(p));
  if (p == Precision::FP8 && r != Fp8Recipe::Tensorwise) out += "-" + std::string(to_string(r));
  return out;
}

std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view text) { return kFp8RecipeWords.parse(text); }

std::string fold_word(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace fmsim::core

namespace fmsim::core {

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t len = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else if (b0 < 0x80) {
    return 1;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace fmsim::core
