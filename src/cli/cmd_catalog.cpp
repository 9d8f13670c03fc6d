// fmsim catalog: placeholder registration until the command lands.
#include "cli/commands.hpp"

namespace fmsim::cli {

void add_catalog_command(CLI::App& /*app*/, Context& /*ctx*/) {}

}  // namespace fmsim::cli
