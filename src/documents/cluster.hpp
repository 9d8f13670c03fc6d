// `fmsim cluster` as documents: the cluster, scheduler and workload, each policy's summary (jobs,
// utilisation, goodput, waits, failures, GPU-hours, cost) and series, the first policy's jobs, the
// training jobs on their nodes and the shared serving fleet; as a JSON document, as text tables,
// as a per-job CSV (sacct's columns) and as an HTML report.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "jobspec/cluster.hpp"
#include "jobspec/cluster_run.hpp"

namespace fmsim::documents {

/// The JSON document (`fmsim cluster --json`, less the metrics the command adds).
nlohmann::json cluster_json(const jobspec::ClusterJob& job, const jobspec::ClusterRun& run);

/// The text report: cluster, scheduler, workload, reservations and failures; the policies side by
/// side; training jobs on their nodes; the shared fleet; the replays' wall time. `flags` gives the
/// durations as they were written (--days, --detect, --repair, --replace, --restart).
void print_cluster(std::ostream& out, const jobspec::ClusterJob& job, const jobspec::ClusterRun& run,
                   const jobspec::ClusterFlags& flags);

/// The first policy's jobs, one line each, in sacct's columns (--jobs-csv).
std::string cluster_jobs_csv(const jobspec::ClusterJob& job, const jobspec::ClusterRun& run);

/// The HTML report (--report): key figures, the policies side by side, the shared fleet,
/// utilisation, queue and fragmentation over time, waits by job size, training jobs,
/// reservations; `command` is the footer's reproduce line.
std::string cluster_html(const std::string& command, const jobspec::ClusterJob& job, const jobspec::ClusterRun& run);

}  // namespace fmsim::documents
