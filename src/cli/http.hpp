// The HTTP pieces of `fmsim metrics serve` and `fmsim compare` (cpp-httplib, one translation unit).
#pragma once

#include <functional>
#include <string>

namespace fmsim::cli {

struct HttpResponse {
  int status = 0;
  std::string body;
};

/// GET `base_url` (http://host:port[/prefix]) + `path_and_query`. InputError naming `flag` when the
/// URL is not http(s)://host[:port], or the server cannot be reached or has not answered in full
/// within `timeout_s` (a deadline on the whole exchange, so a server trickling bytes cannot hold it).
HttpResponse http_get(const std::string& base_url, const std::string& path_and_query, const std::string& flag,
                      double timeout_s = 10.0);

/// Percent-encodes a query parameter value.
std::string url_encode(const std::string& text);

/// Serves GET /metrics (Prometheus text format 0.0.4, body from `metrics`) and a short index on /
/// at host:port until the process is stopped. `on_listening(port)` is called once bound (port 0
/// picks a free port). InputError naming `flag` when the address cannot be bound, a port already
/// in use included (no SO_REUSEPORT: two servers never share a port). One thread, poll(): each
/// client has 5 s for its whole request and 5 s to take the answer, at most 256 at once, so slow
/// or idle connections cannot keep a scrape waiting.
void serve_metrics(const std::string& host, int port, const std::function<std::string()>& metrics,
                   const std::function<void(int)>& on_listening, const std::string& flag);

}  // namespace fmsim::cli
