// Prometheus histogram exposition.
#include "observability/prometheus_histogram.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fmsim::observability {
namespace {

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string labels_text(const std::vector<std::pair<std::string, std::string>>& labels, const std::string& le) {
  std::string out;
  for (const auto& [k, v] : labels) out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", k, escape(v));
  if (!le.empty()) out += fmt::format("{}le=\"{}\"", out.empty() ? "" : ",", le);
  return out.empty() ? "" : "{" + out + "}";
}

}  // namespace

std::vector<double> cumulative_counts(const std::vector<double>& values, const std::vector<double>& bounds) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> out;
  for (double b : bounds) {
    out.push_back(static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), b) - sorted.begin()));
  }
  return out;
}

std::string to_prometheus_histograms(const std::vector<Histogram>& histograms) {
  std::string out;
  for (const auto& h : histograms) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", h.name, h.help, h.name);
    for (std::size_t i = 0; i < h.bounds.size(); ++i) {
      out += fmt::format("{}_bucket{} {}\n", h.name, labels_text(h.labels, fmt::format("{}", h.bounds[i])),
                         h.cumulative[i]);
    }
    out += fmt::format("{}_bucket{} {}\n", h.name, labels_text(h.labels, "+Inf"), h.count);
    out += fmt::format("{}_sum{} {}\n", h.name, labels_text(h.labels, ""), h.sum);
    out += fmt::format("{}_count{} {}\n", h.name, labels_text(h.labels, ""), h.count);
  }
  return out;
}

}  // namespace fmsim::observability
