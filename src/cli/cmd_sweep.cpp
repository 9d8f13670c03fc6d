// fmsim sweep: one command over a grid of flag values, run in chunks by worker processes on this
// machine or as a Slurm job array, gathered into one CSV and one JSON Lines file.
//
// Every chunk is the same process either way: `fmsim sweep GRID --out DIR --chunk K` runs the
// chunk's points in order, in-process (cli::run_captured), and writes DIR/chunks/K.jsonl whole
// (temporary file and rename). A chunk file that exists is finished: running the sweep again
// redoes only the missing chunks. DIR/sweep.json records the grid's digest, so a changed grid
// cannot mix its results with an old one's.
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "cli/run_captured.hpp"
#include "cli/sweep_grid.hpp"
#include "core/error.hpp"

extern char** environ;

namespace fmsim::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string grid;
  std::string out;
  long long chunk = -1;  ///< internal: run this one chunk (what each task runs)
  long long chunk_size = 0;
  int jobs = 0;
  bool slurm = false;
  std::vector<std::string> sbatch_args;
  int max_parallel = 0;
  double poll = 2.0;
  bool dry_run = false;
  bool json = false;
};

fs::path chunk_path(const fs::path& dir, long long k) { return dir / "chunks" / fmt::format("{:06d}.jsonl", k); }

std::vector<std::string> global_words(const Context& ctx) {
  std::vector<std::string> words;
  for (const auto& f : ctx.catalog_files) {
    words.emplace_back("--catalog");
    words.push_back(fs::absolute(f).string());
  }
  return words;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Every grid key must be a flag of the command: checked against the command's --help before any
// point runs, so `tpp: [1, 2]` is one clear error rather than a sweep of failures.
void check_flags(const SweepGrid& g, const std::vector<std::string>& globals) {
  std::vector<std::string> help_args = globals;
  for (const auto& w : split_words(g.command)) help_args.push_back(w);
  help_args.emplace_back("--help");
  const auto help = run_captured(help_args);
  if (help.status != 0 || help.out.find("--json") == std::string::npos) {
    throw core::InputError(g.file, 0, "command",
                           fmt::format("'{}' is not an fmsim command with --json output; see fmsim --help", g.command));
  }
  auto known = [&](const std::string& name) {
    const std::string flag = "--" + name;
    for (auto p = help.out.find(flag); p != std::string::npos; p = help.out.find(flag, p + 1)) {
      const char after = p + flag.size() < help.out.size() ? help.out[p + flag.size()] : ' ';
      if (!(std::isalnum(static_cast<unsigned char>(after)) || after == '-' || after == '_')) return true;
    }
    return false;
  };
  for (const auto& [k, v] : g.fixed) {
    if (!known(k))
      throw core::InputError(g.file, 0, "fixed." + k, fmt::format("'fmsim {}' has no flag --{}", g.command, k));
  }
  for (const auto& [k, v] : g.axes) {
    if (!known(k))
      throw core::InputError(g.file, 0, "grid." + k, fmt::format("'fmsim {}' has no flag --{}", g.command, k));
  }
}

nlohmann::json manifest(const SweepGrid& g) {
  return {{"version", 1},         {"grid", fs::absolute(g.file).string()},
          {"command", g.command}, {"digest", g.digest},
          {"points", g.points},   {"chunk", g.chunk},
          {"chunks", g.chunks}};
}

// Creates DIR (and chunks/, logs/) and its manifest, or checks that an existing DIR holds this
// same sweep.
void prepare_dir(const SweepGrid& g, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir / "chunks", ec);
  if (!ec) fs::create_directories(dir / "logs", ec);
  if (ec) throw core::InputError::flag("--out", fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  const fs::path m = dir / "sweep.json";
  if (fs::exists(m)) {
    const auto old = nlohmann::json::parse(read_file(m.string(), "--out"), nullptr, false);
    if (old.is_discarded() || old.value("digest", "") != g.digest) {
      throw core::InputError::flag("--out",
                                   fmt::format("'{}' holds the results of a different sweep (its grid, flags or "
                                               "chunk size changed); give another --out or remove it",
                                               dir.string()));
    }
    return;
  }
  write_file_now(m.string(), manifest(g).dump(2) + "\n", "--out");
}

std::vector<long long> missing_chunks(const SweepGrid& g, const fs::path& dir) {
  std::vector<long long> missing;
  for (long long k = 0; k < g.chunks; ++k) {
    if (!fs::exists(chunk_path(dir, k))) missing.push_back(k);
  }
  return missing;
}

// Set in the environment of the local workers: the sweep's process id. A worker that sees it ties
// its life to that process (PR_SET_PDEATHSIG), so killing a sweep stops its workers too.
constexpr const char* kParentVariable = "FMSIM_SWEEP_PARENT";

void die_with_sweep() {
  const char* parent = std::getenv(kParentVariable);
  if (parent == nullptr) return;  // a Slurm array task, or a chunk run by hand
  const std::string expected = parent;
  ::unsetenv(kParentVariable);  // not passed on to anything this worker starts
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The sweep may have died before the line above: then this worker has been reparented.
  if (std::to_string(::getppid()) != expected) throw core::InputError::flag("sweep", "the sweep has stopped");
}

// One task: the points of chunk k, in order, into chunks/k.jsonl.
void run_chunk(const SweepGrid& g, const fs::path& dir, long long k, const std::vector<std::string>& globals) {
  die_with_sweep();
  if (k < 0 || k >= g.chunks) {
    throw core::InputError::flag("--chunk",
                                 fmt::format("{} is out of range; this sweep has chunks 0 to {}", k, g.chunks - 1));
  }
  const fs::path m = dir / "sweep.json";
  const auto man = nlohmann::json::parse(read_file(m.string(), "--out"), nullptr, false);
  if (man.is_discarded() || man.value("digest", "") != g.digest) {
    throw core::InputError::flag("--out",
                                 fmt::format("'{}' belongs to a different sweep than {}", dir.string(), g.file));
  }
  const fs::path path = chunk_path(dir, k);
  if (fs::exists(path)) return;
  std::vector<std::string> base = globals;
  for (const auto& w : split_words(g.command)) base.push_back(w);
  std::string text;
  const long long end = std::min<std::int64_t>(g.points, (k + 1) * g.chunk);
  for (long long i = k * g.chunk; i < end; ++i) {
    std::vector<std::string> args = base;
    const auto more = g.point_args(i);
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_captured(args);
    text += point_record(g, i, r.status, r.out, r.err).dump() + "\n";
  }
  write_file_now(path.string(), text, "--out");
}

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

// Runs the missing chunks with `jobs` worker processes at a time. Returns the failures.
std::vector<std::string> run_local(const SweepGrid& g, const fs::path& dir, const std::vector<std::string>& globals,
                                   int jobs) {
  const fs::path exe = self_executable();
  auto todo = missing_chunks(g, dir);
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
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && fs::exists(chunk_path(dir, k))) {
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

// Submits the missing chunks as one `sbatch --array` and waits for them. Returns the failures.
std::vector<std::string> run_slurm(const SweepGrid& g, const fs::path& dir, const std::vector<std::string>& globals,
                                   const SweepArgs& a) {
  const auto todo = missing_chunks(g, dir);
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
    const long long done = g.chunks - static_cast<long long>(missing_chunks(g, dir).size());
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
      const auto left = missing_chunks(g, dir);
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

// results.csv and results.jsonl from every chunk, in point order.
void gather(const SweepGrid& g, const fs::path& dir, nlohmann::json& summary) {
  std::vector<std::string> chunks;
  std::string jsonl;
  long long errors = 0;
  for (long long k = 0; k < g.chunks; ++k) {
    chunks.push_back(read_file(chunk_path(dir, k).string(), "--out"));
    jsonl += chunks.back();
    for (auto p = chunks.back().find("\"error\":"); p != std::string::npos; p = chunks.back().find("\"error\":", p + 1))
      ++errors;
  }
  write_file_atomically((dir / "results.jsonl").string(), jsonl, "--out");
  write_file_atomically((dir / "results.csv").string(), records_to_csv(g, chunks), "--out");
  summary["errors"] = errors;
  summary["csv"] = (dir / "results.csv").string();
  summary["jsonl"] = (dir / "results.jsonl").string();
}

void run_sweep(const SweepArgs& a, Context& ctx) {
  const SweepGrid g = load_sweep_grid(a.grid, a.chunk_size);
  const auto globals = global_words(ctx);
  const fs::path dir = a.out.empty() ? fs::path(fs::path(a.grid).stem().string() + ".sweep") : fs::path(a.out);
  if (a.chunk >= 0) {
    run_chunk(g, dir, a.chunk, globals);
    return;
  }
  check_flags(g, globals);
  if (a.jobs < 0) throw core::InputError::flag("--jobs", "must be 1 or more (0 = every core)");
  if (!(a.poll > 0.0 && a.poll <= 3600.0))
    throw core::InputError::flag("--poll", "allowed: more than 0 to 3600 seconds");
  nlohmann::json summary = manifest(g);
  summary["out"] = dir.string();
  if (a.dry_run) {
    std::string first = "fmsim";
    for (const auto& w : globals) first += " " + w;
    first += " " + g.command;
    for (const auto& w : g.point_args(0)) first += " " + w;
    summary["first_point"] = first;
    if (a.json) {
      std::cout << summary.dump(2) << "\n";
    } else {
      std::cout << fmt::format("{} points in {} chunks of {} ({} flags varied); first point:\n  {}\n", g.points,
                               g.chunks, g.chunk, g.axes.size(), first);
    }
    return;
  }
  prepare_dir(g, dir);
  const auto start = std::chrono::steady_clock::now();
  const int jobs = a.jobs > 0 ? a.jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const long long already = g.chunks - static_cast<long long>(missing_chunks(g, dir).size());
  const auto failures = a.slurm ? run_slurm(g, dir, globals, a) : run_local(g, dir, globals, jobs);
  if (!failures.empty()) {
    for (const auto& f : failures) std::cerr << "fmsim: sweep: " << f << "\n";
    std::cerr << fmt::format(
        "fmsim: sweep: {} of {} chunks failed; finished chunks are kept: run the same command again to "
        "redo only the rest\n",
        failures.size(), g.chunks);
    ctx.exit_code = 1;
    return;
  }
  gather(g, dir, summary);
  summary["chunks_reused"] = already;
  summary["runner"] = a.slurm ? "slurm" : "local";
  summary["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.json) {
    std::cout << summary.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{} points ({} with errors) in {:.1f} s, {} of {} chunks reused\n  {}\n  {}\n", g.points,
                             summary["errors"].get<long long>(), summary["seconds"].get<double>(), already, g.chunks,
                             summary["csv"].get<std::string>(), summary["jsonl"].get<std::string>());
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep",
                                 "Run any command over a grid of flag values, locally or as a Slurm job array, "
                                 "into one CSV and JSON Lines file");
  cmd->add_option("GRID", args->grid, "Sweep YAML: kind: Sweep, command, fixed flags, grid of flag values")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out,
                  "Results folder (default: GRID's name + .sweep); holds chunks/, logs/, "
                  "results.csv, results.jsonl")
      ->type_name("DIR");
  cmd->add_option("--jobs,-j", args->jobs, "Worker processes on this machine (default: every core)");
  cmd->add_flag("--slurm", args->slurm, "Submit the chunks as one Slurm job array (sbatch --array) and wait for them");
  cmd->add_option("--sbatch-arg", args->sbatch_args,
                  "Extra sbatch option, e.g. --sbatch-arg=--partition=cpu (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--max-parallel", args->max_parallel, "With --slurm: at most this many array tasks at once (%N)");
  cmd->add_option("--poll", args->poll, "With --slurm: seconds between progress checks")->capture_default_str();
  cmd->add_option("--chunk-size", args->chunk_size, "Points per chunk (default: the grid's chunk, else automatic)")
      ->check(positive(args->chunk_size));
  cmd->add_option("--chunk", args->chunk, "Run only this chunk (what each task runs)")->group("");
  cmd->add_flag("--dry-run", args->dry_run, "Count points and chunks and show the first point's command; run nothing");
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  cmd->footer(
      "A grid file:\n"
      "  kind: Sweep\n"
      "  command: train\n"
      "  fixed: {gbs: 512, tp: 8}\n"
      "  grid:\n"
      "    model: [llama3.1-8b, llama3.1-70b]\n"
      "    cluster: [p5.48xlarge:16, p5en.48xlarge:16]\n"
      "    seq: [4096, 8192]\n"
      "  columns: [step_time_s, mfu, fits_memory]\n"
      "Examples:\n"
      "  fmsim sweep examples/sweep_train.yaml\n"
      "  fmsim sweep examples/sweep_train.yaml --slurm --sbatch-arg=--partition=cpu --max-parallel 64\n"
      "  fmsim sweep examples/sweep_train.yaml --dry-run\n"
      "A point whose input is invalid is recorded with its error (status 2) and the sweep goes on;\n"
      "finished chunks are kept, so running the same command again redoes only the missing ones.");
  cmd->callback([args, &ctx]() { run_sweep(*args, ctx); });
}

}  // namespace fmsim::cli
