// Entry point of the fmsim command.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return fmsim::cli::run(argc, argv); }
