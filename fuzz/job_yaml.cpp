// Fuzz target: a training job file (kind: TrainingJob; train --job FILE), predicted with the
// closed-form schedule so that one execution stays fast.
#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fmsim::fuzz::input_file("job.yaml", data, size);
  fmsim::fuzz::run_cli({"train", "--job", path, "--analytical", "--json"});
  return 0;
}
