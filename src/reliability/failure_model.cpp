// Failure rates per node-hour and job-level failure processes (model in failure_model.hpp).
#include "reliability/failure_model.hpp"

#include "core/error.hpp"

namespace fmsim::reliability {

std::string to_string(ComponentClass c) { return std::string(kComponentClassWords.name(c)); }

double FailureModel::node_hours() const { return observed_nodes * observed_duration.value() / 3600.0; }

double FailureModel::count(bool include_planned) const {
  double n = 0.0;
  for (const auto& c : causes) {
    if (!c.planned || include_planned) n += c.count;
  }
  return n;
}

double FailureModel::rate_per_node_hour(bool include_planned) const {
  FMSIM_CHECK(node_hours() > 0.0, "a failure model needs a positive observation");
  return count(include_planned) / node_hours();
}

FailureModel FailureModel::with_unexpected_rate(double per_node_hour) const {
  FailureModel m = *this;
  const double factor = per_node_hour / rate_per_node_hour(false);
  for (auto& c : m.causes) c.count *= factor;
  return m;
}

core::Seconds job_mtbf(double rate_per_node_hour, int nodes) {
  FMSIM_CHECK(rate_per_node_hour > 0.0 && nodes > 0, "rate and nodes must be positive");
  return core::hours(1.0 / (rate_per_node_hour * nodes));
}

double JobFailureProcess::replacement_share() const {
  double total = 0.0;
  double share = 0.0;
  for (const auto& c : causes) {
    total += c.count;
    if (c.replace_node && !c.planned) share += c.count;
  }
  return total > 0.0 ? share / total : 0.0;
}

double JobFailureProcess::planned_share() const {
  double total = 0.0;
  double share = 0.0;
  for (const auto& c : causes) {
    total += c.count;
    if (c.planned) share += c.count;
  }
  return total > 0.0 ? share / total : 0.0;
}

JobFailureProcess job_failure_process(const FailureModel& model, int nodes, bool include_planned) {
  JobFailureProcess p;
  for (const auto& c : model.causes) {
    if (!c.planned || include_planned) p.causes.push_back(c);
  }
  p.rate_per_second = model.rate_per_node_hour(include_planned) * nodes / 3600.0;
  return p;
}

JobFailureProcess single_cause_process(core::Seconds mtbf, bool replace_node) {
  FMSIM_CHECK(mtbf.value() > 0.0, "mtbf must be positive");
  JobFailureProcess p;
  p.rate_per_second = 1.0 / mtbf.value();
  p.causes.push_back(FailureCause{.name = "failure",
                                  .component = ComponentClass::Unknown,
                                  .count = 1.0,
                                  .replace_node = replace_node,
                                  .planned = false});
  return p;
}

}  // namespace fmsim::reliability
