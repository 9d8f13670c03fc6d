// The workers of `fmsim sweep` (cli/cmd_sweep.cpp): a grid's missing chunks run by local worker
// processes or as one Slurm job array, each task the same `fmsim sweep GRID --out DIR --chunk K`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cli/sweep_grid.hpp"

namespace fmsim::cli {

/// DIR/chunks/K.jsonl: the finished chunk K of the sweep in DIR.
std::filesystem::path sweep_chunk_path(const std::filesystem::path& dir, long long k);
/// The chunks of `g` that DIR does not hold yet, in order.
std::vector<long long> missing_sweep_chunks(const SweepGrid& g, const std::filesystem::path& dir);

/// In a local worker: ties its life to the sweep that started it (PR_SET_PDEATHSIG), so killing
/// a sweep stops its workers; InputError when that sweep has already stopped. Nothing elsewhere.
void die_with_sweep();

/// Runs the missing chunks with `jobs` worker processes at a time. Returns the failures.
std::vector<std::string> run_sweep_chunks_locally(const SweepGrid& g, const std::filesystem::path& dir,
                                                  const std::vector<std::string>& globals, int jobs);

/// How the Slurm runner submits and waits.
struct SlurmSweepOptions {
  std::vector<std::string> sbatch_args;  ///< passed to sbatch before the script
  int max_parallel = 0;                  ///< the array's %N (0: no limit)
  double poll = 2.0;                     ///< seconds between squeue calls
};
/// Submits the missing chunks as one `sbatch --array` and waits for them. Returns the failures.
std::vector<std::string> run_sweep_chunks_on_slurm(const SweepGrid& g, const std::filesystem::path& dir,
                                                   const std::vector<std::string>& globals, const SlurmSweepOptions& a);

}  // namespace fmsim::cli
