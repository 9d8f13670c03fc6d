// Fuzz target: a user catalog YAML file (--catalog FILE: GPUs, systems, fabrics, storage).
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fmsim::fuzz::input_file("catalog.yaml", data, size);
  fmsim::fuzz::run_cli({"--catalog", path, "catalog", "systems", "--json"});
  return 0;
}
