// Fuzz target: command-line argument strings (one word per line of the input) for the commands
// that answer in milliseconds; `plan`, `goodput`, `run`, `validate`, `calibrate` and `sweep`
// search, simulate thousands of runs or start processes, so they are left to their own tests.
// `serve` and `rl` simulate requests and rollouts: they are kept to milliseconds by a small
// workload put first (40 requests, 8 prompts), which a mutated repeat of the flag replaces or
// makes an error, and their serving and RL flags are mutated like the others.
#include <unistd.h>

#include <string>
#include <vector>

#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kCommands{"catalog", "collective", "train", "checkpoint",
                                                  "models",  "serve",      "rl"};
  // Output flags (--trace, --metrics) write where they are told: the process works in its own
  // scratch folder and words naming another folder are skipped.
  static const bool in_scratch = ::chdir(fmsim::fuzz::scratch_dir().c_str()) == 0;
  if (!in_scratch) fmsim::fuzz::finding("cannot enter the scratch folder");
  auto words = fmsim::fuzz::words_of(data, size);
  if (words.empty()) return 0;
  for (const auto& w : words) {
    if (w.find('/') != std::string::npos) return 0;
  }
  // The first word picks the command (so mutations explore flags, not command names).
  const std::size_t pick = words[0].empty() ? 0 : static_cast<unsigned char>(words[0][0]) % kCommands.size();
  words[0] = kCommands[pick];
  if (words[0] == "train") words.insert(words.begin() + 1, "--analytical");
  if (words[0] == "serve") words.insert(words.begin() + 1, {"--num-requests", "40"});
  if (words[0] == "rl") words.insert(words.begin() + 1, {"--prompts", "8"});
  fmsim::fuzz::run_cli(words);
  return 0;
}
