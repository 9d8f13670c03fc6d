// Fuzz target: a cluster YAML file (kind: Cluster; --cluster FILE), resolved against the catalog
// and built into a topology by a small collective sweep.
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fmsim::fuzz::input_file("cluster.yaml", data, size);
  fmsim::fuzz::run_cli({"collective", "--cluster", path, "--min-bytes", "1M", "--max-bytes", "4M", "--json"});
  return 0;
}
