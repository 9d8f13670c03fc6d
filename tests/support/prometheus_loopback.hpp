// A real Prometheus (Debian package prometheus) on loopback for tests: its own free port, its own
// data directory and config inside a fresh temporary directory, stopped by pid.
//
// Usage in a GoogleTest:
//
//   #include "support/prometheus_loopback.hpp"
//   TEST(Prometheus, Scrapes) {
//     FMSIM_SKIP_WITHOUT_PROMETHEUS();
//     fmsim::testing::PrometheusLoopbackOptions options;
//     options.scrape_targets = {"127.0.0.1:9464"};        // scraped every second
//     fmsim::testing::PrometheusLoopback prom(options);  // starts it, waits for /-/ready
//     auto result = prom.query("up", std::nullopt);       // /api/v1/query -> data.result
//   }                                                    // destructor: SIGTERM by pid, removes dir()
//
// options.data_dir points it at an existing TSDB directory (blocks from `fmsim metrics load`).
// FMSIM_KEEP_PROMETHEUS_DIR set in the environment keeps dir() (its path printed to stderr).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace fmsim::testing {

/// True when `prometheus` and `promtool` are on PATH.
bool have_prometheus();

#define FMSIM_SKIP_WITHOUT_PROMETHEUS()                                                \
  do {                                                                                 \
    if (!::fmsim::testing::have_prometheus())                                          \
      GTEST_SKIP() << "prometheus/promtool not installed (Debian package prometheus)"; \
  } while (false)

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
int free_loopback_port();

/// A child process started with fork/execvp, its output in a log file, stopped by pid
/// (SIGTERM, then SIGKILL after 10 s) by stop() or the destructor.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();
  void stop();
  [[nodiscard]] bool running();
  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] std::string log_tail() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

struct PrometheusLoopbackOptions {
  std::vector<std::string> scrape_targets;  ///< host:port list of the job "fmsim" (scrape interval 1 s)
  std::filesystem::path data_dir;           ///< empty: data/ inside dir()
  std::chrono::seconds start_timeout{30};
};

class PrometheusLoopback {
 public:
  explicit PrometheusLoopback(const PrometheusLoopbackOptions& options);
  PrometheusLoopback(const PrometheusLoopback&) = delete;
  PrometheusLoopback& operator=(const PrometheusLoopback&) = delete;
  ~PrometheusLoopback();

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  /// data.result of an instant query (at `time_s` Unix seconds, or now); throws on an API error.
  nlohmann::json query(const std::string& promql, std::optional<std::int64_t> time_s);

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  std::optional<ChildProcess> process_;
};

}  // namespace fmsim::testing
