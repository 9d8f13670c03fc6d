// Runs the fmsim binary from a golden test and captures its exit status, stdout and stderr.
//
// Usage (tests in tests/golden, tests/cli, tests/config and tests/validation get FMSIM_BINARY,
// FMSIM_SOURCE_DIR from CMake):
//
//   #include "run_cli.hpp"            // from tests/golden; "../golden/run_cli.hpp" from tests/cli etc.
//   using fmsim::testing::run_fmsim;
//   const auto r = run_fmsim({"catalog", "gpus", "--json"});
//   EXPECT_EQ(r.exit_code, 0) << r.err;
//   EXPECT_THAT(r.out, ::testing::HasSubstr("H100"));
//
//   // Paths inside the repository (validation data included), independent of the working directory:
//   run_fmsim({"catalog", "show", "my-gpu", "--catalog", fmsim::testing::source_path("examples/custom_catalog.yaml")});
//
// The binary is started with fork/execv (no shell, so arguments need no quoting), stdout and
// stderr are read concurrently through poll() (no deadlock on large outputs), and the test
// never depends on the current working directory unless RunOptions::cwd asks for one.
#pragma once

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fmsim::testing {

/// What one run of the binary produced.
struct CliResult {
  int exit_code = -1;  ///< exit status 0..255; 128+N when killed by signal N
  std::string out;     ///< everything written to stdout
  std::string err;     ///< everything written to stderr

  /// stdout and stderr together, for "the message appears somewhere" checks.
  [[nodiscard]] std::string all() const { return out + err; }
};

/// Optional settings for one run.
struct RunOptions {
  std::string cwd;                                       ///< working directory of the child; empty = inherit
  std::string input;                                     ///< bytes written to the child's stdin (then closed)
  std::vector<std::pair<std::string, std::string>> env;  ///< extra environment variables
};

/// The whole content of a file, bytes as they are ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Absolute path of `relative` inside the source tree (e.g. "examples/custom_catalog.yaml").
inline std::string source_path(const std::string& relative) {
#ifdef FMSIM_SOURCE_DIR
  return std::string(FMSIM_SOURCE_DIR) + "/" + relative;
#else
  return relative;
#endif
}

/// Runs `binary` with `args` (argv[1..]) and returns its exit code and output.
/// Throws std::runtime_error only if the process cannot be started at all.
inline CliResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                            const RunOptions& options = {}) {
  int out_pipe[2];
  int err_pipe[2];
  int in_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0 || pipe(in_pipe) != 0) {
    throw std::runtime_error(std::string("run_binary: pipe failed: ") + std::strerror(errno));
  }
  std::vector<std::string> argv_storage;
  argv_storage.reserve(args.size() + 1);
  argv_storage.push_back(binary);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    throw std::runtime_error(std::string("run_binary: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(in_pipe[0], STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    for (const auto& [key, value] : options.env) setenv(key.c_str(), value.c_str(), 1);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  // Small inputs fit in the pipe buffer; write before reading, then close so the child sees EOF.
  std::size_t written = 0;
  while (written < options.input.size()) {
    const ssize_t n = write(in_pipe[1], options.input.data() + written, options.input.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  close(in_pipe[1]);

  CliResult result;
  std::array<pollfd, 2> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  int open_fds = 2;
  std::array<char, 65536> buffer{};
  while (open_fds > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
      if (n > 0) {
        sinks[i]->append(buffer.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

/// The fmsim binary under test: $FMSIM_TEST_BINARY where set (make test-sanitize runs the Release
/// build's golden tests against the sanitized fmsim, so they are not compiled twice), else the one
/// CMake built (FMSIM_BINARY).
inline std::string fmsim_binary() {
  if (const char* binary = std::getenv("FMSIM_TEST_BINARY"); binary != nullptr && *binary != '\0') return binary;
#ifdef FMSIM_BINARY
  return FMSIM_BINARY;
#else
  return "fmsim";
#endif
}

/// Whether the code under test runs under ASan/UBSan: this test built so (FMSIM_SANITIZED), or
/// $FMSIM_TEST_SANITIZED=1 beside a sanitized $FMSIM_TEST_BINARY.
inline bool sanitized() {
#ifdef FMSIM_SANITIZED
  return true;
#else
  const char* flag = std::getenv("FMSIM_TEST_SANITIZED");
  return flag != nullptr && std::string(flag) == "1";
#endif
}

/// Runs the fmsim binary under test (fmsim_binary()) with `args`.
inline CliResult run_fmsim(const std::vector<std::string>& args, const RunOptions& options = {}) {
#ifdef FMSIM_BINARY
  return run_binary(fmsim_binary(), args, options);
#else
  static_assert(sizeof(args) == 0, "run_fmsim needs the FMSIM_BINARY compile definition");
  return {};
#endif
}

/// A time bound that guards against a hang or a runaway loop, not a speed check: `seconds` in the
/// Release suite, ten times that under ASan/UBSan (make test-sanitize), where the command runs
/// 5-10x slower (`fmsim cluster --node-failure-rate 1000`: 2.9 s Release, 30 s sanitized at -O1,
/// measured 2026-11-28; the speed checks proper skip themselves there).
/// `args` followed by `more`: a base command line with extra flags.
inline std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

inline double hang_guard_s(double seconds) { return sanitized() ? 10.0 * seconds : seconds; }

/// The words of a shell command line as a POSIX shell splits it: blanks separate, '...' and "..."
/// quote (no escapes, variables or globs): for running the command lines docs and reports print.
inline std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string w;
  char quote = 0;
  bool in_word = false;
  for (const char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        w += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(w);
      w.clear();
      in_word = false;
    } else {
      w += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(w);
  return words;
}

}  // namespace fmsim::testing
