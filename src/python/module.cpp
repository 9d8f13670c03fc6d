// The `fmsim._core` Python extension: runs one fmsim command inside the Python process.
//
// The Python API (fmsim/__init__.py) turns keyword arguments into the command's flags and calls
// run() here, which runs exactly what the `fmsim` executable runs (cli::run: the same parser,
// checks, models and --json output) with std::cout and std::cerr captured. One source of truth:
// the API takes the CLI's arguments, returns its --json shapes and raises its error messages.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/run_captured.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "fmsim's C++ core: run(args) runs one fmsim command in-process.";
  // The GIL stays held: std::cout is one per process, so two commands must not run at once.
  m.def(
      "run",
      [](const std::vector<std::string>& args) {
        const auto r = fmsim::cli::run_captured(args);
        return py::make_tuple(r.status, py::bytes(r.out), py::bytes(r.err));
      },
      py::arg("args"), "Run `fmsim ARGS...` in this process; returns (exit status, stdout bytes, stderr bytes).");
  m.def(
      "flags", [](const std::vector<std::string>& words) { return fmsim::cli::describe_flags(words).dump(); },
      py::arg("words"),
      "The flags of `fmsim WORDS...` as JSON: a list of {name, names, type, default, help, takes_value, many, "
      "required}; null when WORDS name no command.");
}
