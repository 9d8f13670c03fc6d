// Fuzz target: the validation CSVs: the generic CSV reader, the collectives table and the
// training table (resolved against the catalog).
#include <string>

#include "config/catalog_loader.hpp"
#include "config/collectives_csv.hpp"
#include "config/csv.hpp"
#include "config/training_csv.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  const std::string text(reinterpret_cast<const char*>(data), size);
  fmsim::fuzz::parse_or_finding("parse_csv", [&] { (void)fmsim::config::parse_csv(text, "input.csv"); });
  fmsim::fuzz::parse_or_finding("parse_collectives_csv",
                                [&] { (void)fmsim::config::parse_collectives_csv(text, "input.csv"); });
  const std::string path = fmsim::fuzz::input_file("training.csv", data, size);
  fmsim::fuzz::parse_or_finding("read_training_csv", [&] { (void)fmsim::config::read_training_csv(path, catalog); });
  return 0;
}
