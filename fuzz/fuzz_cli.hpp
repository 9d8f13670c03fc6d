// Running one fmsim command in-process for a fuzz target: exit status 0, 1 or 2 is the CLI doing
// its job; 70 (internal error) or any escaping exception is a finding.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "cli/run_captured.hpp"
#include "fuzz_target.hpp"

namespace fmsim::fuzz {

inline void run_cli(const std::vector<std::string>& args) {
  cli::CapturedRun r;
  try {
    r = cli::run_captured(args);
  } catch (const std::exception& e) {
    finding(std::string("exception escaped the CLI: ") + e.what());
  }
  if (r.status != 0 && r.status != 1 && r.status != 2)
    finding("exit status " + std::to_string(r.status) + ": " + r.err);
  if (r.status == 2 && r.err.rfind("fmsim: error: ", 0) != 0) finding("exit 2 without an error message: " + r.err);
}

}  // namespace fmsim::fuzz
