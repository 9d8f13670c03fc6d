#include "orchestration/slurm_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/vocabulary.hpp"
#include "orchestration/reservation.hpp"

namespace fmsim::orchestration {

int SlurmConfig::partition_index(const std::string& name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (name.empty() ? partitions[i].is_default : partitions[i].name == name) return static_cast<int>(i);
  }
  if (name.empty() && !partitions.empty()) return 0;  // no Default=YES: the first
  return -1;
}

int SlurmConfig::qos_index(const std::string& name) const {
  for (std::size_t i = 0; i < qos.size(); ++i)
    if (qos[i].name == name) return static_cast<int>(i);
  return -1;
}

double parse_slurm_duration(const std::string& text_in) {
  std::string text = text_in;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  if (text == "UNLIMITED" || text == "INFINITE") return 0.0;
  if (text.empty()) return -1;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != ':' && c != '-') return -1;
  long days = 0;
  std::string rest = text;
  const auto dash = text.find('-');
  const bool has_days = dash != std::string::npos;
  if (has_days) {
    if (dash == 0) return -1;
    days = std::stol(text.substr(0, dash));
    rest = text.substr(dash + 1);
  }
  std::vector<long> parts;
  std::stringstream ss(rest);
  std::string item;
  while (std::getline(ss, item, ':')) {
    if (item.empty() || item.find('-') != std::string::npos) return -1;
    parts.push_back(std::stol(item));
  }
  if (parts.empty() || parts.size() > 3) return -1;
  double s = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    s = parts[0] * 3600.0 + (parts.size() > 1 ? parts[1] * 60.0 : 0) + (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    s = parts[0] * 60.0;  // minutes
  } else if (parts.size() == 2) {
    s = parts[0] * 60.0 + parts[1];  // MM:SS
  } else {
    s = parts[0] * 3600.0 + parts[1] * 60.0 + parts[2];
  }
  return days * 86400.0 + s;
}

std::vector<std::string> expand_hostlist(const std::string& text) {
  std::vector<std::string> out;
  // Split at commas outside brackets.
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) items.push_back(cur);
  for (const auto& item : items) {
    const auto open = item.find('[');
    if (open == std::string::npos) {
      out.push_back(item);
      continue;
    }
    const auto close = item.find(']', open);
    if (close == std::string::npos)
      throw core::InputError::flag("hostlist", fmt::format("'{}' has no closing ]", item));
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    std::stringstream ss(item.substr(open + 1, close - open - 1));
    std::string range;
    while (std::getline(ss, range, ',')) {
      const auto dash = range.find('-');
      const std::string lo = range.substr(0, dash);
      const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      const bool digits = !lo.empty() && !hi.empty() &&
                          std::all_of(lo.begin(), lo.end(), [](unsigned char c) { return std::isdigit(c); }) &&
                          std::all_of(hi.begin(), hi.end(), [](unsigned char c) { return std::isdigit(c); });
      if (!digits) throw core::InputError::flag("hostlist", fmt::format("'{}' is not a numeric range", range));
      const long a = std::stol(lo), b = std::stol(hi);
      if (b < a || b - a > 1000000)
        throw core::InputError::flag("hostlist", fmt::format("'{}' is not an ascending range", range));
      for (long v = a; v <= b; ++v) {
        std::string num = std::to_string(v);
        if (num.size() < lo.size()) num = std::string(lo.size() - num.size(), '0') + num;
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// One logical line: Key=Value pairs (values may be quoted), with the physical line number.
struct ConfLine {
  int line = 0;
  std::vector<std::pair<std::string, std::string>> pairs;
};

std::vector<ConfLine> split_conf(const std::string& text, const std::string& path) {
  std::vector<ConfLine> out;
  std::stringstream in(text);
  std::string physical, logical;
  int line_no = 0, start_line = 0;
  while (std::getline(in, physical)) {
    ++line_no;
    if (!physical.empty() && physical.back() == '\r') physical.pop_back();
    const auto hash = physical.find('#');
    if (hash != std::string::npos) physical = physical.substr(0, hash);
    if (logical.empty()) start_line = line_no;
    if (!physical.empty() && physical.back() == '\\') {
      logical += physical.substr(0, physical.size() - 1) + " ";
      continue;
    }
    logical += physical;
    ConfLine cl;
    cl.line = start_line;
    std::size_t i = 0;
    while (i < logical.size()) {
      while (i < logical.size() && std::isspace(static_cast<unsigned char>(logical[i]))) ++i;
      if (i >= logical.size()) break;
      std::size_t eq = logical.find('=', i);
      std::size_t space = i;
      while (space < logical.size() && !std::isspace(static_cast<unsigned char>(logical[space]))) ++space;
      if (eq == std::string::npos || eq > space)
        throw core::InputError(path, start_line, logical.substr(i, space - i), "expected Key=Value");
      const std::string key = logical.substr(i, eq - i);
      std::string value;
      i = eq + 1;
      if (i < logical.size() && logical[i] == '"') {
        const auto close = logical.find('"', i + 1);
        if (close == std::string::npos) throw core::InputError(path, start_line, key, "unterminated quoted value");
        value = logical.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        while (i < logical.size() && !std::isspace(static_cast<unsigned char>(logical[i]))) value += logical[i++];
      }
      cl.pairs.push_back({key, value});
    }
    if (!cl.pairs.empty()) out.push_back(std::move(cl));
    logical.clear();
  }
  return out;
}

double duration_value(const std::string& path, int line, const std::string& key, const std::string& value) {
  const double d = parse_slurm_duration(value);
  if (d < 0)
    throw core::InputError(
        path, line, key,
        fmt::format("'{}' is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] or UNLIMITED)", value));
  return d;
}

double number_value(const std::string& path, int line, const std::string& key, const std::string& value, double lo) {
  try {
    std::size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size() && std::isfinite(v) && v >= lo) return v;
  } catch (const std::exception&) {}
  throw core::InputError(path, line, key, fmt::format("'{}' is not a number of at least {}", value, lo));
}

bool yes_no(const std::string& path, int line, const std::string& key, const std::string& value) {
  if (const auto v = core::kYesNoWords.parse(value)) return *v;
  throw core::InputError(path, line, key,
                         fmt::format("'{}' is not allowed; use YES or NO ({})", value, core::kYesNoWords.allowed()));
}

// PreemptMode=MODE[,GANG]: the mode before any GANG flag.
PreemptMode preempt_mode_value(const std::string& path, int line, const std::string& key, const std::string& value) {
  const auto mode = kPreemptModeWords.parse(value.substr(0, value.find(',')));
  if (!mode)
    throw core::InputError(path, line, key, fmt::format("'{}' is not modelled; use OFF, CANCEL or REQUEUE", value));
  return *mode;
}

void scheduler_parameters(SlurmConfig& c, const std::string& path, int line, const std::string& value) {
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = lower(item.substr(0, eq));
    const std::string v = eq == std::string::npos ? "" : item.substr(eq + 1);
    const std::string field = "SchedulerParameters " + key;
    if (key == "bf_interval")
      c.bf_interval_s = number_value(path, line, field, v, 1);
    else if (key == "bf_window")
      c.bf_window_s = number_value(path, line, field, v, 1) * 60.0;
    else if (key == "bf_max_job_test")
      c.bf_max_job_test = static_cast<int>(number_value(path, line, field, v, 1));
    else if (key == "bf_resolution")
      c.bf_resolution_s = number_value(path, line, field, v, 1);
    else if (key == "sched_interval")
      c.sched_interval_s = number_value(path, line, field, v, 1);
    else if (key == "batch_sched_delay")
      c.batch_sched_delay_s = number_value(path, line, field, v, 0);
    else if (key == "sched_min_interval")
      c.sched_min_interval_s = number_value(path, line, field, v, 0) * 1e-6;
    else if (key == "default_queue_depth")
      c.default_queue_depth = static_cast<int>(number_value(path, line, field, v, 1));
    // Others (bf_continue, bf_yield_interval, ...) are accepted and ignored.
  }
}

}  // namespace

SlurmConfFile parse_slurm_conf(const std::string& text, const std::string& path) {
  SlurmConfFile out;
  SlurmConfig& c = out.config;
  struct PendingPartition {
    PartitionConfig config;
    std::string nodes_text;
    int line;
  };
  std::vector<PendingPartition> partitions;
  std::set<std::string> node_set;
  long default_cpus = 1;  // slurm.conf(5): CPUs defaults to 1
  for (const auto& cl : split_conf(text, path)) {
    const std::string head = lower(cl.pairs[0].first);
    const std::string& head_value = cl.pairs[0].second;
    if (head == "nodename") {
      long cpus = default_cpus;
      for (std::size_t i = 1; i < cl.pairs.size(); ++i)
        if (lower(cl.pairs[i].first) == "cpus")
          cpus = static_cast<long>(number_value(path, cl.line, "CPUs", cl.pairs[i].second, 1));
      if (lower(head_value) == "default") {
        default_cpus = cpus;
        continue;
      }
      for (const auto& name : expand_hostlist(head_value)) {
        c.total_cpus += cpus;
        if (!node_set.insert(name).second)
          throw core::InputError(path, cl.line, "NodeName", fmt::format("node {} is defined twice", name));
        out.node_names.push_back(name);
      }
      continue;
    }
    if (head == "partitionname") {
      if (lower(head_value) == "default") continue;
      PendingPartition p;
      p.config.name = head_value;
      p.line = cl.line;
      bool tier_set = false;
      for (std::size_t i = 1; i < cl.pairs.size(); ++i) {
        const std::string key = lower(cl.pairs[i].first);
        const std::string& v = cl.pairs[i].second;
        if (key == "nodes")
          p.nodes_text = v;
        else if (key == "default")
          p.config.is_default = yes_no(path, cl.line, "Default", v);
        else if (key == "maxtime")
          p.config.max_time_s = duration_value(path, cl.line, "MaxTime", v);
        else if (key == "defaulttime")
          p.config.default_time_s = duration_value(path, cl.line, "DefaultTime", v);
        else if (key == "prioritytier") {
          p.config.priority_tier = static_cast<int>(number_value(path, cl.line, "PriorityTier", v, 0));
          tier_set = true;
        } else if (key == "priorityjobfactor")
          p.config.priority_job_factor = static_cast<int>(number_value(path, cl.line, "PriorityJobFactor", v, 0));
        else if (key == "priority") {  // the old name sets both
          const int prio = static_cast<int>(number_value(path, cl.line, "Priority", v, 0));
          p.config.priority_job_factor = prio;
          if (!tier_set) p.config.priority_tier = prio;
        } else if (key == "preemptmode")
          p.config.preempt_mode = preempt_mode_value(path, cl.line, "PreemptMode", v);
        else if (key == "gracetime")
          p.config.grace_time_s = number_value(path, cl.line, "GraceTime", v, 0);
      }
      partitions.push_back(std::move(p));
      continue;
    }
    for (const auto& [key_in, v] : cl.pairs) {
      const std::string key = lower(key_in);
      out.values[key_in] = v;
      if (key == "schedulertype") {
        if (v != "sched/backfill" && v != "sched/builtin")
          throw core::InputError(path, cl.line, key_in,
                                 fmt::format("'{}' is not modelled; use sched/backfill or sched/builtin", v));
        c.backfill = v == "sched/backfill";
      } else if (key == "prioritytype") {
        if (v != "priority/basic" && v != "priority/multifactor")
          throw core::InputError(path, cl.line, key_in,
                                 fmt::format("'{}' is not allowed; use priority/basic or priority/multifactor", v));
        c.multifactor = v == "priority/multifactor";
      } else if (key == "schedulerparameters")
        scheduler_parameters(c, path, cl.line, v);
      else if (key == "priorityweightage")
        c.weight_age = number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightfairshare")
        c.weight_fairshare = number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightjobsize")
        c.weight_job_size = number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightpartition")
        c.weight_partition = number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightqos")
        c.weight_qos = number_value(path, cl.line, key_in, v, 0);
      else if (key == "prioritymaxage")
        c.max_age_s = duration_value(path, cl.line, key_in, v);
      else if (key == "prioritydecayhalflife")
        c.decay_half_life_s = duration_value(path, cl.line, key_in, v);
      else if (key == "prioritycalcperiod")
        c.calc_period_s = std::max(60.0, duration_value(path, cl.line, key_in, v));
      else if (key == "priorityfavorsmall")
        c.favor_small = yes_no(path, cl.line, key_in, v);
      else if (key == "priorityflags") {
        std::string flags = v;
        std::transform(flags.begin(), flags.end(), flags.begin(), [](unsigned char ch) { return std::toupper(ch); });
        std::stringstream ss(flags);
        for (std::string flag; std::getline(ss, flag, ',');)
          if (flag == "NO_FAIR_TREE") c.fair_tree = false;
      } else if (key == "preempttype") {
        const auto type = kPreemptTypeWords.parse(v);
        if (!type)
          throw core::InputError(
              path, cl.line, key_in,
              fmt::format("'{}' is not allowed; use preempt/none, preempt/partition_prio or preempt/qos", v));
        c.preempt_type = *type;
      } else if (key == "preemptmode") {
        c.preempt_mode = preempt_mode_value(path, cl.line, key_in, v);
      } else if (key == "topologyplugin") {
        if (v == "topology/tree")
          c.placement = Placement::Tree;
        else if (v == "topology/block")
          c.placement = Placement::Block;
        else if (v == "topology/none" || v == "topology/default")
          c.placement = Placement::Consecutive;
        else
          throw core::InputError(
              path, cl.line, key_in,
              fmt::format("'{}' is not allowed; use topology/tree, topology/block or topology/none", v));
        out.topology_plugin = v;
      } else if (key == "jobrequeue")
        c.requeue_default = number_value(path, cl.line, key_in, v, 0) != 0;
      else if (key == "killwait")
        c.kill_wait_s = number_value(path, cl.line, key_in, v, 0);
      else if (key == "overtimelimit")
        c.over_time_limit_s = number_value(path, cl.line, key_in, v, 0) * 60.0;
    }
  }
  for (auto& p : partitions) {
    if (!p.nodes_text.empty() && lower(p.nodes_text) != "all") {
      for (const auto& name : expand_hostlist(p.nodes_text)) {
        const auto it = std::find(out.node_names.begin(), out.node_names.end(), name);
        if (it == out.node_names.end())
          throw core::InputError(path, p.line, "Nodes",
                                 fmt::format("partition {}: node {} has no NodeName line", p.config.name, name));
        p.config.nodes.push_back(static_cast<int>(it - out.node_names.begin()));
      }
    }
    c.partitions.push_back(p.config);
  }
  return out;
}

void apply_topology_conf(ClusterLayout& layout, const std::string& text, const std::string& path) {
  layout.switches.clear();
  layout.node_block.assign(static_cast<std::size_t>(layout.nodes()), -1);
  layout.block_size = 0;
  struct Pending {
    int line;
    std::vector<std::string> children;
  };
  std::vector<Pending> pending;
  int blocks = 0;
  for (const auto& cl : split_conf(text, path)) {
    const std::string head = lower(cl.pairs[0].first);
    auto node_indices = [&](const std::string& list) {
      std::vector<int> out;
      for (const auto& name : expand_hostlist(list)) {
        const int i = layout.index_of(name);
        if (i < 0) throw core::InputError(path, cl.line, "Nodes", fmt::format("node {} is not in the cluster", name));
        out.push_back(i);
      }
      return out;
    };
    if (head == "switchname") {
      Switch sw;
      sw.name = cl.pairs[0].second;
      Pending p{cl.line, {}};
      for (std::size_t i = 1; i < cl.pairs.size(); ++i) {
        const std::string key = lower(cl.pairs[i].first);
        if (key == "nodes")
          sw.nodes = node_indices(cl.pairs[i].second);
        else if (key == "switches")
          p.children = expand_hostlist(cl.pairs[i].second);
      }
      layout.switches.push_back(std::move(sw));
      pending.push_back(std::move(p));
    } else if (head == "blockname") {
      for (std::size_t i = 1; i < cl.pairs.size(); ++i)
        if (lower(cl.pairs[i].first) == "nodes") {
          const auto nodes = node_indices(cl.pairs[i].second);
          for (int n : nodes) layout.node_block[static_cast<std::size_t>(n)] = blocks;
          layout.block_size = std::max(layout.block_size, static_cast<int>(nodes.size()));
        }
      ++blocks;
    } else if (head == "blocksizes") {
      layout.block_size = static_cast<int>(
          number_value(path, cl.line, "BlockSizes", cl.pairs[0].second.substr(0, cl.pairs[0].second.find(',')), 1));
    } else {
      throw core::InputError(path, cl.line, cl.pairs[0].first, "expected SwitchName=, BlockName= or BlockSizes=");
    }
  }
  for (std::size_t i = 0; i < pending.size(); ++i)
    for (const auto& child : pending[i].children) {
      auto it = std::find_if(layout.switches.begin(), layout.switches.end(),
                             [&](const Switch& s) { return s.name == child; });
      if (it == layout.switches.end())
        throw core::InputError(path, pending[i].line, "Switches", fmt::format("switch {} is not defined", child));
      it->parent = static_cast<int>(i);
    }
  layout.finalize();
}

namespace {

/// scontrol's StartTime/EndTime relative forms: now, now+N[seconds|minutes|hours|days]; or plain
/// seconds from the start of the replay.
double reservation_time(const std::string& path, int line, const std::string& key, const std::string& value) {
  const std::string v = lower(value);
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

std::vector<Reservation> parse_reservations(const std::string& text, const std::string& path, ClusterLayout& layout) {
  std::vector<Reservation> out;
  for (const auto& cl : split_conf(text, path)) {
    Reservation r;
    double duration = -1;
    bool has_end = false;
    int node_count = 0;
    std::string nodes_text;
    for (const auto& [key_in, v] : cl.pairs) {
      const std::string key = lower(key_in);
      if (key == "reservationname")
        r.name = v;
      else if (key == "starttime")
        r.start_s = reservation_time(path, cl.line, key_in, v);
      else if (key == "endtime") {
        r.end_s = reservation_time(path, cl.line, key_in, v);
        has_end = true;
      } else if (key == "duration") {
        duration = duration_value(path, cl.line, key_in, v);
        if (duration <= 0) throw core::InputError(path, cl.line, key_in, "must be a finite time of more than 0");
      } else if (key == "nodes")
        nodes_text = v;
      else if (key == "nodecnt")
        node_count = static_cast<int>(number_value(path, cl.line, key_in, v, 1));
      else if (key == "capacityblock")
        r.capacity_block = yes_no(path, cl.line, key_in, v);
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
      for (const auto& name : expand_hostlist(nodes_text)) {
        const int idx = layout.index_of(name);
        if (idx < 0)
          throw core::InputError(path, cl.line, "Nodes",
                                 fmt::format("reservation {}: node {} is not in the cluster", r.name, name));
        r.nodes.push_back(idx);
      }
    } else if (r.capacity_block) {
      r.nodes = add_capacity_block_nodes(layout, r.name, node_count);
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

}  // namespace fmsim::orchestration
