// Compiled by the test ModuleLinks.BackwardsIncludeFails with only fmsim_core's include root, as a
// file of src/core/ would be: core links no module, so a header of a module above it (training)
// must not be found. If this compiles, the per-module include roots (cmake/module_links.cmake) leak.
#include "training/step_model.hpp"

int main() { return 0; }
