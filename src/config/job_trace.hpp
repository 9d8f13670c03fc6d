// Job traces (`fmsim cluster --job-trace`) in the column layouts of the public ones, through a documented CSV mapping
// (docs/models/orchestration.md):
//   fmsim id,submit,nodes|gpus,duration,time_limit,partition,account,user,nice,qos,kind,segment,checkpoint_interval
//   helios/acme  job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
//                (Shanghai AI Lab / SenseTime; `queue` there is the queue time, not a queue name)
//   philly       jobid|job_id,user,vc,gpu_num|num_gpus,submit_time|submitted_time,duration|run_time,state|status
//   pai          job_name,inst_id,user,status,start_time,end_time (+ gpu_num or inst_num joined from the task table)
// A column is found by the first of its accepted names present in the header; --trace-map
// FIELD=COLUMN overrides. Times are seconds or "YYYY-MM-DD HH:MM:SS" (UTC), made relative to the
// first submission. Without a node count, nodes = ceil(GPUs / GPUs per node).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "orchestration/workload.hpp"

namespace fmsim::config {

struct TraceOptions {
  int gpus_per_node = 8;
  std::map<std::string, std::string> column_for;  ///< field -> column name overrides
  double limit_factor = 2.0;                      ///< no time_limit column: limit = duration x factor, whole minutes
  double max_limit_s = 0;                         ///< cap for derived limits (the partition's MaxTime); 0 = none
  int max_nodes = 0;                              ///< jobs larger than this are errors (0 = no check)
};

/// The fields a column can map to (for --trace-map and for errors).
const std::vector<std::string>& trace_fields();

/// Parses CSV text. Errors (core::InputError) name path:line, the column and what is allowed.
/// Jobs come back in submission order with ids from the id column (or the row number).
std::vector<orchestration::JobSpec> parse_trace_csv(const std::string& text, const std::string& path,
                                                    const TraceOptions& options);

/// Writes jobs in the fmsim layout (round-trips through parse_trace_csv).
std::string write_trace_csv(const std::vector<orchestration::JobSpec>& jobs);

}  // namespace fmsim::config
