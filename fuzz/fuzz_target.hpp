// What every fuzz target shares: a private scratch folder (the CLI target's working folder, where
// output flags write), and the rule for what counts as a finding.
//
// A target feeds one input to one parser. Bad input must end as core::InputError (or, through
// the CLI, exit status 2): that is the parser doing its job. Anything else (an internal error,
// another exception, a crash, a sanitizer report, a hang) is a finding and aborts the process,
// which libFuzzer or fuzz/driver.cpp reports with the input that caused it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace fmsim::fuzz {

/// A folder of this process's own (mkdtemp under $TMPDIR), removed at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && base[0] != '\0' ? base : "/tmp") + "/fmsim_fuzz_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("fmsim fuzz: mkdtemp");
      std::abort();
    }
    static const std::string keep = pattern;
    std::atexit([] { std::system(("rm -rf '" + keep + "'").c_str()); });
    return pattern;
  }();
  return dir;
}

/// Reports a finding (the message, then abort so the fuzzer keeps the input).
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fmsim fuzz finding: %s\n", what.c_str());
  std::abort();
}

/// Runs one parser on the input: core::InputError is the parser refusing bad input; any other
/// exception is a finding named by `what`.
template <class Parse>
void parse_or_finding(const char* what, Parse&& parse) {
  try {
    parse();
  } catch (const core::InputError&) {
  } catch (const std::exception& e) {
    finding(std::string(what) + ": " + e.what());
  }
}

/// Splits the input into words at newlines and NULs (CLI argument strings).
inline std::vector<std::string> words_of(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words(1);
  for (std::size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (c == '\n' || c == '\0') {
      words.emplace_back();
    } else {
      words.back() += c;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace fmsim::fuzz
