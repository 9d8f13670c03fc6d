// What the flags-to-job layer needs to know of the command line: which flags were given (a job
// file's value yields to a flag given on the command line).
#pragma once

#include <functional>
#include <string_view>

namespace fmsim::jobspec {

/// True when the flag (e.g. "--tp") was given on the command line.
using FlagGiven = std::function<bool(std::string_view flag)>;

}  // namespace fmsim::jobspec
