// Running an fmsim command inside the current process with its output captured.
#include "cli/run_captured.hpp"

#include <iostream>
#include <sstream>

#include "cli/commands.hpp"

namespace fmsim::cli {
namespace {

/// Points a standard stream at another buffer for its lifetime, restoring it even on an exception.
class Redirect {
 public:
  Redirect(std::ostream& stream, std::streambuf* to) : stream_(stream), saved_(stream.rdbuf(to)) {}
  ~Redirect() { stream_.rdbuf(saved_); }
  Redirect(const Redirect&) = delete;
  Redirect& operator=(const Redirect&) = delete;

 private:
  std::ostream& stream_;
  std::streambuf* saved_;
};

}  // namespace

CapturedRun run_captured(const std::vector<std::string>& args) {
  std::vector<std::string> words{"fmsim"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::ostringstream err;
  CapturedRun r;
  {
    const Redirect o(std::cout, out.rdbuf());
    const Redirect e(std::cerr, err.rdbuf());
    r.status = run(static_cast<int>(words.size()), argv.data());
  }
  r.out = std::move(out).str();
  r.err = std::move(err).str();
  return r;
}

}  // namespace fmsim::cli
