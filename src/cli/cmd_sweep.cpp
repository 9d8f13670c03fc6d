// fmsim sweep: one command over a grid of flag values, run in chunks by worker processes on this
// machine or as a Slurm job array, gathered into one CSV and one JSON Lines file.
//
// Every chunk is the same process either way: `fmsim sweep GRID --out DIR --chunk K` runs the
// chunk's points in order, in-process (cli::run_captured), and writes DIR/chunks/K.jsonl whole
// (temporary file and rename). A chunk file that exists is finished: running the sweep again
// redoes only the missing chunks. DIR/sweep.json records the grid's digest, so a changed grid
// cannot mix its results with an old one's. The workers are cli/sweep_workers.hpp's.
#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/flag_checks.hpp"
#include "cli/output.hpp"
#include "cli/run_captured.hpp"
#include "cli/sweep_grid.hpp"
#include "cli/sweep_workers.hpp"
#include "core/error.hpp"

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
  const fs::path path = sweep_chunk_path(dir, k);
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

// results.csv and results.jsonl from every chunk, in point order.
void gather(const SweepGrid& g, const fs::path& dir, nlohmann::json& summary) {
  std::vector<std::string> chunks;
  std::string jsonl;
  long long errors = 0;
  for (long long k = 0; k < g.chunks; ++k) {
    chunks.push_back(read_file(sweep_chunk_path(dir, k).string(), "--out"));
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
  const long long already = g.chunks - static_cast<long long>(missing_sweep_chunks(g, dir).size());
  const auto failures = a.slurm ? run_sweep_chunks_on_slurm(g, dir, globals, {a.sbatch_args, a.max_parallel, a.poll})
                                : run_sweep_chunks_locally(g, dir, globals, jobs);
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
