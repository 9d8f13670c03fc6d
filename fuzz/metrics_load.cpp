// Fuzz target: an OpenMetrics file (--metrics-out's run.om, or any exporter's backfill file) as
// `fmsim metrics load` turns it into a Prometheus TSDB block and `fmsim metrics report` draws it.
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fs = std::filesystem;
  static const fs::path dir = fs::path(fmsim::fuzz::scratch_dir()) / "metrics";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir / "in", ec);
  std::ofstream(dir / "in" / "run.om", std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  fmsim::fuzz::run_cli({"metrics", "load", (dir / "in").string(), "--prometheus-data", (dir / "data").string()});
  fmsim::fuzz::run_cli({"metrics", "report", (dir / "in").string(), "--html", (dir / "report.html").string()});
  return 0;
}
