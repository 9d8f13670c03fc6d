// What `fmsim cluster` reports about the serving deployments and training jobs that share its
// cluster: per deployment SLO attainment, tokens and cost per million tokens; training goodput and
// tokens beside the batch jobs alone; preemptions; GPU-hours by use. One summary, as the table and
// lines the text output prints, as JSON and as a section of the HTML report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jobspec/cluster.hpp"
#include "orchestration/serving_fleet.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "report/document.hpp"

namespace fmsim::jobspec {

/// The shared fleet of a replay.
struct FleetReport {
  double horizon_s = 0;
  std::vector<orchestration::ServingDeployment> deployments;
  std::vector<orchestration::DeploymentOutcome> outcomes;  ///< per deployment
  orchestration::FleetUse use;                             ///< the replay with the deployments
  orchestration::FleetUse alone;                           ///< the batch jobs alone on the same cluster and scheduler
  double bucket_s = 0;                                     ///< of the outcomes' series
};

/// Summarises `shared` (the first policy's replay of job.jobs) and `alone` (job.jobs[0,
/// batch_jobs) under job.training_alone).
FleetReport summarise_fleet(const ClusterJob& job, const orchestration::SimulationResult& shared,
                            const orchestration::SimulationResult& alone);

/// How served rate and SLO follow from the serving model's steady state (printed under the table).
std::string fleet_formula();
/// "steady state, not request by request: " and the formula (JSON and HTML).
std::string fleet_method_note();
/// One row per deployment (the text table and the HTML table).
report::Table deployment_table(const FleetReport& fleet);
/// GPU-hours by use, training beside the batch jobs alone, preemptions: one line each.
std::vector<std::string> fleet_lines(const FleetReport& fleet);
nlohmann::json fleet_json(const FleetReport& fleet);
report::Section fleet_section(const FleetReport& fleet);

}  // namespace fmsim::jobspec
