// The fmsim command's entry point, apart from the command layer's headers: main.cpp includes only
// this, so the executable's one source does not parse CLI11 and nlohmann/json again (18 s of CPU at
// -O3 with cli/commands.hpp, measured 2026-11-29, g++ 12).
#pragma once

namespace fmsim::cli {

/// Parses argv, runs the command it names and returns the process exit status (0 success, 1 a
/// failed check, 2 bad input). Defined in app.cpp; declared in cli/commands.hpp too.
int run(int argc, char** argv);

}  // namespace fmsim::cli
