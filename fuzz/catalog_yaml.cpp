// Fuzz target: a user catalog YAML file (--catalog FILE: GPUs, systems, fabrics, storage),
// merged over the shipped catalog and built, as every command does with --catalog FILE.
#include <string>

#include "config/catalog_loader.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fmsim::fuzz::input_file("catalog.yaml", data, size);
  fmsim::fuzz::parse_or_finding("load_catalog", [&] { (void)fmsim::config::load_catalog({path}); });
  return 0;
}
