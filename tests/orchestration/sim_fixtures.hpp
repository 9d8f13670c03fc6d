// Small jobs and a scheduler that decides at the events themselves, for the scheduler-twin tests.
#pragma once

#include <string>

#include "orchestration/slurm_config.hpp"
#include "orchestration/workload.hpp"

namespace fmsim::orchestration::testing {

inline JobSpec job(int id, double submit, int nodes, double run, double limit, const std::string& reservation = "") {
  JobSpec j;
  j.id = id;
  j.submit_s = submit;
  j.request.nodes = nodes;
  j.run_s = run;
  j.time_limit_s = limit;
  j.account = "a";
  j.reservation = reservation;
  return j;
}

/// Backfill every second at resolution 1 s; main-loop passes, epilogs and submissions take no time.
inline SlurmConfig fast_backfill() {
  SlurmConfig c;
  c.bf_interval_s = 1;
  c.bf_resolution_s = 1;
  c.main_delay_s = 0;  // decisions at the events themselves
  c.batch_sched_delay_s = 0;
  c.completing_s = 0;
  c.bf_phase = 0;
  c.time_limit_check_s = 0;  // time limits enforced at the limit itself
  return c;
}

}  // namespace fmsim::orchestration::testing
