#include "config/kueue_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "config/yaml_reader.hpp"

namespace fmsim::config {

namespace orch = fmsim::orchestration;

namespace {

/// A quota in CPUs: a whole number (Kueue's quantities; milli-CPUs are not modelled).
int read_quota(const YamlNode& node) { return node.as_int(Bound::NonNegative); }

KueueScenario read_scenario(const YamlNode& root) {
  root.check_keys({"cohorts"});
  KueueScenario s;
  std::map<std::string, long> cohort_quota;  // nominal quotas per cohort
  std::map<std::string, int> largest;        // largest request per ClusterQueue
  for (const YamlNode& cohort_set : root["cohorts"].items()) {
    cohort_set.check_keys({"className", "count", "queuesSets"});
    const std::string cohort_class = cohort_set["className"].as_string();
    const int cohorts = cohort_set["count"].as_int(Bound::Positive);
    const auto queue_sets = cohort_set["queuesSets"].items();
    for (int c = 0; c < cohorts; ++c) {
      const std::string cohort = fmt::format("{}-{}", cohort_class, c);
      for (std::size_t qs = 0; qs < queue_sets.size(); ++qs) {
        const YamlNode& set = queue_sets[qs];
        set.check_keys({"className", "count", "nominalQuota", "borrowingLimit", "lendingLimit", "reclaimWithinCohort",
                        "withinClusterQueue", "workloadsSets"});
        orch::ClusterQueueConfig q;
        q.cohort = cohort;
        q.nominal_nodes = read_quota(set["nominalQuota"]);
        if (const auto b = set.find("borrowingLimit")) q.borrowing_limit = read_quota(*b);
        if (const auto l = set.find("lendingLimit")) {
          q.lending_limit = read_quota(*l);
          if (q.lending_limit > q.nominal_nodes)
            l->fail(fmt::format("lendingLimit {} is more than nominalQuota {}", q.lending_limit, q.nominal_nodes));
        }
        // Kueue's API defaults: both policies Never.
        q.reclaim_within_cohort = orch::ReclaimWithinCohort::Never;
        q.within_cluster_queue = orch::WithinClusterQueue::Never;
        if (const auto p = set.find("reclaimWithinCohort"))
          q.reclaim_within_cohort = p->as_word(orch::kReclaimWithinCohortWords);
        if (const auto p = set.find("withinClusterQueue"))
          q.within_cluster_queue = p->as_word(orch::kWithinClusterQueueWords);
        const std::string queue_class = set["className"].as_string();
        const int queues = set["count"].as_int(Bound::Positive);
        // The workloads of one queue, in creation order; every queue of the set gets the same.
        std::vector<orch::JobSpec> workloads;
        for (const YamlNode& ws : set["workloadsSets"].items()) {
          ws.check_keys({"count", "creationIntervalMs", "workloads"});
          const int rounds = ws["count"].as_int(Bound::Positive);
          const double interval_s = ws["creationIntervalMs"].as_int(Bound::NonNegative) / 1000.0;
          std::vector<orch::JobSpec> templates;
          for (const YamlNode& w : ws["workloads"].items()) {
            w.check_keys({"className", "runtimeMs", "priority", "request"});
            orch::JobSpec j;
            j.kind = w["className"].as_string();
            j.name = j.kind;
            j.run_s = w["runtimeMs"].as_int(Bound::Positive) / 1000.0;
            j.time_limit_s = 0;  // none: the partition's, a year
            j.priority_class = w["priority"].as_int();
            j.request.nodes = w["request"].as_int(Bound::Positive);
            if (q.borrowing_limit >= 0 && j.request.nodes > q.nominal_nodes + q.borrowing_limit)
              w["request"].fail(fmt::format("{} CPUs: more than nominalQuota + borrowingLimit ({}) ever admits",
                                            j.request.nodes, q.nominal_nodes + q.borrowing_limit));
            templates.push_back(std::move(j));
          }
          long created = 0;  // generator.go waits one interval before each workload it creates
          for (int round = 0; round < rounds; ++round)
            for (const auto& t : templates) {
              workloads.push_back(t);
              workloads.back().submit_s = static_cast<double>(++created) * interval_s;
            }
        }
        for (int i = 0; i < queues; ++i) {
          q.name = fmt::format("{}-{}-{}-{}", queue_class, qs, i, cohort);
          s.queues.push_back(q);
          s.nodes += q.nominal_nodes;
          cohort_quota[cohort] += q.nominal_nodes;
          for (const auto& w : workloads) {
            s.jobs.push_back(w);
            s.jobs.back().id = static_cast<int>(s.jobs.size());
            s.jobs.back().account = q.name;
            largest[q.name] = std::max(largest[q.name], w.request.nodes);
          }
        }
      }
    }
  }
  if (s.queues.empty()) root.fail("no ClusterQueues: cohorts lists none");
  // A workload larger than its cohort's quota would wait for ever.
  for (const auto& q : s.queues)
    if (largest[q.name] > cohort_quota[q.cohort])
      root.fail(fmt::format("ClusterQueue {} has a workload of {} CPUs; its cohort {} has {} in all", q.name,
                            largest[q.name], q.cohort, cohort_quota[q.cohort]));
  return s;
}

}  // namespace

KueueScenario parse_kueue_scenario(std::string_view text, const std::string& file) {
  return read_scenario(load_yaml_text(text, file).node());
}

KueueScenario load_kueue_scenario(const std::string& path) { return read_scenario(load_yaml_file(path).node()); }

}  // namespace fmsim::config
