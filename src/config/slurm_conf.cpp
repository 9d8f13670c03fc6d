#include "config/slurm_conf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "config/slurm_syntax.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

// PreemptMode=MODE[,GANG]: the mode before any GANG flag.
orchestration::PreemptMode preempt_mode_value(const std::string& path, int line, const std::string& key,
                                              const std::string& value) {
  const auto mode = orchestration::kPreemptModeWords.parse(value.substr(0, value.find(',')));
  if (!mode)
    throw core::InputError(path, line, key, fmt::format("'{}' is not modelled; use OFF, CANCEL or REQUEUE", value));
  return *mode;
}

void scheduler_parameters(orchestration::SlurmConfig& c, const std::string& path, int line, const std::string& value) {
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    const std::string key = lower_case(item.substr(0, eq));
    const std::string v = eq == std::string::npos ? "" : item.substr(eq + 1);
    const std::string field = "SchedulerParameters " + key;
    if (key == "bf_interval")
      c.bf_interval_s = slurm_number_value(path, line, field, v, 1);
    else if (key == "bf_window")
      c.bf_window_s = slurm_number_value(path, line, field, v, 1) * 60.0;
    else if (key == "bf_max_job_test")
      c.bf_max_job_test = static_cast<int>(slurm_number_value(path, line, field, v, 1));
    else if (key == "bf_resolution")
      c.bf_resolution_s = slurm_number_value(path, line, field, v, 1);
    else if (key == "sched_interval")
      c.sched_interval_s = slurm_number_value(path, line, field, v, 1);
    else if (key == "batch_sched_delay")
      c.batch_sched_delay_s = slurm_number_value(path, line, field, v, 0);
    else if (key == "sched_min_interval")
      c.sched_min_interval_s = slurm_number_value(path, line, field, v, 0) * 1e-6;
    else if (key == "default_queue_depth")
      c.default_queue_depth = static_cast<int>(slurm_number_value(path, line, field, v, 1));
    // Others (bf_continue, bf_yield_interval, ...) are accepted and ignored.
  }
}

}  // namespace

SlurmConfFile parse_slurm_conf(const std::string& text, const std::string& path) {
  SlurmConfFile out;
  orchestration::SlurmConfig& c = out.config;
  struct PendingPartition {
    orchestration::PartitionConfig config;
    std::string nodes_text;
    int line;
  };
  std::vector<PendingPartition> partitions;
  std::set<std::string> node_set;
  long default_cpus = 1;  // slurm.conf(5): CPUs defaults to 1
  for (const auto& cl : split_slurm_conf(text, path)) {
    const std::string head = lower_case(cl.pairs[0].first);
    const std::string& head_value = cl.pairs[0].second;
    if (head == "nodename") {
      long cpus = default_cpus;
      for (std::size_t i = 1; i < cl.pairs.size(); ++i)
        if (lower_case(cl.pairs[i].first) == "cpus")
          cpus = static_cast<long>(slurm_number_value(path, cl.line, "CPUs", cl.pairs[i].second, 1));
      if (lower_case(head_value) == "default") {
        default_cpus = cpus;
        continue;
      }
      for (const auto& name : expand_hostlist(head_value, path, cl.line, "NodeName")) {
        c.total_cpus += cpus;
        if (!node_set.insert(name).second)
          throw core::InputError(path, cl.line, "NodeName", fmt::format("node {} is defined twice", name));
        out.node_names.push_back(name);
      }
      continue;
    }
    if (head == "partitionname") {
      if (lower_case(head_value) == "default") continue;
      PendingPartition p;
      p.config.name = head_value;
      p.line = cl.line;
      bool tier_set = false;
      for (std::size_t i = 1; i < cl.pairs.size(); ++i) {
        const std::string key = lower_case(cl.pairs[i].first);
        const std::string& v = cl.pairs[i].second;
        if (key == "nodes")
          p.nodes_text = v;
        else if (key == "default")
          p.config.is_default = slurm_yes_no(path, cl.line, "Default", v);
        else if (key == "maxtime")
          p.config.max_time_s = slurm_duration_value(path, cl.line, "MaxTime", v);
        else if (key == "defaulttime")
          p.config.default_time_s = slurm_duration_value(path, cl.line, "DefaultTime", v);
        else if (key == "prioritytier") {
          p.config.priority_tier = static_cast<int>(slurm_number_value(path, cl.line, "PriorityTier", v, 0));
          tier_set = true;
        } else if (key == "priorityjobfactor")
          p.config.priority_job_factor = static_cast<int>(slurm_number_value(path, cl.line, "PriorityJobFactor", v, 0));
        else if (key == "priority") {  // the old name sets both
          const int prio = static_cast<int>(slurm_number_value(path, cl.line, "Priority", v, 0));
          p.config.priority_job_factor = prio;
          if (!tier_set) p.config.priority_tier = prio;
        } else if (key == "preemptmode")
          p.config.preempt_mode = preempt_mode_value(path, cl.line, "PreemptMode", v);
        else if (key == "gracetime")
          p.config.grace_time_s = slurm_number_value(path, cl.line, "GraceTime", v, 0);
      }
      partitions.push_back(std::move(p));
      continue;
    }
    for (const auto& [key_in, v] : cl.pairs) {
      const std::string key = lower_case(key_in);
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
        c.weight_age = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightfairshare")
        c.weight_fairshare = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightjobsize")
        c.weight_job_size = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightpartition")
        c.weight_partition = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "priorityweightqos")
        c.weight_qos = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "prioritymaxage")
        c.max_age_s = slurm_duration_value(path, cl.line, key_in, v);
      else if (key == "prioritydecayhalflife")
        c.decay_half_life_s = slurm_duration_value(path, cl.line, key_in, v);
      else if (key == "prioritycalcperiod")
        c.calc_period_s = std::max(60.0, slurm_duration_value(path, cl.line, key_in, v));
      else if (key == "priorityfavorsmall")
        c.favor_small = slurm_yes_no(path, cl.line, key_in, v);
      else if (key == "priorityflags") {
        std::string flags = v;
        std::transform(flags.begin(), flags.end(), flags.begin(), [](unsigned char ch) { return std::toupper(ch); });
        std::stringstream ss(flags);
        for (std::string flag; std::getline(ss, flag, ',');)
          if (flag == "NO_FAIR_TREE") c.fair_tree = false;
      } else if (key == "preempttype") {
        const auto type = orchestration::kPreemptTypeWords.parse(v);
        if (!type)
          throw core::InputError(
              path, cl.line, key_in,
              fmt::format("'{}' is not allowed; use preempt/none, preempt/partition_prio or preempt/qos", v));
        c.preempt_type = *type;
      } else if (key == "preemptmode") {
        c.preempt_mode = preempt_mode_value(path, cl.line, key_in, v);
      } else if (key == "topologyplugin") {
        if (v == "topology/tree")
          c.placement = orchestration::Placement::Tree;
        else if (v == "topology/block")
          c.placement = orchestration::Placement::Block;
        else if (v == "topology/none" || v == "topology/default")
          c.placement = orchestration::Placement::Consecutive;
        else
          throw core::InputError(
              path, cl.line, key_in,
              fmt::format("'{}' is not allowed; use topology/tree, topology/block or topology/none", v));
        out.topology_plugin = v;
      } else if (key == "jobrequeue")
        c.requeue_default = slurm_number_value(path, cl.line, key_in, v, 0) != 0;
      else if (key == "killwait")
        c.kill_wait_s = slurm_number_value(path, cl.line, key_in, v, 0);
      else if (key == "overtimelimit")
        c.over_time_limit_s = slurm_number_value(path, cl.line, key_in, v, 0) * 60.0;
    }
  }
  for (auto& p : partitions) {
    if (!p.nodes_text.empty() && lower_case(p.nodes_text) != "all") {
      for (const auto& name : expand_hostlist(p.nodes_text, path, p.line, "Nodes")) {
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

}  // namespace fmsim::config
