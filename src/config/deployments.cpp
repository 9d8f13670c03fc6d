// Serving deployments of `fmsim cluster` from a YAML file or --deployment flags (deployments.hpp).
#include "config/deployments.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "config/csv.hpp"
#include "config/flag_values.hpp"
#include "config/yaml_reader.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace fmsim::config {
namespace {

namespace orch = fmsim::orchestration;

using FieldFail = std::function<void(const std::string& message)>;  // throws InputError naming the field

double entry_number(const std::string& text, double lo, double hi, const FieldFail& fail, const std::string& unit) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v) && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {}
  fail(fmt::format("'{}' is not allowed; allowed: a number from {:g} to {:g}{}", text, lo, hi,
                   unit.empty() ? "" : " " + unit));
  return 0;
}

int entry_whole(const std::string& text, int lo, int hi, const FieldFail& fail) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {}
  fail(fmt::format("'{}' is not allowed; allowed: a whole number from {} to {}", text, lo, hi));
  return 0;
}

double entry_duration(const std::string& text, const FieldFail& fail) {
  try {
    const double s = parse_duration_flag(text, "").value();
    if (s >= 0 && s <= 86400.0 * 365) return s;
  } catch (const core::InputError&) {}
  fail(fmt::format("'{}' is not allowed; allowed: a duration up to a year (90s, 10m, 2h)", text));
  return 0;
}

template <class E>
E entry_word(const core::Vocabulary<E>& words, const std::string& text, const FieldFail& fail) {
  if (const auto v = words.parse(text)) return *v;
  fail(words.error(text));
  return E{};
}

/// Sets `key` of `e` from `value`; `fail` raises the error naming the key.
void set_key(DeploymentEntry& e, std::string key, const std::string& value, const FieldFail& fail) {
  for (auto& c : key)
    if (c == '_') c = '-';
  constexpr double kMaxRate = 1e6, kMaxTokens = 1e7;
  if (key == "name")
    e.name = value;
  else if (key == "model")
    e.model = value;
  else if (key == "engine")
    e.engine = value;
  else if (key == "precision")
    e.precision = value;
  else if (key == "tp")
    e.tp = entry_whole(value, 1, 4096, fail);
  else if (key == "isl")
    e.isl = entry_number(value, 1, kMaxTokens, fail, "tokens");
  else if (key == "osl")
    e.osl = entry_number(value, 1, kMaxTokens, fail, "tokens");
  else if (key == "slo-ttft") {
    entry_duration(value, fail);
    e.slo_ttft = value;
  } else if (key == "slo-tpot") {
    entry_duration(value, fail);
    e.slo_tpot = value;
  } else if (key == "cold-start")
    e.cold_start = value;
  else if (key == "rate")
    e.rate = entry_number(value, 0, kMaxRate, fail, "requests/s");
  else if (key == "shape")
    e.shape = entry_word(kRateShapeWords, value, fail);
  else if (key == "trough")
    e.trough = entry_number(value, 0, 1, fail, "(fraction of the peak rate)");
  else if (key == "peak-hour")
    e.peak_hour = entry_number(value, 0, 24, fail, "hours");
  else if (key == "rate-csv") {
    e.rate_csv = value;
    e.shape = RateShape::Csv;
    e.rate_steps = parse_rate_csv(read_text_file(value, "rate-csv"), value);
  } else if (key == "target-utilisation" || key == "target-utilization")
    e.autoscaling.target_utilisation = entry_number(value, 0.01, 1, fail, "");
  else if (key == "scale-up-delay")
    e.autoscaling.scale_up_delay_s = entry_duration(value, fail);
  else if (key == "scale-down-delay")
    e.autoscaling.scale_down_delay_s = entry_duration(value, fail);
  else if (key == "min-replicas")
    e.autoscaling.min_replicas = entry_whole(value, 0, 100000, fail);
  else if (key == "max-replicas")
    e.autoscaling.max_replicas = entry_whole(value, 1, 100000, fail);
  else if (key == "share")
    e.share = entry_word(orch::kFleetShareWords, value, fail);
  else if (key == "nodes")
    e.nodes = entry_whole(value, 1, 20000, fail);
  else if (key == "queue-timeout")
    e.queue_timeout_s = entry_duration(value, fail);
  else {
    std::string allowed;
    for (const auto& k : deployment_keys()) allowed += (allowed.empty() ? "" : ", ") + k;
    fail(fmt::format("unknown key '{}'; allowed: {}", key, allowed));
  }
}

/// What holds for the whole entry once every key is read.
void check_deployment_entry(DeploymentEntry& e, int index, const FieldFail& fail) {
  if (e.name.empty()) e.name = fmt::format("deployment-{}", index + 1);
  if (e.shape == RateShape::Csv && e.rate_steps.empty()) fail("shape: csv needs rate-csv: FILE (time_s,rate)");
  if (e.shape != RateShape::Csv && e.rate <= 0) fail("rate: needed, a positive number of requests/s");
  if (e.autoscaling.scale_down_delay_s < e.autoscaling.scale_up_delay_s)
    fail("scale-down-delay: must be at least scale-up-delay");
  if (e.autoscaling.max_replicas > 0 && e.autoscaling.max_replicas < e.autoscaling.min_replicas)
    fail("max-replicas: must be at least min-replicas");
  if (e.share == orch::FleetShare::Reserved && e.nodes <= 0) fail("nodes: share reserved needs nodes: N");
  if (e.share == orch::FleetShare::Preempt && e.nodes > 0) fail("nodes: applies to share reserved only");
}

}  // namespace

const std::vector<std::string>& deployment_keys() {
  static const std::vector<std::string> keys{"name",
                                             "model",
                                             "engine",
                                             "precision",
                                             "tp",
                                             "isl",
                                             "osl",
                                             "rate",
                                             "shape",
                                             "trough",
                                             "peak-hour",
                                             "rate-csv",
                                             "slo-ttft",
                                             "slo-tpot",
                                             "cold-start",
                                             "target-utilisation",
                                             "scale-up-delay",
                                             "scale-down-delay",
                                             "min-replicas",
                                             "max-replicas",
                                             "share",
                                             "nodes",
                                             "queue-timeout"};
  return keys;
}

std::vector<DeploymentEntry> load_deployments_file(const std::string& path) {
  const YamlDocument doc = load_yaml_file(path, "--deployments");
  YamlNode list = doc.node();
  if (list.is_map()) {
    list.check_keys({"deployments"});
    list = list["deployments"];
  }
  if (!list.is_sequence()) list.fail("expected a list of deployments (deployments: - name: ...)");
  std::vector<DeploymentEntry> out;
  const auto items = list.items();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const YamlNode& item = items[i];
    item.expect_map("a deployment (name:, model:, rate: ...)");
    DeploymentEntry e;
    e.source = path;
    e.line = item.line();
    for (const auto& [key, value] : item.entries()) {
      const FieldFail fail = [&value](const std::string& m) { value.fail(m); };
      set_key(e, key, value.as_string(), fail);
    }
    check_deployment_entry(e, static_cast<int>(i), [&item](const std::string& m) { item.fail(m); });
    out.push_back(std::move(e));
  }
  if (out.empty()) list.fail("no deployments");
  return out;
}

DeploymentEntry parse_deployment_flag(const std::string& text) {
  DeploymentEntry e;
  e.source = "--deployment";
  std::size_t from = 0;
  while (from <= text.size()) {
    const auto comma = std::min(text.find(',', from), text.size());
    const std::string pair(core::trim_blanks(text.substr(from, comma - from)));
    from = comma + 1;
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw core::InputError::flag("--deployment", fmt::format("'{}' is not KEY=VALUE", pair));
    const std::string key = pair.substr(0, eq);
    set_key(e, key, pair.substr(eq + 1),
            [&key](const std::string& m) { throw core::InputError::flag("--deployment", key + ": " + m); });
  }
  check_deployment_entry(e, 0, [](const std::string& m) { throw core::InputError::flag("--deployment", m); });
  return e;
}

std::vector<orch::Step> parse_rate_csv(const std::string& text, const std::string& file) {
  const CsvTable table(parse_csv(text, file), file, "empty rate CSV; expected a header time_s,rate",
                       {{"time", "time_s"}, {"rate_rps", "rate"}});
  table.require({"time_s", "rate"}, "the rate CSV needs columns time_s and rate");
  std::vector<orch::Step> steps;
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const int line = table.line(r);
    auto cell = [&](const std::string& column, double lo, double hi) {
      const std::string c = table.cell(r, column);
      return entry_number(
          c, lo, hi, [&](const std::string& m) { throw core::InputError(file, line, column, m); },
          column == "rate" ? "requests/s" : "seconds");
    };
    const double t = cell("time_s", 0, 86400.0 * 3653);
    const double rate = cell("rate", 0, 1e6);
    if (steps.empty() && t != 0) throw core::InputError(file, line, "time_s", "the first row must be at time 0");
    if (!steps.empty() && t <= steps.back().start_s)
      throw core::InputError(file, line, "time_s",
                             fmt::format("{:g} is not after the row before ({:g})", t, steps.back().start_s));
    steps.push_back({t, rate});
  }
  if (steps.empty()) throw core::InputError(file, 1, "rate", "no rows");
  return steps;
}

}  // namespace fmsim::config
