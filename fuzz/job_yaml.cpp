// Fuzz target: a training job file (kind: TrainingJob; train --job FILE): read under default
// flags and resolved into a validated job with its stack's calibration (jobspec), the path of
// train, plan, run and compare before any prediction. The parser alone, not a command, so that
// one execution costs microseconds.
#include <exception>
#include <string>
#include <string_view>

#include "config/catalog_loader.hpp"
#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "jobspec/training.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  fmsim::jobspec::TrainingJobFlags flags;
  flags.job_file = fmsim::fuzz::input_file("job.yaml", data, size);
  try {
    (void)fmsim::jobspec::resolve_training_job(flags, catalog, [](std::string_view) { return false; });
  } catch (const fmsim::core::InputError&) {
  } catch (const std::exception& e) {
    fmsim::fuzz::finding(std::string("resolve_training_job: ") + e.what());
  }
  return 0;
}
