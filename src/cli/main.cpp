// Entry point of the fmsim command.
#include "cli/entry.hpp"

int main(int argc, char** argv) { return fmsim::cli::run(argc, argv); }
