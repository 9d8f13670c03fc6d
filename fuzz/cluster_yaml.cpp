// Fuzz target: a cluster YAML file (kind: Cluster; --cluster FILE): parsed, resolved against the
// shipped catalog and built into a topology, the path every command takes with --cluster FILE.
// The parser alone, not a command, on the text in memory (config::parse_cluster_text), so that
// one execution costs microseconds.
#include <string_view>

#include "config/catalog_loader.hpp"
#include "config/cluster_loader.hpp"
#include "fuzz_target.hpp"
#include "topology/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fmsim::fuzz::parse_or_finding("parse_cluster", [&] {
    const auto cluster = fmsim::config::parse_cluster_text(catalog, text, "cluster.yaml");
    (void)fmsim::topology::build_topology(cluster);
  });
  return 0;
}
