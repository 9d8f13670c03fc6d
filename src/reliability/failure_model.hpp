// Failure model: interruption counts by cause over an observed fleet, turned into rates per
// node-hour and into the failure process of one job.
//
// Default mix: Llama 3 405B pre-training, 54 days on 16,384 H100 (2,048 nodes): 419 unexpected
// interruptions by root cause (Table 5) and 47 planned ones (Dubey et al. 2024, arXiv 2407.21783,
// section 3.3.4). Rates scale linearly with node count: a job on N nodes is interrupted by any
// node's failure, so its MTBF is 1 / (N x rate per node-hour). Assumption: failures are
// independent across nodes (superposed per-node processes approach a Poisson process at job level).
#pragma once

#include <string>
#include <vector>

#include "core/units.hpp"
#include "core/vocabulary.hpp"

namespace fmsim::reliability {

/// What broke. Closed set; the Llama 3 categories map onto it (docs/models/reliability.md).
enum class ComponentClass { Gpu, Hbm, Network, Switch, Host, Software, Maintenance, Unknown };

/// The words of `class:` in failure data files.
inline constexpr core::Word<ComponentClass> kComponentClassWordList[] = {
    {ComponentClass::Gpu, "gpu"},
    {ComponentClass::Hbm, "hbm"},
    {ComponentClass::Network, "network"},
    {ComponentClass::Switch, "switch"},
    {ComponentClass::Host, "host"},
    {ComponentClass::Software, "software"},
    {ComponentClass::Maintenance, "maintenance"},
    {ComponentClass::Unknown, "unknown"},
};
inline constexpr core::Vocabulary<ComponentClass> kComponentClassWords{"component class", kComponentClassWordList};

/// "gpu", "hbm", "network", "switch", "host", "software", "maintenance", "unknown".
std::string to_string(ComponentClass c);

/// One root cause and how often it interrupted the observed fleet.
struct FailureCause {
  std::string name;
  ComponentClass component = ComponentClass::Unknown;
  double count = 0.0;         ///< interruptions over the observation
  bool replace_node = false;  ///< recovery needs a healthy node swapped in
  bool planned = false;       ///< announced ahead: a checkpoint is taken first, no work is lost
};

/// Counts by cause over `observed_nodes` nodes for `observed_duration`.
struct FailureModel {
  std::string name;
  std::string source;
  std::vector<FailureCause> causes;
  double observed_nodes = 0.0;
  core::Seconds observed_duration{};

  [[nodiscard]] double node_hours() const;
  /// Interruptions over the observation, with or without the planned ones.
  [[nodiscard]] double count(bool include_planned) const;
  /// Interruptions per node-hour.
  [[nodiscard]] double rate_per_node_hour(bool include_planned) const;
  /// The same mix, every count scaled so the unexpected rate is `per_node_hour`.
  [[nodiscard]] FailureModel with_unexpected_rate(double per_node_hour) const;
};

/// A rate quoted per 1000 node-days (Meta's RSC studies) as a rate per node-hour.
/// The units failure rates are published in (the `unit:` of a named rate in failure data files).
enum class RateUnit { Per1000NodeDays, PerNodeHour };
inline constexpr core::Word<RateUnit> kRateUnitWordList[] = {
    {RateUnit::Per1000NodeDays, "per 1000 node-days"},
    {RateUnit::PerNodeHour, "per node-hour"},
};
inline constexpr core::Vocabulary<RateUnit> kRateUnitWords{"failure-rate unit", kRateUnitWordList};

constexpr double per_node_hour_from_per_1000_node_days(double rate) { return rate / 1000.0 / 24.0; }

/// Mean time between interruptions of a job spanning `nodes` nodes.
core::Seconds job_mtbf(double rate_per_node_hour, int nodes);

/// The interruption process of one job: its total rate and the causes (weights = counts).
struct JobFailureProcess {
  double rate_per_second = 0.0;
  std::vector<FailureCause> causes;

  [[nodiscard]] core::Seconds mtbf() const { return core::Seconds(1.0 / rate_per_second); }
  /// Share of interruptions that need a replacement node / that are planned.
  [[nodiscard]] double replacement_share() const;
  [[nodiscard]] double planned_share() const;
};

/// The process for a job on `nodes` nodes; planned interruptions kept only if asked.
JobFailureProcess job_failure_process(const FailureModel& model, int nodes, bool include_planned);

/// A process with one unexpected cause at `mtbf` (for plain-number input and Daly's cases).
JobFailureProcess single_cause_process(core::Seconds mtbf, bool replace_node);

}  // namespace fmsim::reliability
