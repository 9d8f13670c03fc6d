// Runs an external program (promtool) and captures what it prints.
#pragma once

#include <string>
#include <vector>

namespace fmsim::cli {

struct ProcessResult {
  int exit_code = -1;  ///< 127 when the program could not be started
  std::string output;  ///< stdout and stderr together
};

/// Runs argv[0] (looked up on PATH) with the arguments, no shell; waits for it.
ProcessResult run_process(const std::vector<std::string>& argv);

/// True when `program` is an executable on PATH.
bool on_path(const std::string& program);

}  // namespace fmsim::cli
