// The command line that reproduces a result: every flag that was set, read back from the parser.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace fmsim::cli {

/// `word` quoted for a POSIX shell when it needs it: letters, digits and -_.,:/=+@% stay bare,
/// anything else is put in single quotes (a ' inside becomes '\'').
inline std::string shell_word(std::string_view word) {
  const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("-_.,:/=+@%").find(c) != std::string_view::npos;
  });
  if (bare) return std::string(word);
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// "fmsim [global flags] COMMAND [SUBCOMMAND] --flag value ...": every option of `command` and of
/// the commands above it that has a value, whether from the command line or a --job file (whose
/// keys are applied as flags, so the line stands without the file), in the order the command
/// declares them. Left out: the flags named in `skip` (outputs such as "--report", "--json", and
/// "--job" itself) and --help. Flags that take a list are given once per value.
inline std::string reproduce_command(const CLI::App& command, const std::vector<std::string>& skip) {
  std::vector<const CLI::App*> chain;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) chain.push_back(app);
  std::reverse(chain.begin(), chain.end());
  std::string line = "fmsim";
  for (const CLI::App* app : chain) {
    if (app != chain.front()) line += fmt::format(" {}", app->get_name());
    for (const CLI::Option* opt : app->get_options()) {
      if (opt->count() == 0 || opt == app->get_help_ptr()) continue;
      const std::string name = opt->get_lnames().empty() ? std::string() : "--" + opt->get_lnames().front();
      if (!name.empty() && std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
      for (const std::string& value : opt->results()) {
        if (name.empty()) {
          line += fmt::format(" {}", shell_word(value));  // a positional argument
        } else if (opt->get_expected_max() == 0) {        // a flag
          line += value == "true" || value == "1" ? fmt::format(" {}", name)
                                                  : fmt::format(" {}={}", name, shell_word(value));
        } else {
          line += fmt::format(" {} {}", name, shell_word(value));
        }
      }
    }
  }
  return line;
}

}  // namespace fmsim::cli
