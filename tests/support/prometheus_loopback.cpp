// A real Prometheus on loopback (see prometheus_loopback.hpp).
#include "support/prometheus_loopback.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cli/http.hpp"

namespace fmsim::testing {
namespace fs = std::filesystem;

bool have_prometheus() {
  return std::system("command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1") == 0;
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const fs::path& log) : log_(log) {
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::stop() {
  if (!running()) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string ChildProcess::log_tail() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  return text.size() > 3000 ? text.substr(text.size() - 3000) : text;
}

PrometheusLoopback::PrometheusLoopback(const PrometheusLoopbackOptions& options) {
  std::string pattern = (fs::path(::testing::TempDir()) / "fmsim-prometheus-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  port_ = free_loopback_port();
  {
    std::ofstream conf(dir_ / "prometheus.yml");
    conf << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n";
    if (!options.scrape_targets.empty()) {
      conf << "scrape_configs:\n  - job_name: fmsim\n    honor_labels: true\n    static_configs:\n      - targets: [";
      for (std::size_t i = 0; i < options.scrape_targets.size(); ++i) {
        conf << (i ? ", " : "") << "'" << options.scrape_targets[i] << "'";
      }
      conf << "]\n";
    }
  }
  const fs::path data = options.data_dir.empty() ? dir_ / "data" : options.data_dir;
  process_.emplace(
      std::vector<std::string>{"prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
                               "--storage.tsdb.path=" + data.string(), "--storage.tsdb.retention.time=100y",
                               "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
      dir_ / "prometheus.log");
  const auto deadline = std::chrono::steady_clock::now() + options.start_timeout;
  for (;;) {
    try {
      if (cli::http_get(url(), "/-/ready", "prometheus", 1.0).status == 200) return;
    } catch (const std::exception&) {}
    if (!process_->running() || std::chrono::steady_clock::now() > deadline) {
      const std::string log = process_->log_tail();
      process_.reset();
      throw std::runtime_error("prometheus did not become ready on " + url() + ":\n" + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

PrometheusLoopback::~PrometheusLoopback() {
  process_.reset();
  if (std::getenv("FMSIM_KEEP_PROMETHEUS_DIR") != nullptr) {
    std::cerr << "prometheus dir kept: " << dir_ << "\n";
    return;
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

nlohmann::json PrometheusLoopback::query(const std::string& promql, std::optional<std::int64_t> time_s) {
  std::string path = "/api/v1/query?query=" + cli::url_encode(promql);
  if (time_s) path += "&time=" + std::to_string(*time_s);
  const auto r = cli::http_get(url(), path, "prometheus", 10.0);
  const auto j = nlohmann::json::parse(r.body);
  if (j.value("status", "") != "success") throw std::runtime_error("query " + promql + ": " + r.body);
  return j["data"]["result"];
}

}  // namespace fmsim::testing
