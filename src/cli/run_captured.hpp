// Running an fmsim command inside the current process with its output captured.
#pragma once

#include <string>
#include <vector>

namespace fmsim::cli {

/// What one in-process run of a command produced.
struct CapturedRun {
  int status = 0;   ///< the exit status `fmsim` would return (0, 1, 2 bad input, 70 internal error)
  std::string out;  ///< what it wrote to std::cout
  std::string err;  ///< what it wrote to std::cerr
};

/// Runs `fmsim args...` (args without the program name) exactly as the executable would, with
/// std::cout and std::cerr redirected into strings for the call. The streams are per process:
/// one call at a time (the Python API holds the GIL; a sweep task runs its points in order).
CapturedRun run_captured(const std::vector<std::string>& args);

}  // namespace fmsim::cli
