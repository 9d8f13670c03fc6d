// The workers of `fmsim sweep`: local processes or a Slurm job array (cli/sweep_workers.hpp).
#include "cli/sweep_workers.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "cli/output.hpp"
#include "core/error.hpp"

extern char** environ;

namespace fmsim::cli {
namespace {

namespace fs = std::filesystem;

// Set in the environment of the local workers: the sweep's process id. A worker that sees it ties
// its life to that process (PR_SET_PDEATHSIG), so killing a sweep stops its workers too.
constexpr const char* kParentVariable = "FMSIM_SWEEP_PARENT";

// Progress on stderr: rewritten in place on a terminal (with running tasks and seconds), one
// line per tenth of the chunks otherwise.
class Progress {
 public:
  Progress(const SweepGrid& g, long long done_before)
      : g_(g), tty_(::isatty(2) != 0), start_(Clock::now()), last_tenth_(-1) {
    update(done_before, 0, "");
  }
  void update(long long chunks_done, int running, const std::string& where) {
    const long long points = std::min<std::int64_t>(g_.points, chunks_done * g_.chunk);
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
    const std::string line =
        fmt::format("sweep: {}/{} chunks, {}/{} points", chunks_done, g_.chunks, points, g_.points);
    const long long tenth = g_.chunks > 0 ? chunks_done * 10 / g_.chunks : 10;
    if (tty_) {
      std::cerr << fmt::format("\r{}, {} running{}, {:.0f} s\x1b[K", line, running, where, s) << std::flush;
    } else if (tenth != last_tenth_) {
      std::cerr << line << "\n";  // no timings in a log: the same sweep logs the same lines
    }
    last_tenth_ = tenth;
  }
  ~Progress() {
    if (tty_) std::cerr << "\n";
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  const SweepGrid& g_;
  bool tty_;
  Clock::time_point start_;
  long long last_tenth_;
};

// The fmsim executable that runs the chunks: this process's own, or (when fmsim runs inside
// another program, e.g. Python's `import fmsim`) $FMSIM_EXECUTABLE, else `fmsim` on $PATH.
fs::path self_executable() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.filename().string().rfind("fmsim", 0) == 0) return exe;
  if (const char* given = std::getenv("FMSIM_EXECUTABLE"); given != nullptr && *given != '\0') {
    if (::access(given, X_OK) != 0) {
      throw core::InputError::flag("FMSIM_EXECUTABLE", fmt::format("'{}' is not an executable file", given));
    }
    return fs::absolute(given);
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "fmsim";
      if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate);
    }
  }
  throw core::InputError::flag("sweep",
                               "runs its chunks with the fmsim executable, which is neither this program nor on "
                               "PATH; set FMSIM_EXECUTABLE to its path");
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& log, bool search_path,
            const std::vector<std::string>& extra_env = {}) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_copy = extra_env;
  std::vector<char*> env;
  for (auto& e : env_copy) env.push_back(e.data());
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  env.push_back(nullptr);
  pid_t pid = -1;
  const int rc = search_path ? posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data())
                             : posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

std::string tail_of(const fs::path& file) {
  std::string text;
  try {
    text = read_file(file.string(), "--out");
  } catch (const core::InputError&) {
    return "";
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

std::vector<std::string> task_argv(const fs::path& exe, const std::vector<std::string>& globals, const SweepGrid& g,
                                   const fs::path& dir, const std::string& chunk) {
  std::vector<std::string> argv{exe.string()};
  argv.insert(argv.end(), globals.begin(), globals.end());
  for (const std::string& w :
       {std::string("sweep"), fs::absolute(g.file).string(), std::string("--out"), fs::absolute(dir).string(),
        std::string("--chunk-size"), std::to_string(g.chunk), std::string("--chunk"), chunk}) {
    argv.push_back(w);
  }
  return argv;
}

// A Slurm client command's exit status and output (stdout and stderr together).
std::pair<int, std::string> slurm_client(const std::vector<std::string>& argv, const fs::path& log) {
  const pid_t pid = spawn(argv, log, true);
  if (pid < 0) return {127, argv[0] + ": not found (install Debian's slurm-client)"};
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::string out;
  try {
    out = read_file(log.string(), "--out");
  } catch (const core::InputError&) {}
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string index_ranges(const std::vector<long long>& ks) {
  std::string s;
  for (std::size_t i = 0; i < ks.size();) {
    std::size_t j = i;
    while (j + 1 < ks.size() && ks[j + 1] == ks[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + (j == i ? std::to_string(ks[i]) : fmt::format("{}-{}", ks[i], ks[j]));
    i = j + 1;
  }
  return s;
}

}  // namespace

fs::path sweep_chunk_path(const fs::path& dir, long long k) { return dir / "chunks" / fmt::format("{:06d}.jsonl", k); }

std::vector<long long> missing_sweep_chunks(const SweepGrid& g, const fs::path& dir) {
  std::vector<long long> missing;
  for (long long k = 0; k < g.chunks; ++k) {
    if (!fs::exists(sweep_chunk_path(dir, k))) missing.push_back(k);
  }
  return missing;
}

void die_with_sweep() {
  const char* parent = std::getenv(kParentVariable);
  if (parent == nullptr) return;  // a Slurm array task, or a chunk run by hand
  const std::string expected = parent;
  ::unsetenv(kParentVariable);  // not passed on to anything this worker starts
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The sweep may have died before the line above: then this worker has been reparented.
  if (std::to_string(::getppid()) != expected) throw core::InputError::flag("sweep", "the sweep has stopped");
}

// Runs the missing chunks with `jobs` worker processes at a time. Returns the failures.
std::vector<std::string> run_sweep_chunks_locally(const SweepGrid& g, const fs::path& dir,
                                                  const std::vector<std::string>& globals, int jobs) {
  const fs::path exe = self_executable();
  auto todo = missing_sweep_chunks(g, dir);
  Progress progress(g, g.chunks - static_cast<long long>(todo.size()));
  std::map<pid_t, long long> running;
  std::vector<std::string> failures;
  std::size_t next = 0;
  long long done = g.chunks - static_cast<long long>(todo.size());
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < jobs) {
      const long long k = todo[next++];
      const pid_t pid =
          spawn(task_argv(exe, globals, g, dir, std::to_string(k)), dir / "logs" / fmt::format("chunk-{:06d}.log", k),
                false, {std::string(kParentVariable) + "=" + std::to_string(::getpid())});
      if (pid < 0) {
        failures.push_back(fmt::format("chunk {}: cannot start {}", k, exe.string()));
        continue;
      }
      running[pid] = k;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) break;
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const long long k = it->second;
    running.erase(it);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(sweep_chunk_path(dir, k))) {
      ++done;
    } else {
      const fs::path log = dir / "logs" / fmt::format("chunk-{:06d}.log", k);
      failures.push_back(fmt::format(
          "chunk {} failed ({}); {}: {}", k,
          WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status)) : fmt::format("signal {}", WTERMSIG(status)),
          log.string(), tail_of(log)));
    }
    progress.update(done, static_cast<int>(running.size()), "");
  }
  return failures;
}

// Submits the missing chunks as one `sbatch --array` and waits for them. Returns the failures.
std::vector<std::string> run_sweep_chunks_on_slurm(const SweepGrid& g, const fs::path& dir,
                                                   const std::vector<std::string>& globals,
                                                   const SlurmSweepOptions& a) {
  const auto todo = missing_sweep_chunks(g, dir);
  if (todo.empty()) return {};
  const fs::path exe = self_executable();
  const fs::path adir = fs::absolute(dir);
  std::string script = "#!/bin/sh\n# fmsim sweep " + fs::absolute(g.file).string() + ": one array task per chunk\n";
  script += "#SBATCH --job-name=fmsim-sweep\n#SBATCH --ntasks=1\n";
  script +=
      "#SBATCH --array=" + index_ranges(todo) + (a.max_parallel > 0 ? fmt::format("%{}", a.max_parallel) : "") + "\n";
  script += "#SBATCH --output=" + (adir / "logs" / "slurm-%A_%a.out").string() + "\n";
  std::string command;
  for (const auto& w : task_argv(exe, globals, g, dir, "PLACEHOLDER"))
    command += (command.empty() ? "" : " ") + shell_quote(w);
  command.replace(command.find("'PLACEHOLDER'"), 13, "\"$SLURM_ARRAY_TASK_ID\"");
  script += "exec " + command + "\n";
  const fs::path script_path = adir / "sweep.sbatch";
  write_file_now(script_path.string(), script, "--out");

  std::vector<std::string> submit{"sbatch", "--parsable"};
  submit.insert(submit.end(), a.sbatch_args.begin(), a.sbatch_args.end());
  submit.push_back(script_path.string());
  const auto [rc, out] = slurm_client(submit, adir / "logs" / "sbatch.out");
  if (rc != 0) return {fmt::format("sbatch failed (exit {}): {}", rc, out)};
  const std::string job = out.substr(0, out.find_first_of(";\n"));
  std::cerr << fmt::format("sweep: submitted Slurm job {} (array {}, {} tasks)\n", job, index_ranges(todo),
                           todo.size());

  Progress progress(g, g.chunks - static_cast<long long>(todo.size()));
  const auto poll = std::chrono::duration<double>(a.poll);
  while (true) {
    const long long done = g.chunks - static_cast<long long>(missing_sweep_chunks(g, dir).size());
    const auto [qrc, queue] =
        slurm_client({"squeue", "-h", "-r", "-j", job, "-o", "%i %t"}, adir / "logs" / "squeue.out");
    int running = 0;
    bool listed = false;
    std::istringstream in(queue);
    for (std::string id, state; in >> id >> state;) {
      listed = true;
      if (state == "R") ++running;
    }
    progress.update(done, running, " (job " + job + ")");
    if (done == g.chunks) return {};
    const bool gone = !listed && (qrc == 0 || queue.find("Invalid job id") != std::string::npos);
    if (gone) {
      const auto left = missing_sweep_chunks(g, dir);
      if (left.empty()) return {};
      std::vector<std::string> failures;
      for (const long long k : left) {
        const fs::path log = adir / "logs" / fmt::format("slurm-{}_{}.out", job, k);
        failures.push_back(
            fmt::format("chunk {} did not finish in Slurm job {}; {}: {}", k, job, log.string(), tail_of(log)));
      }
      return failures;
    }
    if (qrc != 0 && queue.find("Invalid job id") == std::string::npos) {
      return {fmt::format("squeue failed (exit {}): {}", qrc, queue)};
    }
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace fmsim::cli
