// Prometheus text format 0.0.4: a validator written from the format description checks the
// output; escaping, grouping, value rendering and the naming preconditions.
#include "observability/prometheus.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "observability/metric_names.hpp"

namespace fmsim::observability {
namespace {

// Checks text against the exposition format 0.0.4 rules
// (prometheus.io/docs/instrumenting/exposition_formats/#text-based-format):
// - lines end in "\n"; "# HELP <name> <text>" and "# TYPE <name> <counter|gauge|histogram|summary|untyped>";
// - at most one HELP and one TYPE per metric name, TYPE before the name's first sample;
// - samples: name [{label="value",...}] value [timestamp]; metric names [a-zA-Z_:][a-zA-Z0-9_:]*,
//   label names [a-zA-Z_][a-zA-Z0-9_]*; label values escape only \\, \" and \n;
// - values are Go floats (including NaN, +Inf, -Inf); samples of one name are contiguous;
// - a label name appears at most once per sample.
// Returns the list of violations (empty when valid), and fills `values` with name{labels} -> value.
std::vector<std::string> validate(const std::string& text, std::map<std::string, double>* values = nullptr) {
  std::vector<std::string> errors;
  if (!text.empty() && text.back() != '\n') errors.push_back("text does not end in a newline");
  const std::regex name_re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  const std::regex label_re("[a-zA-Z_][a-zA-Z0-9_]*");
  const std::regex value_re(R"([+-]?(Inf|NaN|[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?))");
  std::set<std::string> helped, typed, finished;
  std::string current;  // the name whose samples are being read
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (line.starts_with("#")) {
      std::istringstream words(line);
      std::string hash, keyword, name;
      words >> hash >> keyword >> name;
      if (keyword != "HELP" && keyword != "TYPE") continue;  // other comments are allowed
      if (!std::regex_match(name, name_re)) errors.push_back(where + "bad name in " + keyword);
      if (keyword == "HELP" && !helped.insert(name).second) errors.push_back(where + "second HELP for " + name);
      if (keyword == "TYPE") {
        std::string type;
        words >> type;
        static const std::set<std::string> types = {"counter", "gauge", "histogram", "summary", "untyped"};
        if (!types.contains(type)) errors.push_back(where + "bad type " + type);
        if (!typed.insert(name).second) errors.push_back(where + "second TYPE for " + name);
        if (finished.contains(name) || current == name) errors.push_back(where + "TYPE after samples of " + name);
      }
      if (keyword == "HELP") {
        const std::string help = line.substr(std::min(line.size(), 8 + name.size()));
        for (std::size_t i = 0; i < help.size(); ++i) {
          if (help[i] == '\\' && (i + 1 == help.size() || (help[i + 1] != '\\' && help[i + 1] != 'n'))) {
            errors.push_back(where + "bad escape in HELP");
          }
          if (help[i] == '\\') ++i;
        }
      }
      continue;
    }
    if (line.empty()) continue;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    const std::string name = line.substr(0, i);
    if (!std::regex_match(name, name_re)) errors.push_back(where + "bad metric name '" + name + "'");
    if (name != current) {
      if (finished.contains(name)) errors.push_back(where + "samples of " + name + " are not contiguous");
      if (!current.empty()) finished.insert(current);
      current = name;
    }
    std::string key = name;
    if (i < line.size() && line[i] == '{') {
      ++i;
      std::set<std::string> seen;
      key += "{";
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find('=', i);
        if (eq == std::string::npos) {
          errors.push_back(where + "label without '='");
          break;
        }
        const std::string label = line.substr(i, eq - i);
        if (!std::regex_match(label, label_re) || label.starts_with("__"))
          errors.push_back(where + "bad label name " + label);
        if (!seen.insert(label).second) errors.push_back(where + "duplicate label " + label);
        i = eq + 1;
        if (i >= line.size() || line[i] != '"') {
          errors.push_back(where + "label value not quoted");
          break;
        }
        ++i;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) break;
            const char next = line[i + 1];
            if (next == '\\')
              value += '\\';
            else if (next == '"')
              value += '"';
            else if (next == 'n')
              value += '\n';
            else
              errors.push_back(where + "bad escape in label value");
            i += 2;
            continue;
          }
          value += line[i++];
        }
        if (i >= line.size()) {
          errors.push_back(where + "unterminated label value");
          break;
        }
        ++i;  // closing quote
        key += label + "=" + value + ";";
        if (i < line.size() && line[i] == ',') ++i;
      }
      key += "}";
      ++i;  // closing brace
    }
    if (i >= line.size() || line[i] != ' ') {
      errors.push_back(where + "no space before the value");
      continue;
    }
    std::istringstream rest(line.substr(i + 1));
    std::string value, timestamp, extra;
    rest >> value >> timestamp >> extra;
    if (!std::regex_match(value, value_re)) errors.push_back(where + "bad value " + value);
    if (!timestamp.empty() && !std::regex_match(timestamp, std::regex("-?[0-9]+")))
      errors.push_back(where + "bad timestamp");
    if (!extra.empty()) errors.push_back(where + "trailing text");
    if (values != nullptr) {
      (*values)[key] = value == "NaN"    ? NAN
                       : value == "+Inf" ? INFINITY
                       : value == "-Inf" ? -INFINITY
                                         : std::stod(value);
    }
  }
  return errors;
}

std::vector<Metric> sample_metrics() {
  namespace names = metric_names;
  return {
      gauge(std::string(names::kStepTimeSeconds), "Simulated wall time of one optimizer step.", 12.75),
      gauge(std::string(names::kMemoryBytes), "Memory per GPU by kind.", 17.5e9, {{"kind", "weights"}}),
      gauge(std::string(names::kStepTimeBreakdownSeconds), "Exposed step time by cause.", 8.5,
            {{"component", "compute"}}),
      gauge(std::string(names::kMemoryBytes), "Memory per GPU by kind.", 35e9, {{"kind", "optimizer"}}),
      gauge(std::string(names::kTokensPerSecondPerGpu), "Training throughput per GPU.", 3210.5),
      gauge(std::string(names::kStepTimeBreakdownSeconds), "Exposed step time by cause.", 4.25, {{"component", "tp"}}),
      counter(std::string(names::kTokensTotal), "Tokens processed in the simulated run.", 4.2e12),
      gauge(std::string(names::kMfuRatio), "Model FLOPs utilization.", 0.41,
            {{"layout", "tp8 pp4 dp16"}, {"gpu", "H100"}}),
  };
}

// A realistic metric set passes the validator, and values read back equal to what was written.
TEST(Prometheus, OutputPassesTheFormatValidator) {
  std::map<std::string, double> values;
  const std::string text = to_prometheus_text(sample_metrics());
  EXPECT_EQ(validate(text, &values), std::vector<std::string>{}) << text;
  EXPECT_DOUBLE_EQ(values["fmsim_step_time_seconds"], 12.75);
  EXPECT_DOUBLE_EQ(values["fmsim_memory_bytes{kind=optimizer;}"], 35e9);
  EXPECT_DOUBLE_EQ(values["fmsim_tokens_total"], 4.2e12);
}

// The validator itself rejects the faults it is meant to catch.
TEST(Prometheus, ValidatorRejectsMalformedText) {
  EXPECT_FALSE(validate("1bad 1\n").empty());
  EXPECT_FALSE(validate("m{l=\"a\\t\"} 1\n").empty());
  EXPECT_FALSE(validate("m{l=\"a\",l=\"b\"} 1\n").empty());
  EXPECT_FALSE(validate("m 1\nn 2\nm 3\n").empty());
  EXPECT_FALSE(validate("m 1\n# TYPE m gauge\n").empty());
  EXPECT_FALSE(validate("m one\n").empty());
  EXPECT_FALSE(validate("m 1").empty());
}

// Each name gets exactly one HELP and TYPE line, before its samples, and its samples are
// contiguous even when the input interleaves names (names in first-appearance order). Values use
// the shortest round-trip form: 17.5e9 -> "1.75e+10" (shorter than "17500000000").
TEST(Prometheus, GroupsSamplesByName) {
  const std::string text = to_prometheus_text(sample_metrics());
  const std::string expected_start =
      "# HELP fmsim_step_time_seconds Simulated wall time of one optimizer step.\n"
      "# TYPE fmsim_step_time_seconds gauge\n"
      "fmsim_step_time_seconds 12.75\n"
      "# HELP fmsim_memory_bytes Memory per GPU by kind.\n"
      "# TYPE fmsim_memory_bytes gauge\n"
      "fmsim_memory_bytes{kind=\"weights\"} 1.75e+10\n"
      "fmsim_memory_bytes{kind=\"optimizer\"} 3.5e+10\n"
      "# HELP fmsim_step_time_breakdown_seconds Exposed step time by cause.\n";
  EXPECT_EQ(text.substr(0, expected_start.size()), expected_start);
  EXPECT_NE(text.find("# TYPE fmsim_tokens_total counter\nfmsim_tokens_total 4.2e+12\n"), std::string::npos);
  EXPECT_NE(text.find("fmsim_mfu_ratio{layout=\"tp8 pp4 dp16\",gpu=\"H100\"} 0.41\n"), std::string::npos);
}

// Label values escape backslash as \\, double quote as \" and newline as \n (nothing else);
// HELP escapes backslash and newline but not quotes.
TEST(Prometheus, EscapesLabelValuesAndHelp) {
  const std::string text =
      to_prometheus_text({gauge("m", "say \"hi\"\\ then\nmore", 1, {{"path", "C:\\dir \"x\"\nnext\ttab"}})});
  EXPECT_EQ(text,
            "# HELP m say \"hi\"\\\\ then\\nmore\n"
            "# TYPE m gauge\n"
            "m{path=\"C:\\\\dir \\\"x\\\"\\nnext\ttab\"} 1\n");
  std::map<std::string, double> values;
  EXPECT_EQ(validate(text, &values), std::vector<std::string>{});
  EXPECT_TRUE(values.contains("m{path=C:\\dir \"x\"\nnext\ttab;}"));
}

// Values: shortest round-trip decimal; NaN, +Inf, -Inf spelled as Prometheus expects; -0 as 0.
TEST(Prometheus, RendersSpecialValues) {
  const std::string text =
      to_prometheus_text({gauge("a", "h", NAN), gauge("b", "h", INFINITY), gauge("c", "h", -INFINITY),
                          gauge("d", "h", -0.0), gauge("e", "h", 0.1), gauge("f", "h", 1e-9)});
  EXPECT_NE(text.find("\na NaN\n"), std::string::npos);
  EXPECT_NE(text.find("\nb +Inf\n"), std::string::npos);
  EXPECT_NE(text.find("\nc -Inf\n"), std::string::npos);
  EXPECT_NE(text.find("\nd 0\n"), std::string::npos);
  EXPECT_NE(text.find("\ne 0.1\n"), std::string::npos);
  EXPECT_NE(text.find("\nf 1e-09\n"), std::string::npos);
  EXPECT_EQ(validate(text), std::vector<std::string>{});
}

// Every name in metric_names.hpp is a valid metric name with the fmsim_ prefix; counters end in _total.
TEST(Prometheus, PublishedNamesFollowConventions) {
  namespace n = metric_names;
  for (std::string_view name :
       {n::kStepTimeSeconds, n::kStepTimeBreakdownSeconds, n::kTokensPerSecond, n::kTokensPerSecondPerGpu, n::kMfuRatio,
        n::kGpus, n::kTokensTotal, n::kStepsTotal, n::kMemoryBytes, n::kMemoryCapacityBytes, n::kCollectiveTimeSeconds,
        n::kCollectiveBusBandwidth, n::kLinkBytesPerSecond, n::kTrainingTimeSeconds, n::kCostDollars, n::kGoodputRatio,
        n::kTimeToFirstTokenSeconds, n::kInterTokenLatencySeconds, n::kRequestsPerSecond}) {
    EXPECT_TRUE(is_valid_metric_name(name)) << name;
    EXPECT_TRUE(name.starts_with("fmsim_")) << name;
  }
  EXPECT_TRUE(n::kTokensTotal.ends_with("_total"));
  EXPECT_TRUE(n::kStepsTotal.ends_with("_total"));
}

// Metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: [a-zA-Z_][a-zA-Z0-9_]*, "__" prefix reserved.
TEST(Prometheus, NameRules) {
  EXPECT_TRUE(is_valid_metric_name("fmsim:step_time_seconds"));
  EXPECT_TRUE(is_valid_metric_name("_x9"));
  EXPECT_FALSE(is_valid_metric_name("9x"));
  EXPECT_FALSE(is_valid_metric_name("step-time"));
  EXPECT_FALSE(is_valid_metric_name(""));
  EXPECT_TRUE(is_valid_label_name("kind"));
  EXPECT_FALSE(is_valid_label_name("__name__"));
  EXPECT_FALSE(is_valid_label_name("a:b"));
  EXPECT_FALSE(is_valid_label_name("1a"));
}

// Programming errors in metric definitions are caught, not written out.
TEST(Prometheus, RejectsInvalidDefinitions) {
  EXPECT_THROW(to_prometheus_text({gauge("bad-name", "h", 1)}), core::InternalError);
  EXPECT_THROW(to_prometheus_text({gauge("m", "h", 1, {{"__reserved", "x"}})}), core::InternalError);
  EXPECT_THROW(to_prometheus_text({gauge("m", "h", 1, {{"a", "x"}, {"a", "y"}})}), core::InternalError);
  EXPECT_THROW(to_prometheus_text({counter("fmsim_tokens", "h", 1)}), core::InternalError);
  EXPECT_THROW(to_prometheus_text({counter("fmsim_tokens_total", "h", -1)}), core::InternalError);
  EXPECT_THROW(to_prometheus_text({gauge("m", "h", 1), counter("m", "h", 1)}), core::InternalError);
}

// Same input, same bytes; no metrics, empty text.
TEST(Prometheus, IsDeterministic) {
  EXPECT_EQ(to_prometheus_text(sample_metrics()), to_prometheus_text(sample_metrics()));
  EXPECT_EQ(to_prometheus_text({}), "");
}

}  // namespace
}  // namespace fmsim::observability
