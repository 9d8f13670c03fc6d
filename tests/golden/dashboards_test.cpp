// The Grafana dashboards in dashboards/grafana: each parses as Grafana's dashboard JSON model and
// queries only metrics that `fmsim run --metrics-out` writes or that a named exporter produces
// (dashboards/exporter_metrics.yaml), so the same panels work on simulated and real series.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using fmsim::testing::run_fmsim;
using fmsim::testing::source_path;

std::vector<fs::path> dashboards() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(source_path("dashboards/grafana"))) {
    if (e.path().extension() == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// Removes the parts of `text` between `open` and the matching `close` (no nesting needed in PromQL
// label matchers and range selectors); quoted strings are removed first.
std::string strip(std::string text, char open, char close) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == open) {
      ++depth;
    } else if (c == close && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out.push_back(c);
    }
  }
  return out;
}

// Metric names a PromQL expression selects.
std::set<std::string> metrics_of(const std::string& expr) {
  static const std::set<std::string> keywords = {"by",          "without", "on",  "ignoring", "group_left",
                                                 "group_right", "bool",    "and", "or",       "unless",
                                                 "offset",      "inf",     "nan"};
  std::string s = std::regex_replace(expr, std::regex("\"(\\\\.|[^\"])*\""), "\"\"");
  s = strip(s, '{', '}');
  s = strip(s, '[', ']');
  // label lists of by/without/on/ignoring: "by (a, b)"
  s = std::regex_replace(s, std::regex("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)"), " ");
  s = std::regex_replace(s, std::regex("\\$[A-Za-z_]+"), " ");
  std::set<std::string> out;
  const std::regex ident("[A-Za-z_:][A-Za-z0-9_:]*");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), ident); it != std::sregex_iterator(); ++it) {
    const std::string name = it->str();
    const auto end = static_cast<std::size_t>(it->position() + it->length());
    std::size_t next = end;
    while (next < s.size() && s[next] == ' ') ++next;
    const bool call = next < s.size() && s[next] == '(';
    const bool number = it->position() > 0 && (std::isdigit(static_cast<unsigned char>(s[it->position() - 1])) != 0 ||
                                               s[it->position() - 1] == '.');
    if (!call && !number && keywords.count(name) == 0) out.insert(name);
  }
  return out;
}

// The uid of the datasource the provisioning file defines.
std::string provisioned_uid() {
  const YAML::Node ds = YAML::LoadFile(source_path("dashboards/grafana/provisioning/datasources/prometheus.yaml"));
  return ds["datasources"][0]["uid"].as<std::string>();
}

// The families an OpenMetrics file declares (histograms with their _bucket, _sum and _count).
std::set<std::string> families_in(const fs::path& file) {
  std::set<std::string> produced;
  std::ifstream om(file);
  std::string line;
  while (std::getline(om, line)) {
    if (!line.starts_with("# TYPE ")) continue;
    const auto name = line.substr(7, line.find(' ', 7) - 7);
    produced.insert(name);
    if (line.ends_with(" histogram")) {
      for (const char* s : {"_bucket", "_sum", "_count"}) produced.insert(name + s);
    }
  }
  return produced;
}

// Every PromQL expression of a dashboard: panel targets, annotations, label_values() variables.
std::vector<std::string> expressions_of(const nlohmann::json& d) {
  std::vector<std::string> exprs;
  for (const auto& p : d.at("panels")) {
    if (p.contains("targets")) {
      for (const auto& t : p["targets"]) exprs.push_back(t.at("expr"));
    }
  }
  for (const auto& a : d.at("annotations").at("list")) {
    if (a.contains("expr")) exprs.push_back(a["expr"]);
  }
  for (const auto& v : d.at("templating").at("list")) {
    if (v.contains("definition")) {
      std::smatch m;
      const std::string def = v["definition"];
      if (std::regex_search(def, m, std::regex("label_values\\(([^,{]+)"))) exprs.push_back(m[1].str());
    }
  }
  return exprs;
}

TEST(Dashboards, PromQLMetricExtraction) {
  // The extraction the check below relies on: functions, labels, ranges and variables are not metrics.
  EXPECT_EQ(metrics_of("histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{job=~\"$job\"}[$__rate_interval])))"),
            (std::set<std::string>{"a_bucket"}));
  EXPECT_EQ(metrics_of("b / (c + vllm:d) * (e > bool 0)"), (std::set<std::string>{"b", "c", "vllm:d", "e"}));
}

TEST(Dashboards, FollowGrafanasDashboardModel) {
  const auto files = dashboards();
  ASSERT_EQ(files.size(), 4u);  // training, GPU fleet, serving, cluster
  std::set<std::string> uids;
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    const auto d = load(file);
    ASSERT_TRUE(d.at("title").is_string());
    const std::string uid = d.at("uid");
    EXPECT_LE(uid.size(), 40u);  // Grafana's limit on dashboard UIDs
    EXPECT_TRUE(std::regex_match(uid, std::regex("[A-Za-z0-9_-]+")));
    EXPECT_TRUE(uids.insert(uid).second);
    EXPECT_GE(d.at("schemaVersion").get<int>(), 36);
    EXPECT_TRUE(d.at("time").contains("from") && d.at("time").contains("to"));
    ASSERT_TRUE(d.at("annotations").at("list").is_array());
    std::set<std::string> variables = {"__rate_interval", "__interval", "__range"};
    for (const auto& v : d.at("templating").at("list")) variables.insert(v.at("name").get<std::string>());
    // Grafana's datasource reference: {type, uid}; the uid names the dashboard's datasource-type
    // variable (resolved to the provisioned Prometheus) or the provisioned datasource's own uid.
    bool has_datasource_variable = false;
    for (const auto& v : d.at("templating").at("list")) {
      has_datasource_variable |=
          v.at("type") == "datasource" && v.at("name") == "datasource" && v.at("query") == "prometheus";
    }
    EXPECT_TRUE(has_datasource_variable);
    const auto check_datasource = [&](const nlohmann::json& owner, const std::string& what) {
      ASSERT_TRUE(owner.contains("datasource") && owner["datasource"].is_object()) << what;
      EXPECT_EQ(owner["datasource"].value("type", ""), "prometheus") << what;
      EXPECT_THAT(owner["datasource"].value("uid", ""), ::testing::AnyOf("${datasource}", provisioned_uid())) << what;
    };
    std::set<int> ids;
    std::vector<std::array<int, 4>> boxes;
    for (const auto& p : d.at("panels")) {
      EXPECT_TRUE(ids.insert(p.at("id").get<int>()).second) << "duplicate panel id";
      const auto& g = p.at("gridPos");
      const int x = g.at("x"), y = g.at("y"), w = g.at("w"), h = g.at("h");
      EXPECT_TRUE(x >= 0 && w > 0 && x + w <= 24 && h > 0) << p.at("title");  // 24-column grid
      for (const auto& b : boxes) {
        const bool overlap = x < b[0] + b[2] && b[0] < x + w && y < b[1] + b[3] && b[1] < y + h;
        EXPECT_FALSE(overlap) << p.at("title") << " overlaps another panel";
      }
      boxes.push_back({x, y, w, h});
      const std::string type = p.at("type");
      EXPECT_THAT(type, ::testing::AnyOf("row", "timeseries", "stat", "state-timeline", "gauge", "table"));
      if (type == "row") continue;
      ASSERT_FALSE(p.at("targets").empty()) << p.at("title");
      check_datasource(p, p.at("title"));
      std::set<std::string> refs;
      for (const auto& t : p.at("targets")) {
        check_datasource(t, p.at("title").get<std::string>() + " / " + t.value("refId", "?"));
        EXPECT_TRUE(refs.insert(t.at("refId").get<std::string>()).second);
        const std::string expr = t.at("expr");
        EXPECT_FALSE(expr.empty());
        static const std::regex variable("\\$([A-Za-z_]+)");
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), variable); it != std::sregex_iterator(); ++it) {
          EXPECT_TRUE(variables.count((*it)[1].str()) == 1) << "undefined variable $" << (*it)[1].str();
        }
      }
    }
  }
}

TEST(Dashboards, QueryOnlyMetricsFmsimOrTheNamedExportersProduce) {
  // The families a simulated training run writes (per GPU, so every dcgm field is there).
  const fs::path dir = fs::path(::testing::TempDir()) / "dash-metrics";
  const auto r =
      run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                 "--duration", "1h", "--replications", "0", "--metrics-per-gpu", "--metrics-out", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> produced = families_in(dir / "run.om");
  // And the Slurm exporter's series of `fmsim cluster --metrics-out`.
  const auto c = run_fmsim(
      {"cluster", "--cluster", "p5.48xlarge:8", "--synthetic", "20", "--days", "1", "--metrics-out", dir.string()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::set<std::string> cluster = families_in(dir / "cluster.om");
  produced.insert(cluster.begin(), cluster.end());
  std::set<std::string> exporters;
  const YAML::Node list = YAML::LoadFile(source_path("dashboards/exporter_metrics.yaml"));
  for (const auto& e : list["exporters"]) {
    ASSERT_TRUE(e.second["source"]) << e.first.as<std::string>() << " needs a source";
    for (const auto& m : e.second["metrics"]) exporters.insert(m.as<std::string>());
  }
  std::set<std::string> used_from_fmsim;
  for (const auto& file : dashboards()) {
    const auto d = load(file);
    const std::vector<std::string> exprs = expressions_of(d);
    for (const auto& expr : exprs) {
      for (const auto& metric : metrics_of(expr)) {
        EXPECT_TRUE(produced.count(metric) + exporters.count(metric) > 0)
            << file.filename().string() << ": " << metric << " is neither written by fmsim nor listed for an exporter";
        if (produced.count(metric) != 0) used_from_fmsim.insert(metric);
      }
    }
  }
  // The cluster dashboard queries exactly the families `fmsim cluster --metrics-out` writes.
  std::set<std::string> cluster_queries;
  for (const auto& expr : expressions_of(load(source_path("dashboards/grafana/fmsim-cluster.json")))) {
    const auto m = metrics_of(expr);
    cluster_queries.insert(m.begin(), m.end());
  }
  EXPECT_EQ(cluster_queries, cluster);
  // The training and GPU fleet dashboards show fmsim's own series.
  for (const char* m : {"fmsim_tokens_total", "fmsim_mfu_ratio", "fmsim_step_time_seconds", "fmsim_ettr_ratio",
                        "fmsim_checkpoint_saves_total", "fmsim_failures_total", "DCGM_FI_PROF_SM_ACTIVE",
                        "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_DEV_POWER_USAGE"}) {
    EXPECT_EQ(used_from_fmsim.count(m), 1u) << m;
  }
}

TEST(Dashboards, ProvisioningFilesAreGrafanasFormat) {
  const YAML::Node ds = YAML::LoadFile(source_path("dashboards/grafana/provisioning/datasources/prometheus.yaml"));
  EXPECT_EQ(ds["apiVersion"].as<int>(), 1);
  EXPECT_EQ(ds["datasources"][0]["type"].as<std::string>(), "prometheus");
  EXPECT_THAT(ds["datasources"][0]["url"].as<std::string>(), ::testing::StartsWith("http://127.0.0.1:"));
  const YAML::Node db = YAML::LoadFile(source_path("dashboards/grafana/provisioning/dashboards/fmsim.yaml"));
  EXPECT_EQ(db["apiVersion"].as<int>(), 1);
  EXPECT_EQ(db["providers"][0]["type"].as<std::string>(), "file");
  EXPECT_TRUE(db["providers"][0]["options"]["path"].IsScalar());
}

}  // namespace
