// README.md's `$ fmsim ...` examples as the tests read them: the commands of its plain ``` blocks
// with the output lines shown under each, and lines normalised for comparison (blanks folded, wall
// times and thread counts left out). Used by tests/golden/readme_examples_cli_test.cpp (every
// example but two) and tests/prometheus/readme_compare_test.cpp (the `fmsim compare` example
// against a real Prometheus).
#pragma once

#include <cstddef>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace fmsim::testing {

struct Example {
  int line = 0;                    ///< README line of the `$ fmsim` prompt
  std::string command;             ///< without "$ ", continuation lines joined, trailing # comment cut
  std::vector<std::string> shown;  ///< output lines the README shows under it
};

// The `$ ` commands of README's plain ``` blocks (not ```sh or ```python), with the lines under each
// up to the next `$ ` or the end of the block.
inline std::vector<Example> readme_examples() {
  std::ifstream in(source_path("README.md"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<Example> out;
  bool in_block = false, plain = false, collecting = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.starts_with("```")) {
      in_block = !in_block;
      plain = in_block && l == "```";
      collecting = false;
      continue;
    }
    if (!in_block || !plain) continue;
    if (l.starts_with("$ ")) {
      Example e{static_cast<int>(i + 1), l.substr(2), {}};
      while (e.command.ends_with("\\") && i + 1 < lines.size()) {
        e.command.pop_back();
        const std::string& next = lines[++i];
        e.command += " " + next.substr(next.find_first_not_of(' '));
      }
      e.command = std::regex_replace(e.command, std::regex(R"(\s+#.*$)"), "");
      collecting = e.command.starts_with("fmsim ");
      if (collecting) out.push_back(e);
    } else if (collecting) {
      out.back().shown.push_back(l);
    }
  }
  return out;
}

// Blanks folded, ends trimmed, wall times replaced by "_".
inline std::string normalized(const std::string& line) {
  std::string s = std::regex_replace(line, std::regex(R"(\([0-9.]+ s\))"), "(_ s)");
  s = std::regex_replace(s, std::regex(R"(in [0-9.]+ s\b)"), "in _ s");
  s = std::regex_replace(s, std::regex(R"(\([0-9]+ threads\))"), "(_ threads)");
  std::istringstream words(s);
  std::string out, w;
  while (words >> w) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace fmsim::testing
