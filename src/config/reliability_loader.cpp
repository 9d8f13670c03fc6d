// Parsing data/reliability/*.yaml into specs.
#include "config/reliability_loader.hpp"

#include <fmt/format.h>

#include "config/words.hpp"
#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

constexpr const char* kFailuresFile = "reliability/failures.yaml";
constexpr const char* kCheckpointingFile = "reliability/checkpointing.yaml";

std::string embedded_text(const char* path) {
  const auto text = core::embedded_file(path);
  FMSIM_CHECK(text.has_value(), std::string("missing embedded data file ") + path);
  return std::string(*text);
}

reliability::ComponentClass parse_class(const YamlNode& node) {
  return node.as_word(reliability::kComponentClassWords);
}

reliability::FailureModel parse_model(const YamlNode& node, bool shipped) {
  node.check_keys({"name", "source", "observation", "causes"});
  reliability::FailureModel m;
  m.name = node["name"].as_string();
  if (const auto source = node.find("source")) m.source = source->as_string();
  if (shipped && m.source.empty()) node.fail("missing 'source'");
  const YamlNode obs = node["observation"];
  obs.check_keys({"nodes", "duration"});
  m.observed_nodes = read_sourced(obs["nodes"], shipped).value.as_number(Bound::Positive);
  m.observed_duration = read_sourced(obs["duration"], shipped).value.as_duration();
  for (const YamlNode& item : node["causes"].items()) {
    item.check_keys({"name", "label", "class", "count", "replace", "planned", "source"});
    reliability::FailureCause c;
    c.name = item["name"].as_string();
    c.component = parse_class(item["class"]);
    c.count = item["count"].as_number(Bound::NonNegative);
    if (const auto replace = item.find("replace")) c.replace_node = replace->as_bool();
    if (const auto planned = item.find("planned")) c.planned = planned->as_bool();
    if (shipped && !item.has("source")) item.fail("missing 'source'");
    m.causes.push_back(c);
  }
  if (m.count(false) <= 0.0) node["causes"].fail("needs at least one unplanned cause with a positive count");
  return m;
}

void apply(FailureData& data, const YamlDocument& doc, bool shipped) {
  const YamlNode root = doc.node();
  root.check_keys({"kind", "models", "rates", "recovery"});
  if (root["kind"].as_string() != "FailureModels") root["kind"].fail("expected 'FailureModels'");
  if (const auto models = root.find("models")) {
    for (const YamlNode& item : models->items()) {
      reliability::FailureModel m = parse_model(item, shipped);
      bool replaced = false;
      for (auto& existing : data.models) {
        if (core::to_lower(existing.name) == core::to_lower(m.name)) {
          existing = m;
          replaced = true;
        }
      }
      if (!replaced) data.models.push_back(std::move(m));
    }
  }
  if (const auto rates = root.find("rates")) {
    for (const YamlNode& item : rates->items()) {
      item.check_keys({"name", "value", "unit", "source"});
      NamedRate r;
      r.name = item["name"].as_string();
      const double value = item["value"].as_number(Bound::Positive);
      const auto unit = item["unit"].as_word(reliability::kRateUnitWords);
      r.per_node_hour = unit == reliability::RateUnit::PerNodeHour
                            ? value
                            : reliability::per_node_hour_from_per_1000_node_days(value);
      if (const auto source = item.find("source")) r.source = source->as_string();
      if (shipped && r.source.empty()) item.fail("missing 'source'");
      bool replaced = false;
      for (auto& existing : data.rates) {
        if (core::to_lower(existing.name) == core::to_lower(r.name)) {
          existing = r;
          replaced = true;
        }
      }
      if (!replaced) data.rates.push_back(r);
    }
  }
  if (const auto rec = root.find("recovery")) {
    rec->check_keys({"detect", "replace", "restart", "repair", "spares"});
    auto duration = [&](const char* key, core::Seconds& out) {
      if (const auto v = rec->find(key)) out = read_sourced(*v, shipped).value.as_duration(Bound::NonNegative);
    };
    duration("detect", data.recovery.detect);
    duration("replace", data.recovery.replace);
    duration("restart", data.recovery.restart);
    duration("repair", data.recovery.repair);
    if (const auto v = rec->find("spares")) data.recovery.spares = v->as_int(Bound::NonNegative);
  }
}

}  // namespace

FailureData parse_failure_data(std::string_view text, const std::string& file) {
  FailureData data;
  apply(data, load_yaml_text(text, file), false);
  return data;
}

FailureData load_failure_data(const std::string& user_file, const std::string& flag) {
  FailureData data;
  apply(data, load_yaml_text(embedded_text(kFailuresFile), std::string("data/") + kFailuresFile), true);
  if (!user_file.empty()) apply(data, load_yaml_file(user_file, flag), false);
  return data;
}

const reliability::FailureModel& find_failure_model(const FailureData& data, const std::string& name,
                                                    const std::string& flag) {
  std::vector<std::string> names;
  for (const auto& m : data.models) {
    if (core::to_lower(m.name) == core::to_lower(name)) return m;
    names.push_back(m.name);
  }
  throw core::InputError::flag(flag, core::unknown_name_message("failure model", name, names));
}

CheckpointDefaults parse_checkpoint_defaults(std::string_view text, const std::string& file) {
  const YamlDocument doc = load_yaml_text(text, file);
  const YamlNode root = doc.node();
  root.check_keys({"kind", "contents", "engine", "client"});
  if (root["kind"].as_string() != "CheckpointDefaults") root["kind"].fail("expected 'CheckpointDefaults'");
  CheckpointDefaults d;
  const YamlNode contents = root["contents"];
  contents.check_keys({"bytes_per_param", "weight_bytes_per_param"});
  d.bytes_per_param = read_sourced(contents["bytes_per_param"], true).value.as_number(Bound::Positive);
  d.weight_bytes_per_param = read_sourced(contents["weight_bytes_per_param"], true).value.as_number(Bound::Positive);
  if (d.weight_bytes_per_param > d.bytes_per_param) contents["weight_bytes_per_param"].fail("exceeds bytes_per_param");
  const YamlNode engine = root["engine"];
  engine.check_keys({"device_to_host", "device_to_pageable", "writer_throughput", "reader_throughput"});
  d.engine.device_to_host = read_sourced(engine["device_to_host"], true).value.as_bandwidth();
  d.engine.pageable_copy = read_sourced(engine["device_to_pageable"], true).value.as_bandwidth();
  d.engine.writer_throughput = read_sourced(engine["writer_throughput"], true).value.as_bandwidth();
  d.engine.reader_throughput = read_sourced(engine["reader_throughput"], true).value.as_bandwidth();
  const YamlNode client = root["client"];
  client.check_keys({"s3_connections_per_node", "s3_part_size", "nvme_write_per_node", "nvme_read_per_node"});
  d.client.connections_per_node = read_sourced(client["s3_connections_per_node"], true).value.as_int(Bound::Positive);
  d.client.part_size = read_sourced(client["s3_part_size"], true).value.as_bytes();
  d.client.nvme_write_per_node = read_sourced(client["nvme_write_per_node"], true).value.as_bandwidth();
  d.client.nvme_read_per_node = read_sourced(client["nvme_read_per_node"], true).value.as_bandwidth();
  d.client.host_copy = d.engine.device_to_host;
  return d;
}

CheckpointDefaults load_checkpoint_defaults() {
  return parse_checkpoint_defaults(embedded_text(kCheckpointingFile), std::string("data/") + kCheckpointingFile);
}

double parse_node_failure_rate(const FailureData& data, const std::string& text, const std::string& flag) {
  for (const auto& r : data.rates) {
    if (core::to_lower(r.name) == core::to_lower(text)) return r.per_node_hour;
  }
  const auto v = core::parse_count(text);
  // One failure a node-day is 150 times Llama 3's measured rate; past it, the simulated failures
  // outnumber everything else (a cluster of 4 nodes at 10^9 ran for hours).
  constexpr double kMaxPer1000NodeDays = 1000;
  if (v && *v.value > kMaxPer1000NodeDays)
    throw core::InputError::flag(flag,
                                 fmt::format("{} per 1000 node-days is out of range; allowed: more than 0 to {:g} "
                                             "(one failure per node-day)",
                                             text, kMaxPer1000NodeDays));
  if (v && *v.value > 0.0) return reliability::per_node_hour_from_per_1000_node_days(*v.value);
  std::vector<std::string> names;
  for (const auto& r : data.rates) names.push_back(r.name);
  throw core::InputError::flag(
      flag, fmt::format("'{}' is neither a rate per 1000 node-days (e.g. 6.5) nor a known rate ({})", text,
                        core::join(names, ", ")));
}

}  // namespace fmsim::config
