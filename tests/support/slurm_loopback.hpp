// A real Slurm cluster on loopback for tests: one slurmctld and one `slurmd -N <node>` per emulated
// node, all on 127.0.0.1 with their own free ports, inside a fresh temporary directory.
// See docs/reference/slurm-loopback.md for why each slurm.conf line is there.
//
// Usage in a GoogleTest:
//
//   #include "support/slurm_loopback.hpp"
//   TEST(Slurm, SleepJobCompletes) {
//     FMSIM_SKIP_WITHOUT_SLURM();                         // GTEST_SKIP with the reason
//     fmsim::testing::SlurmLoopbackOptions options;
//     options.nodes = 4;                                  // n1..n4 (node_prefix + index)
//     fmsim::testing::SlurmLoopback slurm(options);       // starts daemons, waits for IDLE
//     const std::string id = slurm.sbatch({"-N", "2", "-t", "1", "--wrap", "sleep 1"});
//     slurm.wait_until_all_done(std::chrono::seconds(30));
//     auto jobs = slurm.completed_jobs();                 // from jobcomp/filetxt
//   }                                                     // destructor stops daemons by pid
//
// Everything the cluster writes (slurm.conf, topology.conf, state, spool, pid and log files, the
// job-completion file) lies under dir(); it is removed by the destructor unless
// FMSIM_KEEP_SLURM_DIR is set in the environment (then its path is printed to stderr).
// Client commands (sbatch, squeue, scontrol, sinfo, scancel, sacct...) must be run through run()
// or with env() exported: without SLURM_CONF a client looks for its controller through DNS.
//
// Failures to start (a daemon exits, nodes not IDLE within start_timeout) throw
// std::runtime_error whose message includes the tail of slurmctld's log; the daemons already
// started are stopped first.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fmsim::testing {

struct SlurmLoopbackOptions {
  int nodes = 4;  // emulated nodes, named node_prefix + 1..nodes
  std::string node_prefix = "n";
  int cpus_per_node = 4;            // advertised (SlurmdParameters=config_overrides)
  int memory_mb_per_node = 4000;    // RealMemory
  int gpus_per_node = 0;            // > 0: Gres=gpu:<n> backed by ordinary files
  std::string partition = "batch";  // one default partition holding every node
  bool exclusive_partition = true;  // OverSubscribe=EXCLUSIVE (whole-node, gang jobs)
  std::string partition_extra;      // appended to the PartitionName line (e.g. "MaxTime=10")
  std::string scheduler_type = "sched/backfill";
  std::string priority_type = "priority/basic";
  std::string select_type = "select/cons_tres";
  // SchedulerParameters; fast decisions for tests by default.
  std::string scheduler_parameters = "bf_interval=1,bf_resolution=1,sched_min_interval=100000";
  // Non-empty: written as topology.conf and TopologyPlugin=topology/tree is set.
  std::string topology_conf;
  // Extra slurm.conf lines appended verbatim before the node and partition lines
  // (e.g. "PriorityWeightAge=1000", "PreemptType=preempt/qos").
  std::vector<std::string> extra_conf_lines;
  std::chrono::seconds start_timeout{30};  // daemons up and every node IDLE within this
};

// Result of one client command.
struct SlurmCommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// One line of the jobcomp/filetxt file (times in whole seconds since the epoch).
struct SlurmCompletedJob {
  std::string job_id;
  std::string name;
  std::string state;      // COMPLETED, CANCELLED, TIMEOUT, FAILED, NODE_FAIL...
  std::string node_list;  // compressed form as Slurm prints it ("n[1-3]")
  int node_count = 0;
  long submit_time = 0;
  long eligible_time = 0;
  long start_time = 0;
  long end_time = 0;
  std::map<std::string, std::string> fields;  // every Key=Value of the line
};

class SlurmLoopback {
 public:
  // Empty when slurmctld, slurmd and the clients are installed and the process is root;
  // otherwise the reason the harness cannot run (for GTEST_SKIP).
  static std::optional<std::string> unavailable_reason();

  explicit SlurmLoopback(SlurmLoopbackOptions options);
  ~SlurmLoopback();
  SlurmLoopback(const SlurmLoopback&) = delete;
  SlurmLoopback& operator=(const SlurmLoopback&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path conf_path() const { return dir_ / "slurm.conf"; }
  std::filesystem::path jobcomp_path() const { return dir_ / "jobcomp.txt"; }
  std::filesystem::path slurmctld_log_path() const { return dir_ / "slurmctld.log"; }
  const std::vector<std::string>& node_names() const { return node_names_; }
  int slurmctld_port() const { return slurmctld_port_; }
  // The environment a client needs: {"SLURM_CONF", <conf_path>}.
  std::map<std::string, std::string> env() const;

  // Runs a client command (argv[0] looked up on PATH) with SLURM_CONF set, capturing output.
  // Killed after `timeout`.
  SlurmCommandResult run(const std::vector<std::string>& argv,
                         std::chrono::seconds timeout = std::chrono::seconds(30)) const;
  // `sbatch --parsable <args>` run from dir(); returns the job id; throws on failure.
  std::string sbatch(const std::vector<std::string>& args) const;
  // Polls squeue until no job is pending or running; false on timeout.
  bool wait_until_all_done(std::chrono::milliseconds timeout) const;
  // Parses jobcomp.txt: one entry per finished job, in the order Slurm wrote them.
  std::vector<SlurmCompletedJob> completed_jobs() const;
  // Last `max_bytes` of slurmctld.log (for failure messages).
  std::string slurmctld_log_tail(std::size_t max_bytes = 4000) const;

  // Cancels every job and stops the daemons (slurmd first, then slurmctld) by their pids:
  // SIGTERM, then SIGKILL after 5 s. Called by the destructor; safe to call twice.
  void stop();

 private:
  void write_config();
  pid_t spawn_daemon(const std::vector<std::string>& argv, const std::string& log_name);
  void wait_for_idle_nodes();

  SlurmLoopbackOptions options_;
  std::filesystem::path dir_;
  std::vector<std::string> node_names_;
  int slurmctld_port_ = 0;
  std::vector<int> slurmd_ports_;
  pid_t slurmctld_pid_ = -1;
  std::vector<pid_t> slurmd_pids_;
  bool keep_dir_ = false;
};

// Expands nodes in Slurm's compressed host-list form ("n[1-3,5],m2" -> n1 n2 n3 n5 m2), as squeue
// and sacct print them, through config::expand_hostlist (the reader slurm.conf uses).
std::vector<std::string> expand_slurm_hostlist(const std::string& hostlist);

}  // namespace fmsim::testing

// Skips the current GoogleTest, with the reason, where the real Slurm cannot run.
#define FMSIM_SKIP_WITHOUT_SLURM()                                                       \
  do {                                                                                   \
    if (auto fmsim_slurm_reason = ::fmsim::testing::SlurmLoopback::unavailable_reason()) \
      GTEST_SKIP() << *fmsim_slurm_reason;                                               \
  } while (false)
