// Readable range checks for numeric flags (flag_checks.hpp).
#include "cli/flag_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::cli {
namespace {

// A whole decimal number, the entire text ("12", "-3"); nullopt-like false for "1e3", "1.5", "x".
bool parse_whole(const std::string& s, long long& v, bool& too_large) {
  too_large = false;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  const auto [p, ec] = std::from_chars(begin, end, v);
  if (p != end || begin == end) return false;
  if (ec == std::errc::result_out_of_range) {
    too_large = true;
    return false;
  }
  return ec == std::errc();
}

bool parse_real(const std::string& s, double& v) {
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  const auto [p, ec] = std::from_chars(begin, end, v);
  return p == end && begin != end && ec == std::errc();
}

std::string whole_range_text(long long lo, long long hi) {
  return fmt::format("must be a whole number from {} to {}", readable_bound(lo), readable_bound(hi));
}

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_name() == name || o->check_name(name)) return o;
  }
  for (const CLI::App* sub : app.get_subcommands()) {  // the parsed ones, innermost last
    if (const CLI::Option* o = find_option(*sub, name)) return o;
  }
  return nullptr;
}

}  // namespace

std::string readable_bound(long long v) {
  switch (v) {
    case INT_MAX: return fmt::format("{} (2^31-1)", v);
    case INT_MIN: return fmt::format("{} (-2^31)", v);
    case LLONG_MAX: return fmt::format("{} (2^63-1)", v);
    case LLONG_MIN: return fmt::format("{} (-2^63)", v);
    default: return std::to_string(v);
  }
}

CLI::Validator whole_number(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& input) -> std::string {
        long long v = 0;
        bool too_large = false;
        if (!parse_whole(input, v, too_large) || v < lo || v > hi) {
          return fmt::format("{}, got {}", whole_range_text(lo, hi), input);
        }
        return "";
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

CLI::Validator parsed_by(std::function<void(const std::string&)> parse, std::string description) {
  return CLI::Validator(
      [parse = std::move(parse)](std::string& input) -> std::string {
        try {
          parse(input);
        } catch (const core::InputError& e) {
          return e.message();
        }
        return "";
      },
      std::move(description));
}

CLI::Validator real_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& input) -> std::string {
        double v = 0;
        if (!parse_real(input, v) || !std::isfinite(v) || v < lo || v > hi) {
          return fmt::format("must be a number from {:g} to {:g}, got {}", lo, hi, input);
        }
        return "";
      },
      fmt::format("FLOAT in [{:g} - {:g}]", lo, hi));
}

CLI::Validator positive_real() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double v = 0;
        if (!parse_real(input, v) || !std::isfinite(v) || !(v > 0.0)) {
          return fmt::format("must be a finite number greater than 0, got {}", input);
        }
        return "";
      },
      "POSITIVE");
}

void require_finite_reals(CLI::App& app) {
  const CLI::Validator finite(
      [](std::string& input) -> std::string {
        const char* begin = input.data();
        const char* end = input.data() + input.size();
        if (begin != end && *begin == '+') ++begin;
        double v = 0;
        const auto [p, ec] = std::from_chars(begin, end, v);
        // nan, inf and numbers past the double range (1e999); other text is CLI11's to refuse.
        if (p == end && begin != end && (ec == std::errc::result_out_of_range || !std::isfinite(v)))
          return fmt::format("must be a finite number, got {}", input);
        return "";
      },
      "", "Finite");
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_name() == "FLOAT") o->check(finite);
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_finite_reals(*sub);
}

std::string unknown_word_message(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<const CLI::App*> chain{&app};  // the command and the subcommands named so far
  const auto find_option = [&](const std::string& name) -> const CLI::Option* {
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      for (const CLI::Option* o : (*it)->get_options()) {
        if (!o->get_positional() && o->check_name(name)) return o;
      }
    }
    return nullptr;
  };
  bool positional_seen = false;  // at the innermost command: a word that is its argument, not a subcommand
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.') {
      const std::string name = word.substr(0, word.find('='));
      if (const CLI::Option* o = find_option(name)) {
        if (o->get_items_expected_max() > 0 && name.size() == word.size()) ++i;  // its value
        continue;
      }
      std::vector<std::string> flags;
      for (const CLI::App* a : chain) {
        for (const CLI::Option* o : a->get_options()) {
          for (const auto& l : o->get_lnames()) flags.push_back("--" + l);
        }
      }
      std::string where = "fmsim";
      for (std::size_t k = 1; k < chain.size(); ++k) where += " " + chain[k]->get_name();
      const auto close = core::closest_matches(name, flags);
      if (close.empty()) return fmt::format("unknown flag '{}' of `{}`; see `{} --help`", name, where, where);
      return fmt::format("unknown flag '{}' of `{}`; did you mean {}?", name, where, core::join(close, " or "));
    }
    const CLI::App* current = chain.back();
    const auto subs = current->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty() || positional_seen) continue;
    const auto named = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* a) { return a->check_name(word); });
    if (named != subs.end()) {
      chain.push_back(*named);
      continue;
    }
    if (current->get_require_subcommand_min() == 0) {
      positional_seen = true;
      continue;
    }
    std::vector<std::string> names;
    for (const CLI::App* a : subs) names.push_back(a->get_name());
    return core::unknown_name_message("subcommand", word, names);
  }
  return "";
}

std::string readable_parse_error(const std::string& what, const CLI::App& app) {
  constexpr std::string_view prefix = "Could not convert: ";
  if (what.rfind(prefix, 0) != 0) return what;
  const auto eq = what.find(" = ", prefix.size());
  if (eq == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), eq - prefix.size());
  const std::string value = what.substr(eq + 3);
  const CLI::Option* o = find_option(app, name);
  if (o == nullptr) return what;
  const std::string type = o->get_type_name();
  if (type == "INT" || type == "UINT") {
    long long v = 0;
    bool too_large = false;
    const bool whole = parse_whole(value, v, too_large);
    if (type == "UINT" && whole && v < 0)
      return fmt::format("{}: must be a whole number, 0 or more, got {}", name, value);
    // A whole number that still did not convert is past the flag's own (narrower) type.
    if (whole && type == "UINT") return fmt::format("{}: {}, got {}", name, whole_range_text(0, UINT_MAX), value);
    if (whole) return fmt::format("{}: {}, got {}", name, whole_range_text(INT_MIN, INT_MAX), value);
    if (too_large) return fmt::format("{}: {}, got {}", name, whole_range_text(LLONG_MIN, LLONG_MAX), value);
    return fmt::format("{}: must be a whole number, got {}", name, value);
  }
  if (type == "FLOAT") return fmt::format("{}: must be a number, got {}", name, value);
  return what;
}

}  // namespace fmsim::cli
