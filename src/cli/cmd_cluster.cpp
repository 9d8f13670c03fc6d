// fmsim cluster: many jobs on one shared cluster through fmsim's twin of Slurm's scheduler:
// queue waits, starts, ends, placements, requeues and lost GPU-hours per job; utilisation, queue
// length, wait by job size, fragmentation, goodput and cost for the cluster; policies side by side.
// The replays are jobspec/cluster_run.hpp's, the report documents/cluster.hpp's.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/metrics_flags.hpp"
#include "cli/output.hpp"
#include "cli/reproduce_command.hpp"
#include "config/job_trace.hpp"
#include "core/error.hpp"
#include "documents/cluster.hpp"
#include "jobspec/cluster.hpp"
#include "jobspec/cluster_run.hpp"

namespace fmsim::cli {
namespace {

/// The flags resolved by jobspec::resolve_cluster_job, and what to write.
struct ClusterFlags {
  jobspec::ClusterFlags job;
  bool json = false;
  std::string report;
  std::string jobs_csv;
  std::string write_trace;
  MetricsFlags metrics;  ///< --metrics-out DIR: the Slurm exporter's series
  std::string command;   ///< the reproduce line the report's footer shows
};

void run_cluster(const ClusterFlags& out, Context& ctx) {
  const jobspec::ClusterJob job = jobspec::resolve_cluster_job(out.job, ctx.catalog());
  if (!out.write_trace.empty())
    write_file_atomically(out.write_trace, config::write_trace_csv(job.jobs), "--job-trace-out");
  const jobspec::ClusterRun run = jobspec::replay_cluster(job);
  if (!out.jobs_csv.empty()) write_file_atomically(out.jobs_csv, documents::cluster_jobs_csv(job, run), "--jobs-csv");
  if (!out.report.empty())
    write_file_atomically(out.report, documents::cluster_html(out.command, job, run), "--report");
  const auto metrics = write_cluster_metrics_file(out.metrics, job);
  if (out.json) {
    auto doc = documents::cluster_json(job, run);
    if (metrics) doc["metrics"] = *metrics;
    std::cout << doc.dump(2) << "\n";
    return;
  }
  documents::print_cluster(std::cout, job, run, out.job);
  if (!out.report.empty()) std::cout << "Wrote " << out.report << "\n";
  if (!out.jobs_csv.empty()) std::cout << "Wrote " << out.jobs_csv << " (per job, " << job.policies[0].name << ")\n";
  if (metrics) std::cout << metrics_line(*metrics);
}

/// A flag whose value is a duration ("90s", "30m", "48h", "2d").
void duration_option(CLI::App* cmd, const std::string& name, std::string& value, const std::string& help) {
  cmd->add_option(name, value, help)->type_name("DURATION");
}
/// A flag that takes a comma-separated list (and may be repeated).
template <class T>
void list_option(CLI::App* cmd, const std::string& name, std::vector<T>& values, const std::string& help) {
  cmd->add_option(name, values, help)->delimiter(',');
}

}  // namespace

void add_cluster_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<ClusterFlags>();
  auto* cmd = app.add_subcommand(
      "cluster",
      "Replay a job trace on a shared cluster through a twin of Slurm's scheduler (waits, utilisation, "
      "fragmentation, goodput, cost)");
  cmd->add_option("--cluster", f->job.cluster, "Cluster: SYSTEM:COUNT (default p5en.48xlarge:128)")->type_name("SPEC");
  cmd->add_option("--scheduler", f->job.scheduler, "slurm (default) or k8s (Kubernetes with Kueue queues)");
  list_option(cmd, "--queues", f->job.queues,
              "k8s: ClusterQueues TEAM=NODES[:BORROW] (nominal quota and borrowing limit "
              "in nodes; default an equal share per team, unlimited borrowing)");
  cmd->add_option("--kueue-scenario", f->job.kueue_scenario,
                  "k8s: replay a scenario of Kueue's scheduler performance test (its generator.yaml: cohorts, "
                  "ClusterQueues, workloads; e.g. validation/kueue/baseline.yaml) on as many nodes of --cluster's "
                  "system as the quotas add up to")
      ->type_name("FILE");
  cmd->add_option("--queueing", f->job.queueing, "k8s: best-effort (BestEffortFIFO, default) or strict (StrictFIFO)");
  cmd->add_flag("--no-preemption", f->job.no_preemption,
                "k8s: no reclaiming within the cohort, no priority preemption");
  cmd->add_option("--slurm-conf", f->job.slurm_conf,
                  "slurm.conf: SchedulerType, SchedulerParameters, PriorityType and "
                  "weights, PreemptType/Mode, TopologyPlugin, NodeName and PartitionName lines")
      ->type_name("FILE");
  cmd->add_option("--topology-conf", f->job.topology_conf,
                  "topology.conf (SwitchName or BlockName lines); default: the "
                  "catalog layout (fmsim topology)")
      ->type_name("FILE");
  cmd->add_option("--placement", f->job.placement,
                  "consecutive | tree | block (default: TopologyPlugin, else block for "
                  "UltraServers and tree otherwise)");
  cmd->add_option("--policy", f->job.policy, "backfill | fifo (sched/builtin) (default: SchedulerType, else backfill)");
  cmd->add_option("--job-trace,--trace", f->job.trace,
                  "Job trace CSV to replay (fmsim, Helios/Acme, Philly or PAI columns; see --trace-map); "
                  "--trace is the older name")
      ->type_name("FILE");
  list_option(cmd, "--trace-map", f->job.trace_map,
              "FIELD=COLUMN: read a field from another column (fields: id, submit, "
              "nodes, gpus, duration, start, end, time_limit, partition, account, "
              "user, nice, qos, kind, state, segment, checkpoint_interval)");
  cmd->add_option("--limit-factor", f->job.limit_factor,
                  "Traces without time limits: limit = duration x this (default 2)");
  cmd->add_option("--synthetic", f->job.synthetic, "Generate this many jobs instead of a trace (default 1000)");
  duration_option(cmd, "--arrival", f->job.arrival, "Synthetic: mean time between submissions (default 5m)");
  cmd->add_option("--seed", f->job.seed, "Synthetic workload and failure seed (default 1)");
  cmd->add_option("--days", f->job.days, "Stop after this many days (default: when every job has ended)");
  list_option(cmd, "--compare", f->job.compare,
              "Also run these policies: fifo, backfill, basic, multifactor, consecutive, "
              "tree, block, spares=N, bf_window=MIN, bf_max_job_test=N, bf_interval=S");
  cmd->add_option("--node-failure-rate", f->job.node_failure_rate,
                  "Node failures per 1000 node-days, or a published rate "
                  "(e.g. meta-rsc1); default none")
      ->type_name("RATE");
  cmd->add_option("--spares", f->job.spares, "Spare nodes that replace failed ones (HyperPod auto-resume; default 0)");
  duration_option(cmd, "--detect", f->job.detect, "Failure detection time (default 1m)");
  duration_option(cmd, "--repair", f->job.repair, "Time to repair a failed node (default 48h)");
  duration_option(cmd, "--replace", f->job.replace, "Time to swap a spare in (default 10m)");
  duration_option(cmd, "--restart", f->job.restart, "Relaunch of a requeued job before it makes progress (default 3m)");
  cmd->add_option("--associations", f->job.associations,
                  "sacctmgr dump of accounts and users with Fairshare= shares, for "
                  "the fair-share factor (Fair Tree; classic with PriorityFlags=NO_FAIR_TREE)")
      ->type_name("FILE");
  cmd->add_option("--reservations", f->job.reservations_file,
                  "Reservations and Capacity Blocks, one per line in scontrol "
                  "syntax (ReservationName= StartTime= Duration=|EndTime= "
                  "Nodes=|NodeCnt= [CapacityBlock=YES])")
      ->type_name("FILE");
  cmd->add_option("--reservation", f->job.reservations,
                  "One reservation line as in --reservations (repeatable); jobs use "
                  "it through the trace's reservation column")
      ->type_name("LINE");
  duration_option(cmd, "--sigterm-checkpoint", f->job.sigterm_checkpoint,
                  "Preempted jobs write a checkpoint on SIGTERM "
                  "taking this long (kept when within KillWait; "
                  "default: they exit without one)");
  cmd->add_option("--deployments", f->job.deployments_file,
                  "Serving deployments sharing the cluster (YAML list; keys as --deployment); needs --days")
      ->type_name("FILE");
  cmd->add_option("--deployment", f->job.deployments,
                  "One serving deployment, KEY=VALUE,... (repeatable): name, model, engine, precision, tp, isl, osl, "
                  "rate, shape (constant|diurnal|csv), trough, peak-hour, rate-csv, slo-ttft, slo-tpot, cold-start, "
                  "target-utilisation, scale-up-delay, scale-down-delay, min-replicas, max-replicas, share "
                  "(preempt|reserved), nodes, queue-timeout")
      ->type_name("SPEC");
  duration_option(cmd, "--checkpoint-interval", f->job.checkpoint,
                  "Checkpoint interval of jobs that have none (default: "
                  "the trace's, else none: a failure loses the whole run)");
  cmd->add_flag("--json", f->json,
                "Everything as JSON: cluster, scheduler, per-policy summary and time series, per job");
  cmd->add_option("--report", f->report, "Write an offline HTML report")->type_name("FILE")->check(output_file());
  cmd->add_option("--jobs-csv", f->jobs_csv, "Write one row per job (first policy) in sacct-like columns")
      ->type_name("FILE")
      ->check(output_file());
  cmd->add_option("--job-trace-out,--write-trace", f->write_trace,
                  "Write the workload as an fmsim job trace CSV (--write-trace is the older name)")
      ->type_name("FILE")
      ->check(output_file());
  cmd->footer(
      "The scheduler twin follows slurmctld 22.05: jobs ordered by partition PriorityTier, priority, submit\n"
      "time, id; the main loop starts jobs in that order and stops a partition at the first that does not\n"
      "fit; backfill (every bf_interval) plans each job at the earliest time its nodes are free for its\n"
      "whole time limit and starts it only if that delays no job ahead of it. Whole-node gang allocation,\n"
      "topology/tree and topology/block placement as select/cons_tres picks nodes. Checked against a\n"
      "real slurmctld on loopback (tests/slurm/scheduler_twin_test.cpp).\n"
      "Examples:\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --synthetic 2000 --arrival 4m --compare fifo\n"
      "  fmsim cluster --cluster p5en.48xlarge:128 --slurm-conf slurm.conf --job-trace jobs.csv --days 30 --json\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:8 --synthetic 500 --compare tree --report cluster.html\n"
      "  fmsim cluster --cluster p5.48xlarge:64 --job-trace cluster_log.csv --trace-map gpus=gpu_num \\\n"
      "      --node-failure-rate 6.5 --spares 4 --checkpoint-interval 30m --compare spares=0\n"
      "Training jobs timed on the nodes they get (trace columns model, tp, pp, cp, ep, gbs, seq, tokens):\n"
      "  fmsim cluster --cluster u-p6e-gb200x72:2 --job-trace training_jobs.csv --placement consecutive --compare "
      "block\n"
      "A Capacity Block (nodes only in its window) for the jobs whose reservation column says cb1:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --job-trace jobs.csv \\\n"
      "      --reservation \"ReservationName=cb1 StartTime=now+2days Duration=3-00:00:00 NodeCnt=16 "
      "CapacityBlock=YES\"\n"
      "Fair Tree fair-share from slurmdbd's associations (PriorityWeightFairshare in slurm.conf):\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --synthetic 500 --slurm-conf slurm.conf --associations assoc.cfg\n"
      "Preemption with GraceTime/KillWait (slurm.conf) and jobs that checkpoint on SIGTERM in 20 s:\n"
      "  fmsim cluster --cluster p5en.48xlarge:32 --job-trace jobs.csv --slurm-conf slurm.conf --sigterm-checkpoint "
      "20s");
  add_metrics_flags(*cmd, f->metrics);
  cmd->callback([f, cmd, &ctx] {
    f->command = reproduce_command(*cmd, {"--json", "--report", "--jobs-csv", "--job-trace-out", "--metrics-out"});
    run_cluster(*f, ctx);
  });
}

}  // namespace fmsim::cli
