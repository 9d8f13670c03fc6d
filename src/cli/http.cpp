// cpp-httplib client and server (see http.hpp).
#include "cli/http.hpp"

#include <fmt/format.h>
#include <httplib.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace fmsim::cli {

std::string url_encode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

HttpResponse http_get(const std::string& base_url, const std::string& path_and_query, const std::string& flag,
                      double timeout_s) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  const auto scheme = url.find("://");
  if (scheme == std::string::npos || (url.substr(0, scheme) != "http" && url.substr(0, scheme) != "https")) {
    throw core::InputError::flag(flag, fmt::format("\"{}\" is not an http:// or https:// URL (e.g. "
                                                   "http://127.0.0.1:9090)",
                                                   base_url));
  }
  const auto slash = url.find('/', scheme + 3);
  const std::string origin = url.substr(0, slash);
  const std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  httplib::Client client(origin);
  if (!client.is_valid()) throw core::InputError::flag(flag, fmt::format("cannot use \"{}\"", base_url));
  const auto secs = static_cast<time_t>(timeout_s);
  const auto usecs = static_cast<time_t>((timeout_s - static_cast<double>(secs)) * 1e6);
  client.set_connection_timeout(secs, usecs);
  client.set_read_timeout(secs, usecs);
  // The read timeout bounds each wait for bytes; a server that trickles them resets it forever,
  // so the whole exchange has the same deadline, after which the socket is shut.
  auto pending = std::async(std::launch::async, [&] { return client.Get(prefix + path_and_query); });
  if (pending.wait_for(std::chrono::duration<double>(timeout_s)) == std::future_status::timeout) {
    client.stop();
    pending.wait();
    throw core::InputError::flag(flag, fmt::format("no complete answer from {} within {:g} s", origin, timeout_s));
  }
  const auto res = pending.get();
  if (!res) {
    throw core::InputError::flag(flag, fmt::format("cannot reach {}: {}", origin, httplib::to_string(res.error())));
  }
  return {res->status, res->body};
}

namespace {

using Clock = std::chrono::steady_clock;

// Bounds of the metrics server, so that slow or idle clients cannot hold it: a client has this
// long for its whole request (headers included, however slowly it sends them) and as long again
// to take the answer; connections past the cap are closed as they arrive. One thread serves all.
constexpr auto kRequestDeadline = std::chrono::seconds(5);
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxRequestBytes = 16 * 1024;

struct Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  bool answering = false;
};

std::string http_response(int status, std::string_view reason, std::string_view type, std::string_view body) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", status,
                     reason, type, body.size(), body);
}

// The answer to one request (its first line and headers, up to the blank line).
std::string answer(std::string_view request, const std::function<std::string()>& metrics) {
  const auto line_end = request.find("\r\n");
  const std::string_view line = request.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return http_response(400, "Bad Request", "text/plain", "bad request\n");
  const std::string_view method = line.substr(0, sp1);
  std::string_view path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  path = path.substr(0, path.find('?'));
  if (method != "GET") return http_response(405, "Method Not Allowed", "text/plain", "GET only\n");
  if (path == "/metrics") return http_response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", metrics());
  if (path == "/")
    return http_response(200, "OK", "text/html", "<html><body><a href=\"/metrics\">/metrics</a></body></html>\n");
  return http_response(404, "Not Found", "text/plain", "not found\n");
}

// A listening socket on host:port; -1 and `error` set otherwise. SO_REUSEADDR only (a restart
// need not wait for TIME_WAIT), never SO_REUSEPORT: a second server on a port in use must fail
// rather than share it, which would split the scrapes between two runs.
int listen_on(const std::string& host, int port, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    error = ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

void serve_metrics(const std::string& host, int port, const std::function<std::string()>& metrics,
                   const std::function<void(int)>& on_listening, const std::string& flag) {
  std::string error;
  const int listener = listen_on(host, port, error);
  if (listener < 0) {
    throw core::InputError::flag(flag, fmt::format("cannot listen on {}:{}: {} (in use, or not an address of this "
                                                   "machine)",
                                                   host, port, error));
  }
  on_listening(bound_port(listener));
  std::vector<Connection> connections;
  std::vector<pollfd> fds;
  for (;;) {
    const auto now = Clock::now();
    // Expired connections go first: a client that has not sent its request, or not taken the
    // answer, within its time.
    std::erase_if(connections, [&](const Connection& c) {
      if (c.deadline > now) return false;
      ::close(c.fd);
      return true;
    });
    fds.assign(1, pollfd{listener, POLLIN, 0});
    auto wake = now + std::chrono::seconds(1);
    for (const auto& c : connections) {
      fds.push_back(pollfd{c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
      wake = std::min(wake, c.deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(1, wait))) < 0 && errno != EINTR)
      throw core::InputError::flag(flag, fmt::format("poll failed: {}", std::strerror(errno)));
    // Existing connections (fds[1..] match connections in order), then new ones.
    for (std::size_t i = 0; i < connections.size(); ++i) {
      auto& c = connections[i];
      const short ready = fds[i + 1].revents;
      if (ready == 0) continue;
      bool done = (ready & (POLLERR | POLLNVAL)) != 0;
      if (!done && !c.answering && (ready & (POLLIN | POLLHUP)) != 0) {
        char buffer[4096];
        const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
        if (n <= 0) {
          done = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        } else {
          c.in.append(buffer, static_cast<std::size_t>(n));
          if (c.in.find("\r\n\r\n") != std::string::npos) {
            c.out = answer(c.in, metrics);
          } else if (c.in.size() > kMaxRequestBytes) {
            c.out = http_response(431, "Request Header Fields Too Large", "text/plain", "request too large\n");
          }
          if (!c.out.empty()) {
            c.answering = true;
            c.deadline = Clock::now() + kRequestDeadline;
          }
        }
      } else if (!done && c.answering && (ready & POLLOUT) != 0) {
        const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) c.sent += static_cast<std::size_t>(n);
        done = (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || c.sent == c.out.size();
      }
      if (done) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(connections, [](const Connection& c) { return c.fd < 0; });
    if ((fds[0].revents & POLLIN) != 0) {
      for (;;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        if (connections.size() >= kMaxConnections) {
          ::close(fd);  // full: the new one goes, the ones already in progress are served
          continue;
        }
        connections.push_back(Connection{fd, Clock::now() + kRequestDeadline, {}, {}, 0, false});
      }
    }
  }
}

}  // namespace fmsim::cli
