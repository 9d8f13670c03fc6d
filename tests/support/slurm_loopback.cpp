#include "support/slurm_loopback.hpp"

#include "config/slurm_syntax.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace fmsim::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<fs::path> find_on_path(const std::string& name, bool include_sbin) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  if (include_sbin) path += ":/usr/sbin:/sbin:/usr/local/sbin";
  std::stringstream stream(path);
  std::string entry;
  while (std::getline(stream, entry, ':')) {
    if (entry.empty()) continue;
    const fs::path candidate = fs::path(entry) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// A free TCP port on 127.0.0.1 (bound to port 0, read back, released).
int free_loopback_port(std::vector<int>& taken) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    int port = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      socklen_t length = sizeof(address);
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) port = ntohs(address.sin_port);
    }
    ::close(fd);
    if (port > 0 && std::find(taken.begin(), taken.end(), port) == taken.end()) {
      taken.push_back(port);
      return port;
    }
  }
  throw std::runtime_error("no free loopback port found");
}

std::vector<char*> c_argv(std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (auto& arg : argv) out.push_back(arg.data());
  out.push_back(nullptr);
  return out;
}

long parse_slurm_time(const std::string& text) {
  std::tm tm{};
  if (text.empty() || ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  tm.tm_isdst = -1;
  return static_cast<long>(std::mktime(&tm));
}

bool process_alive(pid_t pid) {
  int status = 0;
  const pid_t result = ::waitpid(pid, &status, WNOHANG);
  return result == 0;
}

void terminate_process(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    int status = 0;
    const pid_t result = ::waitpid(pid, &status, WNOHANG);
    if (result == pid || (result < 0 && errno == ECHILD)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

}  // namespace

std::vector<std::string> expand_slurm_hostlist(const std::string& hostlist) {
  return config::expand_hostlist(hostlist, "squeue/sacct output", 0, "NodeList");
}

std::optional<std::string> SlurmLoopback::unavailable_reason() {
  for (const char* daemon : {"slurmctld", "slurmd"}) {
    if (!find_on_path(daemon, true))
      return std::string(daemon) + " not installed (Debian packages slurmctld slurmd slurm-client; `make test-deps`)";
  }
  for (const char* client : {"sbatch", "squeue", "sinfo", "scancel"}) {
    if (!find_on_path(client, false)) return std::string(client) + " not installed (Debian package slurm-client)";
  }
  if (::geteuid() != 0) return std::string("the loopback Slurm cluster needs root (SlurmUser=root)");
  return std::nullopt;
}

SlurmLoopback::SlurmLoopback(SlurmLoopbackOptions options) : options_(std::move(options)) {
  if (auto reason = unavailable_reason()) throw std::runtime_error(*reason);
  if (options_.nodes < 1) throw std::runtime_error("SlurmLoopback needs at least one node");
  std::string tmpl = (fs::temp_directory_path() / "fmsim-slurm-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  keep_dir_ = std::getenv("FMSIM_KEEP_SLURM_DIR") != nullptr;
  for (int n = 1; n <= options_.nodes; ++n) node_names_.push_back(options_.node_prefix + std::to_string(n));
  std::vector<int> taken;
  slurmctld_port_ = free_loopback_port(taken);
  for (int n = 0; n < options_.nodes; ++n) slurmd_ports_.push_back(free_loopback_port(taken));
  write_config();
  try {
    const std::string slurmctld = find_on_path("slurmctld", true)->string();
    const std::string slurmd = find_on_path("slurmd", true)->string();
    slurmctld_pid_ = spawn_daemon({slurmctld, "-D", "-i", "-f", conf_path().string()}, "slurmctld.stdout");
    for (const auto& node : node_names_)
      slurmd_pids_.push_back(
          spawn_daemon({slurmd, "-D", "-N", node, "-f", conf_path().string()}, "slurmd." + node + ".stdout"));
    wait_for_idle_nodes();
  } catch (...) {
    stop();
    throw;
  }
}

SlurmLoopback::~SlurmLoopback() {
  stop();
  if (dir_.empty()) return;
  if (keep_dir_) {
    std::cerr << "SlurmLoopback: kept " << dir_ << "\n";
    return;
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::map<std::string, std::string> SlurmLoopback::env() const { return {{"SLURM_CONF", conf_path().string()}}; }

void SlurmLoopback::write_config() {
  fs::create_directories(dir_ / "state");
  fs::create_directories(dir_ / "spool");
  const bool gpus = options_.gpus_per_node > 0;
  std::ofstream conf(conf_path());
  conf << "# written by fmsim's SlurmLoopback test harness\n"
       << "ClusterName=fmsimtest\n"
       << "SlurmctldHost=localhost(127.0.0.1)\n"
       << "SlurmctldPort=" << slurmctld_port_ << "\n"
       << "SlurmdPort=" << slurmd_ports_.front() << "\n"
       << "CommunicationParameters=NoInAddrAny\n"
       << "AuthType=auth/none\nCredType=cred/none\n"
       << "SlurmUser=root\nSlurmdUser=root\n"
       << "StateSaveLocation=" << (dir_ / "state").string() << "\n"
       << "SlurmdSpoolDir=" << (dir_ / "spool").string() << "/%n\n"
       << "SlurmctldPidFile=" << (dir_ / "slurmctld.pid").string() << "\n"
       << "SlurmdPidFile=" << (dir_ / "slurmd.%n.pid").string() << "\n"
       << "SlurmctldLogFile=" << slurmctld_log_path().string() << "\n"
       << "SlurmdLogFile=" << (dir_ / "slurmd.%n.log").string() << "\n"
       << "SlurmctldDebug=info\nSlurmdDebug=info\nMailProg=/bin/true\n"
       << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
       << "ReturnToService=2\nSlurmdParameters=config_overrides\n"
       << "AccountingStorageType=accounting_storage/none\n"
       << "JobAcctGatherType=jobacct_gather/none\n"
       << "JobCompType=jobcomp/filetxt\nJobCompLoc=" << jobcomp_path().string() << "\n"
       << "SchedulerType=" << options_.scheduler_type << "\n"
       << "SchedulerParameters=" << options_.scheduler_parameters << "\n"
       << "PriorityType=" << options_.priority_type << "\n"
       << "SelectType=" << options_.select_type << "\n"
       << "SelectTypeParameters=CR_Core_Memory\n"
       << "MinJobAge=300\nKillWait=2\nInactiveLimit=0\nWaitTime=0\n"
       << "SlurmctldTimeout=30\nSlurmdTimeout=30\nMessageTimeout=10\n";
  if (gpus) conf << "GresTypes=gpu\n";
  if (!options_.topology_conf.empty()) {
    conf << "TopologyPlugin=topology/tree\n";
    std::ofstream(dir_ / "topology.conf") << options_.topology_conf;
  }
  for (const auto& line : options_.extra_conf_lines) conf << line << "\n";
  for (std::size_t n = 0; n < node_names_.size(); ++n) {
    conf << "NodeName=" << node_names_[n] << " NodeHostname=localhost NodeAddr=127.0.0.1"
         << " Port=" << slurmd_ports_[n] << " CPUs=" << options_.cpus_per_node
         << " RealMemory=" << options_.memory_mb_per_node;
    if (gpus) conf << " Gres=gpu:" << options_.gpus_per_node;
    conf << " State=UNKNOWN\n";
  }
  conf << "PartitionName=" << options_.partition << " Nodes=ALL Default=YES MaxTime=INFINITE"
       << " State=UP" << (options_.exclusive_partition ? " OverSubscribe=EXCLUSIVE" : "");
  if (!options_.partition_extra.empty()) conf << " " << options_.partition_extra;
  conf << "\n";
  if (gpus) {
    // slurmd 22.05 drops count-only gres; ordinary files stand in for /dev/nvidia*.
    fs::create_directories(dir_ / "dev");
    std::ofstream gres(dir_ / "gres.conf");
    for (const auto& node : node_names_) {
      for (int g = 0; g < options_.gpus_per_node; ++g)
        std::ofstream(dir_ / "dev" / (node + "-gpu" + std::to_string(g)));
      gres << "NodeName=" << node << " Name=gpu File=" << (dir_ / "dev").string() << "/" << node << "-gpu[0-"
           << options_.gpus_per_node - 1 << "]\n";
    }
  }
}

pid_t SlurmLoopback::spawn_daemon(const std::vector<std::string>& argv_in, const std::string& log_name) {
  std::vector<std::string> argv = argv_in;
  const std::string log = (dir_ / log_name).string();
  const std::string conf = conf_path().string();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::setenv("SLURM_CONF", conf.c_str(), 1);
    ::chdir(dir_.c_str());
    auto args = c_argv(argv);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void SlurmLoopback::wait_for_idle_nodes() {
  const auto deadline = Clock::now() + options_.start_timeout;
  std::string last;
  while (Clock::now() < deadline) {
    if (!process_alive(slurmctld_pid_))
      throw std::runtime_error("slurmctld exited during start-up; log:\n" + slurmctld_log_tail());
    for (std::size_t n = 0; n < slurmd_pids_.size(); ++n)
      if (!process_alive(slurmd_pids_[n]))
        throw std::runtime_error("slurmd for " + node_names_[n] + " exited during start-up");
    const auto result = run({"sinfo", "-h", "-N", "-o", "%N %T"}, std::chrono::seconds(5));
    if (result.exit_code == 0) {
      last = result.output;
      int idle = 0;
      std::stringstream lines(result.output);
      std::string node, state;
      while (lines >> node >> state)
        if (state == "idle") ++idle;
      if (idle == options_.nodes) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  throw std::runtime_error("Slurm nodes not all idle within " + std::to_string(options_.start_timeout.count()) +
                           " s; sinfo:\n" + last + "\nslurmctld.log:\n" + slurmctld_log_tail());
}

SlurmCommandResult SlurmLoopback::run(const std::vector<std::string>& argv_in, std::chrono::seconds timeout) const {
  SlurmCommandResult result;
  if (argv_in.empty()) return result;
  std::vector<std::string> argv = argv_in;
  const auto program = find_on_path(argv[0], true);
  if (!program) {
    result.output = argv[0] + ": not found";
    return result;
  }
  argv[0] = program->string();
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const std::string conf = conf_path().string();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[1]);
    ::setenv("SLURM_CONF", conf.c_str(), 1);
    ::chdir(dir_.c_str());
    auto args = c_argv(argv);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  const auto deadline = Clock::now() + timeout;
  char buffer[4096];
  bool killed = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd pfd{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left.count(), 200)));
    if (ready > 0) {
      const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
      if (n <= 0) break;
      result.output.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.exit_code = killed ? 124 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128);
  return result;
}

std::string SlurmLoopback::sbatch(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{"sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto result = run(argv);
  if (result.exit_code != 0) throw std::runtime_error("sbatch failed: " + result.output);
  std::string id = result.output.substr(0, result.output.find_first_of(";\n"));
  return id;
}

bool SlurmLoopback::wait_until_all_done(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    const auto result = run({"squeue", "-h", "-o", "%i %T"}, std::chrono::seconds(5));
    if (result.exit_code == 0) {
      bool active = false;
      std::stringstream lines(result.output);
      std::string id, state;
      while (lines >> id >> state)
        if (state != "COMPLETED" && state != "CANCELLED" && state != "FAILED" && state != "TIMEOUT" &&
            state != "NODE_FAIL")
          active = true;
      if (!active) {
        // Completion is written to jobcomp.txt when the job leaves COMPLETING.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

std::vector<SlurmCompletedJob> SlurmLoopback::completed_jobs() const {
  std::vector<SlurmCompletedJob> jobs;
  std::ifstream in(jobcomp_path());
  std::string line;
  while (std::getline(in, line)) {
    SlurmCompletedJob job;
    std::stringstream tokens(line);
    std::string token;
    while (tokens >> token) {
      const auto eq = token.find('=');
      if (eq == std::string::npos) continue;
      job.fields[token.substr(0, eq)] = token.substr(eq + 1);
    }
    auto field = [&](const char* key) {
      auto it = job.fields.find(key);
      return it == job.fields.end() ? std::string() : it->second;
    };
    job.job_id = field("JobId");
    job.name = field("Name");
    job.state = field("JobState");
    job.node_list = field("NodeList");
    job.node_count = field("NodeCnt").empty() ? 0 : std::stoi(field("NodeCnt"));
    job.submit_time = parse_slurm_time(field("SubmitTime"));
    job.eligible_time = parse_slurm_time(field("EligibleTime"));
    job.start_time = parse_slurm_time(field("StartTime"));
    job.end_time = parse_slurm_time(field("EndTime"));
    if (!job.job_id.empty()) jobs.push_back(std::move(job));
  }
  return jobs;
}

std::string SlurmLoopback::slurmctld_log_tail(std::size_t max_bytes) const {
  std::ifstream in(slurmctld_log_path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

void SlurmLoopback::stop() {
  if (slurmctld_pid_ > 0 && process_alive(slurmctld_pid_))
    run({"scancel", "--partition=" + options_.partition}, std::chrono::seconds(5));
  for (pid_t& pid : slurmd_pids_) {
    terminate_process(pid);
    pid = -1;
  }
  slurmd_pids_.clear();
  terminate_process(slurmctld_pid_);
  slurmctld_pid_ = -1;
}

}  // namespace fmsim::testing
