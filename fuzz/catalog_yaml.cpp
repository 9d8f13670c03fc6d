// Fuzz target: a user catalog YAML file (--catalog FILE: GPUs, systems, fabrics, storage),
// merged over the shipped catalog and built, as every command does with --catalog FILE.
#include <exception>
#include <string>

#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fmsim::fuzz::input_file("catalog.yaml", data, size);
  try {
    (void)fmsim::config::load_catalog({path});
  } catch (const fmsim::core::InputError&) {
  } catch (const std::exception& e) {
    fmsim::fuzz::finding(std::string("load_catalog: ") + e.what());
  }
  return 0;
}
