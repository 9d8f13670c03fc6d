// fmsim validate collectives: placeholder registration until the command lands.
#include "cli/commands.hpp"

namespace fmsim::cli {

void add_validate_collectives(CLI::App& /*validate*/, Context& /*ctx*/) {}

}  // namespace fmsim::cli
