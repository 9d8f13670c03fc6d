// Fuzz target: a training job file (kind: TrainingJob; train --job FILE): read under default
// flags and resolved into a validated job with its stack's calibration (jobspec), the path of
// train, plan, run and compare before any prediction. The parser alone, not a command, so that
// one execution costs microseconds.
#include <string>
#include <string_view>

#include "config/catalog_loader.hpp"
#include "fuzz_target.hpp"
#include "jobspec/training.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  fmsim::jobspec::TrainingJobFlags flags;
  flags.job_file = fmsim::fuzz::input_file("job.yaml", data, size);
  fmsim::fuzz::parse_or_finding("resolve_training_job", [&] {
    (void)fmsim::jobspec::resolve_training_job(flags, catalog, [](std::string_view) { return false; });
  });
  return 0;
}
