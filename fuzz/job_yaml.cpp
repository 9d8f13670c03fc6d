// Fuzz target: a training job file (kind: TrainingJob; train --job FILE): read under default
// flags and resolved into a validated job with its stack's calibration (jobspec), the path of
// train, plan, run and compare before any prediction. The parser alone, not a command, on the
// text in memory (jobspec::apply_job_text, the in-memory form of --job FILE), so that one
// execution costs microseconds.
#include <string_view>

#include "config/catalog_loader.hpp"
#include "fuzz_target.hpp"
#include "jobspec/training.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const fmsim::jobspec::FlagGiven no_flags = [](std::string_view) { return false; };
  fmsim::fuzz::parse_or_finding("resolve_training_job", [&] {
    fmsim::jobspec::TrainingJobFlags flags;
    fmsim::jobspec::apply_job_text(flags, text, "job.yaml", no_flags);
    (void)fmsim::jobspec::resolve_training_job(flags, catalog, no_flags);
  });
  return 0;
}
