// Fuzz target: the validation CSVs: the generic CSV reader, the collectives table and the
// training table (resolved against the catalog), each on the text in memory.
#include <optional>
#include <string>
#include <vector>

#include "config/catalog_loader.hpp"
#include "config/collectives_csv.hpp"
#include "config/csv.hpp"
#include "config/training_csv.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto catalog = fmsim::config::load_catalog();
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<std::vector<fmsim::config::CsvRecord>> table;
  fmsim::fuzz::parse_or_finding("parse_csv", [&] { table = fmsim::config::parse_csv(text, "input.csv"); });
  fmsim::fuzz::parse_or_finding("parse_collectives_csv",
                                [&] { (void)fmsim::config::parse_collectives_csv(text, "input.csv"); });
  // read_training_csv(path) is training_rows on the file's parsed text.
  if (table) {
    fmsim::fuzz::parse_or_finding("training_rows",
                                  [&] { (void)fmsim::config::training_rows(*table, "input.csv", catalog, {}); });
  }
  return 0;
}
