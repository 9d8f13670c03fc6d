// Parsing data/calibration/collectives.yaml into collectives::Calibration.
#include "config/collectives_calibration.hpp"

#include <fmt/format.h>

#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"

namespace fmsim::config {

namespace {

double collectives_number(const YamlNode& node, Bound bound = Bound::NonNegative) {
  return read_sourced(node, true).value.as_number(bound);
}

int collectives_integer(const YamlNode& node) { return read_sourced(node, true).value.as_int(Bound::Positive); }

std::vector<double> list(const YamlNode& node, std::size_t expected = 0) {
  const SourcedValue v = read_sourced(node, true);
  std::vector<double> out;
  for (const YamlNode& item : v.value.items()) out.push_back(item.as_number(Bound::NonNegative));
  if (expected != 0 && out.size() != expected) {
    v.value.fail(fmt::format("expected {} numbers, got {}", expected, out.size()));
  }
  if (out.empty()) v.value.fail("expected at least one number");
  return out;
}

std::array<double, 3> triple(const YamlNode& node) {
  const std::vector<double> v = list(node, 3);
  return {v[0], v[1], v[2]};
}

collectives::AlgorithmLatency latency(const YamlNode& node) {
  node.check_keys({"base", "nvlink", "pci", "network"});
  return {triple(node["base"]), triple(node["nvlink"]), triple(node["pci"]), triple(node["network"])};
}

collectives::FamilyTuning family(const YamlNode& node) {
  node.check_keys({"nvlink_link_bandwidth", "ring_efficiency", "nvls_efficiency", "channel_speeds", "nvls_max_channels",
                   "ring_channel_bandwidth", "ll_max_bandwidth", "ring_ll128_per_channel", "tree_ll128_per_channel",
                   "tree_per_channel"});
  collectives::FamilyTuning f;
  f.nvlink_link_bandwidth = collectives_number(node["nvlink_link_bandwidth"], Bound::Positive);
  f.ring_efficiency = collectives_number(node["ring_efficiency"], Bound::Positive);
  f.nvls_efficiency = collectives_number(node["nvls_efficiency"]);
  f.channel_speeds = list(node["channel_speeds"]);
  f.nvls_max_channels = collectives_integer(node["nvls_max_channels"]);
  f.ring_channel_bandwidth = collectives_number(node["ring_channel_bandwidth"], Bound::Positive);
  f.ll_max_bandwidth = collectives_number(node["ll_max_bandwidth"], Bound::Positive);
  f.ring_ll128_per_channel = triple(node["ring_ll128_per_channel"]);
  f.tree_ll128_per_channel = triple(node["tree_ll128_per_channel"]);
  f.tree_per_channel = triple(node["tree_per_channel"]);
  for (const char* key : {"ring_efficiency", "nvls_efficiency"}) {
    const double v = collectives_number(node[key]);
    if (v > 1.0) node[key].fail(fmt::format("{} is a fraction and must be at most 1", v));
  }
  return f;
}

}  // namespace

collectives::Calibration load_collectives_calibration(const std::string& path) {
  YamlDocument doc;
  if (path.empty()) {
    const auto text = core::embedded_file("calibration/collectives.yaml");
    FMSIM_CHECK(text.has_value(), "data/calibration/collectives.yaml is not embedded");
    doc = load_yaml_text(*text, "data/calibration/collectives.yaml");
  } else {
    doc = load_yaml_file(path, "--calibration");
  }
  const YamlNode root = doc.node();
  root.check_keys({"kind", "latency_us", "ll_max_bandwidth_intel", "ll_max_bandwidth_amd", "net_overhead_intel_us",
                   "net_overhead_amd_us", "factors", "tree_correction", "max_channels", "pci_bandwidth", "families",
                   "nvls", "p2p"});
  if (root["kind"].as_string() != "CollectivesCalibration") {
    root["kind"].fail("expected kind: CollectivesCalibration");
  }
  collectives::Calibration c;
  const YamlNode lat = root["latency_us"];
  lat.check_keys({"tree", "ring", "nvls", "nvls_tree", "pat"});
  c.tree = latency(lat["tree"]);
  c.ring = latency(lat["ring"]);
  c.nvls = latency(lat["nvls"]);
  c.nvls_tree = latency(lat["nvls_tree"]);
  c.pat = latency(lat["pat"]);
  c.ll_max_bandwidth_intel = triple(root["ll_max_bandwidth_intel"]);
  c.ll_max_bandwidth_amd = triple(root["ll_max_bandwidth_amd"]);
  c.net_overhead_intel_us = collectives_number(root["net_overhead_intel_us"]);
  c.net_overhead_amd_us = collectives_number(root["net_overhead_amd_us"]);

  const YamlNode f = root["factors"];
  f.check_keys({"ring_ll", "ring_ll128", "tree", "tree_ll", "tree_ll128_one_node", "tree_ll128_multi_node", "pat",
                "pat_log_latency_divisor", "pat_per_rank_latency_us", "ring_plateau"});
  c.ring_ll_factor = collectives_number(f["ring_ll"], Bound::Positive);
  c.ring_ll128_factor = collectives_number(f["ring_ll128"], Bound::Positive);
  c.tree_factor = collectives_number(f["tree"], Bound::Positive);
  c.tree_ll_factor = collectives_number(f["tree_ll"], Bound::Positive);
  c.tree_ll128_factor_one_node = collectives_number(f["tree_ll128_one_node"], Bound::Positive);
  c.tree_ll128_factor_multi_node = collectives_number(f["tree_ll128_multi_node"], Bound::Positive);
  c.pat_factor = collectives_number(f["pat"], Bound::Positive);
  c.pat_log_latency_divisor = collectives_number(f["pat_log_latency_divisor"], Bound::Positive);
  c.pat_per_rank_latency_us = collectives_number(f["pat_per_rank_latency_us"]);
  c.ring_plateau_factor = collectives_number(f["ring_plateau"], Bound::Positive);

  const SourcedValue corr = read_sourced(root["tree_correction"], true);
  const std::vector<YamlNode> rows = corr.value.items();
  if (rows.size() != 3) corr.value.fail("expected 3 rows (LL, LL128, Simple)");
  for (std::size_t p = 0; p < 3; ++p) {
    const std::vector<YamlNode> cells = rows[p].items();
    if (cells.size() != 24) rows[p].fail(fmt::format("expected 24 factors (64 B .. 512 MiB), got {}", cells.size()));
    for (std::size_t i = 0; i < 24; ++i) c.tree_correction[p][i] = cells[i].as_number(Bound::Positive);
  }
  c.max_channels = collectives_integer(root["max_channels"]);
  c.pci_bandwidth = collectives_number(root["pci_bandwidth"], Bound::Positive);

  const YamlNode fam = root["families"];
  fam.check_keys({"volta", "ampere", "hopper", "blackwell"});
  c.families = {family(fam["volta"]), family(fam["ampere"]), family(fam["hopper"]), family(fam["blackwell"])};

  const YamlNode nvls = root["nvls"];
  nvls.check_keys({"channel_budget", "mnnvl_latency_per_node_us"});
  c.nvls_channel_budget = collectives_number(nvls["channel_budget"], Bound::Positive);
  c.mnnvl_nvls_latency_per_node_us = collectives_number(nvls["mnnvl_latency_per_node_us"]);

  const YamlNode p2p = root["p2p"];
  p2p.check_keys({"nvlink_efficiency", "max_nics_per_gpu", "efa_multi_rail", "base_latency_us", "per_peer_latency_us"});
  c.p2p_nvlink_efficiency = collectives_number(p2p["nvlink_efficiency"], Bound::Positive);
  c.p2p_max_nics_per_gpu = collectives_integer(p2p["max_nics_per_gpu"]);
  if (p2p.has("efa_multi_rail")) c.p2p_efa_multi_rail = read_sourced(p2p["efa_multi_rail"], true).value.as_bool();
  c.p2p_base_latency_us = collectives_number(p2p["base_latency_us"]);
  c.p2p_per_peer_latency_us = collectives_number(p2p["per_peer_latency_us"]);
  return c;
}

}  // namespace fmsim::config
