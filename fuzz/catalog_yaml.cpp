// Fuzz target: a user catalog YAML file (--catalog FILE: GPUs, systems, fabrics, storage),
// merged over the shipped catalog and built, as every command does with --catalog FILE. The
// shipped catalog is parsed and built once per process; each input converts only the entries it
// writes or merges into (config::load_catalog_text, the in-memory form of load_catalog).
#include <string_view>

#include "config/catalog_loader.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fmsim::fuzz::parse_or_finding("load_catalog", [&] { (void)fmsim::config::load_catalog_text(text, "catalog.yaml"); });
  return 0;
}
