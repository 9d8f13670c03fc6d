// fmsim validate training: placeholder registration until the command lands.
#include "cli/commands.hpp"

namespace fmsim::cli {

void add_validate_training(CLI::App& /*validate*/, Context& /*ctx*/) {}

}  // namespace fmsim::cli
