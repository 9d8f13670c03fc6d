// Prometheus text exposition format 0.0.4 writer.
#include "observability/prometheus.hpp"

#include <map>
#include <set>

#include "core/error.hpp"
#include "observability/openmetrics.hpp"

namespace fmsim::observability {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

void append_escaped(std::string& out, std::string_view text, bool escape_quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && escape_quote) {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
}

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::Gauge: return "gauge";
    case MetricType::Counter: return "counter";
  }
  return "untyped";
}

}  // namespace

bool is_valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = is_alpha(c) || c == '_' || c == ':' || (i > 0 && is_ascii_digit(c));
    if (!ok) return false;
  }
  return true;
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = is_alpha(c) || c == '_' || (i > 0 && is_ascii_digit(c));
    if (!ok) return false;
  }
  return true;
}

Metric gauge(std::string name, std::string help, double value,
             std::vector<std::pair<std::string, std::string>> labels) {
  return Metric{.name = std::move(name),
                .help = std::move(help),
                .type = MetricType::Gauge,
                .labels = std::move(labels),
                .value = value};
}

Metric counter(std::string name, std::string help, double value,
               std::vector<std::pair<std::string, std::string>> labels) {
  return Metric{.name = std::move(name),
                .help = std::move(help),
                .type = MetricType::Counter,
                .labels = std::move(labels),
                .value = value};
}

std::string to_prometheus_text(const std::vector<Metric>& metrics) {
  std::vector<std::string> names;  // first-appearance order
  std::map<std::string, std::vector<const Metric*>> samples;
  for (const auto& m : metrics) {
    FMSIM_CHECK(is_valid_metric_name(m.name), "invalid Prometheus metric name \"" + m.name + "\"");
    if (m.type == MetricType::Counter) {
      FMSIM_CHECK(m.name.ends_with("_total"), "counter \"" + m.name + "\" must end in _total");
      FMSIM_CHECK(!(m.value < 0.0), "counter \"" + m.name + "\" is negative");
    }
    std::set<std::string> seen;
    for (const auto& [label, value] : m.labels) {
      FMSIM_CHECK(is_valid_label_name(label), "invalid Prometheus label name \"" + label + "\" on " + m.name);
      FMSIM_CHECK(seen.insert(label).second, "duplicate label \"" + label + "\" on " + m.name);
    }
    auto& group = samples[m.name];
    if (group.empty()) {
      names.push_back(m.name);
    } else {
      FMSIM_CHECK(group.front()->help == m.help && group.front()->type == m.type,
                  "samples of " + m.name + " disagree on help or type");
    }
    group.push_back(&m);
  }

  std::string out;
  for (const auto& name : names) {
    const auto& group = samples[name];
    out += "# HELP ";
    out += name;
    out += ' ';
    append_escaped(out, group.front()->help, false);
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type_name(group.front()->type);
    out += "\n";
    for (const Metric* m : group) {
      out += name;
      if (!m->labels.empty()) {
        out += "{";
        for (std::size_t i = 0; i < m->labels.size(); ++i) {
          if (i > 0) out += ",";
          out += m->labels[i].first;
          out += "=\"";
          append_escaped(out, m->labels[i].second, true);
          out += "\"";
        }
        out += "}";
      }
      out += ' ';
      append_metric_value(out, m->value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace fmsim::observability
