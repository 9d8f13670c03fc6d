#include "config/slurm_reservations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "config/slurm_syntax.hpp"
#include "core/error.hpp"

namespace fmsim::config {

namespace {

/// scontrol's StartTime/EndTime relative forms: now, now+N[seconds|minutes|hours|days]; or plain
/// seconds from the start of the replay.
double reservation_time(const std::string& path, int line, const std::string& key, const std::string& value) {
  const std::string v = lower_case(value);
  if (v == "now") return 0.0;
  if (v.rfind("now+", 0) == 0) {
    std::size_t used = 0;
    double n = -1;
    try {
      n = std::stod(v.substr(4), &used);
    } catch (const std::exception&) {}
    const std::string unit = v.substr(4 + used);
    double scale = 0;
    if (unit.empty() || unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds")
      scale = 1;
    else if (unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes")
      scale = 60;
    else if (unit == "hour" || unit == "hours")
      scale = 3600;
    else if (unit == "day" || unit == "days")
      scale = 86400;
    if (n >= 0 && scale > 0 && std::isfinite(n)) return n * scale;
  } else {
    try {
      std::size_t used = 0;
      const double n = std::stod(v, &used);
      if (used == v.size() && n >= 0 && std::isfinite(n)) return n;
    } catch (const std::exception&) {}
  }
  throw core::InputError(
      path, line, key,
      fmt::format("'{}' is not allowed; use now, now+N[minutes|hours|days] or seconds from the start", value));
}

}  // namespace

std::vector<orchestration::Reservation> parse_reservations(const std::string& text, const std::string& path,
                                                           orchestration::ClusterLayout& layout) {
  std::vector<orchestration::Reservation> out;
  for (const auto& cl : split_slurm_conf(text, path)) {
    orchestration::Reservation r;
    double duration = -1;
    bool has_end = false;
    int node_count = 0;
    std::string nodes_text;
    for (const auto& [key_in, v] : cl.pairs) {
      const std::string key = lower_case(key_in);
      if (key == "reservationname")
        r.name = v;
      else if (key == "starttime")
        r.start_s = reservation_time(path, cl.line, key_in, v);
      else if (key == "endtime") {
        r.end_s = reservation_time(path, cl.line, key_in, v);
        has_end = true;
      } else if (key == "duration") {
        duration = slurm_duration_value(path, cl.line, key_in, v);
        if (duration <= 0) throw core::InputError(path, cl.line, key_in, "must be a finite time of more than 0");
      } else if (key == "nodes")
        nodes_text = v;
      else if (key == "nodecnt")
        node_count = static_cast<int>(slurm_number_value(path, cl.line, key_in, v, 1));
      else if (key == "capacityblock")
        r.capacity_block = slurm_yes_no(path, cl.line, key_in, v);
      else if (key == "accounts" || key == "users") {
        std::stringstream ss(v);
        for (std::string item; std::getline(ss, item, ',');) (key == "users" ? r.users : r.accounts).push_back(item);
      } else if (key != "flags" && key != "partitionname") {
        throw core::InputError(path, cl.line, key_in,
                               "not allowed; use ReservationName, StartTime, EndTime or Duration, Nodes or NodeCnt, "
                               "Accounts, Users, Flags, PartitionName, CapacityBlock");
      }
    }
    if (r.name.empty()) throw core::InputError(path, cl.line, "ReservationName", "every reservation needs a name");
    for (const auto& other : out)
      if (other.name == r.name)
        throw core::InputError(path, cl.line, "ReservationName", fmt::format("'{}' is defined twice", r.name));
    if (has_end == (duration > 0))
      throw core::InputError(path, cl.line, "EndTime",
                             fmt::format("reservation {}: give EndTime or Duration (one of them)", r.name));
    if (!has_end) r.end_s = r.start_s + duration;
    if (r.end_s <= r.start_s)
      throw core::InputError(path, cl.line, "EndTime", fmt::format("reservation {} ends before it starts", r.name));
    if (nodes_text.empty() == (node_count == 0))
      throw core::InputError(path, cl.line, "Nodes",
                             fmt::format("reservation {}: give Nodes or NodeCnt (one of them)", r.name));
    if (!nodes_text.empty()) {
      for (const auto& name : expand_hostlist(nodes_text, path, cl.line, "Nodes")) {
        const int idx = layout.index_of(name);
        if (idx < 0)
          throw core::InputError(path, cl.line, "Nodes",
                                 fmt::format("reservation {}: node {} is not in the cluster", r.name, name));
        r.nodes.push_back(idx);
      }
    } else if (r.capacity_block) {
      r.nodes = orchestration::add_capacity_block_nodes(layout, r.name, node_count);
    } else {
      if (node_count > layout.nodes())
        throw core::InputError(
            path, cl.line, "NodeCnt",
            fmt::format("reservation {}: {} nodes; the cluster has {}", r.name, node_count, layout.nodes()));
      for (int i = layout.nodes() - node_count; i < layout.nodes(); ++i) r.nodes.push_back(i);
    }
    std::sort(r.nodes.begin(), r.nodes.end());
    r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
    out.push_back(std::move(r));
  }
  // A node in two reservations whose windows overlap cannot serve both.
  for (std::size_t a = 0; a < out.size(); ++a)
    for (std::size_t b = a + 1; b < out.size(); ++b) {
      if (out[a].start_s >= out[b].end_s || out[b].start_s >= out[a].end_s) continue;
      for (int node : out[a].nodes)
        if (std::binary_search(out[b].nodes.begin(), out[b].nodes.end(), node))
          throw core::InputError::flag(
              path, fmt::format("reservations {} and {} overlap in time and share node {}", out[a].name, out[b].name,
                                layout.node_names[static_cast<std::size_t>(node)]));
    }
  return out;
}

}  // namespace fmsim::config
