// Runs an external program (promtool) and captures what it prints.
#pragma once

#include <string>
#include <vector>

namespace fmsim::cli {

struct ProcessResult {
  int exit_code = -1;  ///< 127 when the program could not be started
  std::string output;  ///< stdout and stderr together
};

/// Runs argv[0] (looked up on PATH) with the arguments, no shell; waits for it, at most `timeout_s`
/// seconds (0: no limit): then it and its children are killed and exit_code is 124 (as timeout(1)
/// reports it), the output ending with a line that says so. The child dies with this process too
/// (PR_SET_PDEATHSIG), so killing fmsim leaves no program it started running.
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_s = 0);

/// True when `program` is an executable on PATH.
bool on_path(const std::string& program);

}  // namespace fmsim::cli
