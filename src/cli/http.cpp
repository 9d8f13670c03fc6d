// cpp-httplib client and server (see http.hpp).
#include "cli/http.hpp"

#include <fmt/format.h>
#include <httplib.h>

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
  const auto res = client.Get(prefix + path_and_query);
  if (!res) {
    throw core::InputError::flag(flag, fmt::format("cannot reach {}: {}", origin, httplib::to_string(res.error())));
  }
  return {res->status, res->body};
}

void serve_metrics(const std::string& host, int port, const std::function<std::string()>& metrics,
                   const std::function<void(int)>& on_listening, const std::string& flag) {
  httplib::Server server;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body><a href=\"/metrics\">/metrics</a></body></html>\n", "text/html");
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    throw core::InputError::flag(flag, fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                                                   "machine)",
                                                   host, port));
  }
  on_listening(bound);
  server.listen_after_bind();
}

}  // namespace fmsim::cli
