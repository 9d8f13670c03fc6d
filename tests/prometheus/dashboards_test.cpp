// The shipped Grafana dashboards (dashboards/grafana/*.json) on fmsim's default metrics in a real
// Prometheus: `run`, `serve` and `cluster` write into one folder, `fmsim metrics load` backfills
// it, a stock Prometheus on loopback opens the blocks, and every target of every panel is
// evaluated as Grafana would send it. Each must return data (a finite number in every series),
// and the panels that show a quantity fmsim prints must show that quantity, within the stated
// tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../golden/run_cli.hpp"
#include "support/prometheus_loopback.hpp"

namespace fmsim::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kDashboardStart = 1767225600;  // 2026-01-01T00:00:00Z, --metrics-start default
constexpr double kMiB = 1024.0 * 1024.0;

struct Target {
  std::string dashboard;  // file stem, e.g. "fmsim-serving"
  std::string panel;      // panel title
  std::string legend;     // legendFormat
  std::string expr;       // PromQL with Grafana's variables
};

std::vector<Target> dashboard_targets() {
  std::vector<Target> out;
  for (const auto& entry : fs::directory_iterator(source_path("dashboards/grafana"))) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto dashboard = nlohmann::json::parse(in);
    const std::string stem = entry.path().stem().string();
    std::vector<nlohmann::json> panels(dashboard.at("panels").begin(), dashboard.at("panels").end());
    for (std::size_t i = 0; i < panels.size(); ++i) {  // rows hold panels of their own
      const auto p = panels[i];
      if (p.contains("panels")) panels.insert(panels.end(), p["panels"].begin(), p["panels"].end());
      for (const auto& t : p.value("targets", nlohmann::json::array())) {
        out.push_back({stem, p.value("title", ""), t.value("legendFormat", ""), t.at("expr").get<std::string>()});
      }
    }
  }
  return out;
}

// Grafana's variables: $job is the command's --job-name, $host every host, $__rate_interval
// what Grafana makes of the scrape interval (4 x the series' resolution at full zoom), or a window
// given by the check.
std::string instantiate(std::string expr, const std::string& job, const std::string& rate_interval) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"$__rate_interval", rate_interval}, {"$job", job}, {"$host", ".*"}};
  for (const auto& [name, value] : vars) {
    for (auto p = expr.find(name); p != std::string::npos; p = expr.find(name, p + value.size())) {
      expr.replace(p, name.size(), value);
    }
  }
  return expr;
}

double number(const nlohmann::json& sample) { return std::stod(sample.at("value").at(1).get<std::string>()); }

// The series' values by one label (Hostname, state, ...; "" when the result has one series).
std::map<std::string, double> by_label(const nlohmann::json& result, const std::string& label) {
  std::map<std::string, double> out;
  for (const auto& s : result) out[s.at("metric").value(label, "")] = number(s);
  return out;
}

// The finite upper bounds of vLLM's histogram buckets holding `v`: (lower, upper].
std::pair<double, double> bucket_of(const std::vector<double>& bounds, double v) {
  double lower = 0.0;
  for (const double b : bounds) {
    if (v <= b) return {lower, b};
    lower = b;
  }
  return {lower, INFINITY};
}

class DashboardsOnDefaultMetrics : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_prometheus()) return;
    tmp_ = new fs::path(fs::path(::testing::TempDir()) / "dashboards");
    fs::create_directories(*tmp_);
    const std::string out = (*tmp_ / "m").string();
    const auto json_of = [](const CliResult& r) {
      if (r.exit_code != 0) throw std::runtime_error(r.all());
      return nlohmann::json::parse(r.out);
    };
    // Two p5.48xlarge (8 H100 each) for 6 hours at the default 1-minute resolution; the default
    // per-GPU dcgm-exporter series.
    run_ = new nlohmann::json(json_of(run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp",
                                                 "2", "--gbs", "64", "--duration", "6h", "--replications", "0",
                                                 "--metrics-out", out, "--job-name", "llama8b", "--json"})));
    // 300 requests at 5/s, every output 256 tokens (so the token-weighted and the per-request
    // TPOT percentiles are the same), at the default 1-second resolution.
    serve_ = new nlohmann::json(json_of(
        run_fmsim({"serve", "--model",       "llama3.1-8b", "--cluster",  "p5.48xlarge", "--tp",  "1",
                   "--isl", "1024",          "--osl",       "256",        "--rate",      "5",     "--num-requests",
                   "300",   "--metrics-out", out,           "--job-name", "vllm8b",      "--json"})));
    cluster_ = new nlohmann::json(
        json_of(run_fmsim({"cluster", "--cluster", "p5en.48xlarge:16", "--synthetic", "100", "--arrival", "10m",
                           "--metrics-out", out, "--job-name", "slurm", "--json"})));
    const auto load = run_fmsim({"metrics", "load", out, "--prometheus-data", (*tmp_ / "data").string()});
    if (load.exit_code != 0) throw std::runtime_error(load.all());
    PrometheusLoopbackOptions options;
    options.data_dir = *tmp_ / "data";
    prom_ = new PrometheusLoopback(options);
  }
  static void TearDownTestSuite() {
    delete prom_;
    delete run_;
    delete serve_;
    delete cluster_;
    delete tmp_;
    prom_ = nullptr;
  }
  void SetUp() override {
    FMSIM_SKIP_WITHOUT_PROMETHEUS();
    if (prom_ == nullptr) GTEST_FAIL() << "the suite's set-up failed (see its message above)";
  }

  // A time of the training run with the job computing for the 15 minutes before it (no
  // checkpoint stall or failure in any panel's window), from 3 h on.
  static std::int64_t computing_time() {
    for (std::int64_t t = kDashboardStart + 3 * 3600; t <= kDashboardStart + 6 * 3600; t += 900) {
      const auto r = prom_->query("min_over_time(fmsim_job_state{job=\"llama8b\",state=\"compute\"}[15m])", t);
      if (!r.empty() && number(r.at(0)) == 1.0) return t;
    }
    throw std::runtime_error("the training run never computed for 15 minutes");
  }

  static nlohmann::json panel(const std::string& dashboard, const std::string& title, const std::string& legend,
                              const std::string& job, const std::string& rate_interval, std::int64_t at) {
    for (const auto& t : dashboard_targets()) {
      if (t.dashboard == dashboard && t.panel == title && t.legend == legend) {
        return prom_->query(instantiate(t.expr, job, rate_interval), at);
      }
    }
    throw std::runtime_error("no panel " + dashboard + " / " + title + " / " + legend);
  }

  static inline fs::path* tmp_ = nullptr;
  static inline nlohmann::json* run_ = nullptr;
  static inline nlohmann::json* serve_ = nullptr;
  static inline nlohmann::json* cluster_ = nullptr;
  static inline PrometheusLoopback* prom_ = nullptr;
};

TEST_F(DashboardsOnDefaultMetrics, EveryPanelReturnsData) {
  // Every target of the four dashboards, at a time inside its command's run: non-empty, and every
  // series a finite number.
  const std::int64_t train_at = computing_time();
  const double cluster_span = cluster_->at("policies").at(0).at("summary").at("span_s").get<double>();
  struct Source {
    std::string job;
    std::int64_t at;
    std::string rate_interval;  // 4 x the resolution
  };
  const std::map<std::string, Source> sources = {
      {"fmsim-training", {"llama8b", train_at, "4m"}},
      {"fmsim-gpu-fleet", {"llama8b", train_at, "4m"}},
      {"fmsim-serving", {"vllm8b", kDashboardStart + 30, "4s"}},
      {"fmsim-cluster", {"slurm", kDashboardStart + static_cast<std::int64_t>(cluster_span / 2), "4m"}},
  };
  const auto targets = dashboard_targets();
  ASSERT_GE(targets.size(), 50u);
  std::set<std::string> dashboards;
  for (const auto& t : targets) {
    const auto& s = sources.at(t.dashboard);
    dashboards.insert(t.dashboard);
    const std::string promql = instantiate(t.expr, s.job, s.rate_interval);
    EXPECT_EQ(promql.find('$'), std::string::npos) << promql;
    const auto result = prom_->query(promql, s.at);
    EXPECT_FALSE(result.empty()) << t.dashboard << " / " << t.panel << " / " << t.legend << ": " << promql;
    for (const auto& series : result) {
      EXPECT_TRUE(std::isfinite(number(series)))
          << t.dashboard << " / " << t.panel << " / " << t.legend << ": " << series.dump();
    }
  }
  EXPECT_EQ(dashboards.size(), 4u);
  // The dashboards' variables (label_values(SELECTOR, LABEL), evaluated as the PromQL
  // `group by (LABEL) (SELECTOR)`): $job offers the command's job, $host the run's two nodes.
  const std::regex label_values(R"(label_values\((.+), *(\w+)\))");
  for (const auto& entry : fs::directory_iterator(source_path("dashboards/grafana"))) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto dashboard = nlohmann::json::parse(in);
    const auto& s = sources.at(entry.path().stem().string());
    for (const auto& v : dashboard.at("templating").at("list")) {
      if (v.value("type", "") != "query") continue;
      const auto& q = v.at("query");
      const std::string text = q.is_string() ? q.get<std::string>() : q.value("query", "");
      std::smatch m;
      ASSERT_TRUE(std::regex_match(text, m, label_values)) << text;
      const std::string label = m[2].str();
      const auto values =
          by_label(prom_->query("group by (" + label + ") (" + instantiate(m[1].str(), s.job, "") + ")", s.at), label);
      if (label == "job") {
        EXPECT_EQ(values.count(s.job), 1u) << entry.path().filename() << ": " << text;
      }
      if (label == "Hostname") {
        EXPECT_EQ(values.size(), 2u) << entry.path().filename() << ": " << text;
      }
      EXPECT_FALSE(values.empty()) << entry.path().filename() << ": " << text;
    }
  }
}

TEST_F(DashboardsOnDefaultMetrics, TrainingPanelsShowWhatRunPrinted) {
  const std::int64_t at = computing_time();
  const auto& step = run_->at("step");
  const double gpus = run_->at("gpus").get<double>();
  // Throughput = tokens/s per GPU x GPUs while computing; rate() over 4 minutes of a counter whose
  // dropped samples lie within 0.5% of its mean increase a tick: within 1%.
  const double tokens_per_s = step.at("tokens_per_s_per_gpu").get<double>() * gpus;
  EXPECT_NEAR(number(panel("fmsim-training", "Throughput", "{{job}}", "llama8b", "4m", at).at(0)), tokens_per_s,
              0.01 * tokens_per_s);
  // MFU and the step time are gauges written as fmsim computed them: equal to the last bit but
  // for the text's shortest round trip (relative 1e-12).
  const double mfu = step.at("mfu").get<double>();
  EXPECT_NEAR(number(panel("fmsim-training", "MFU", "{{job}}", "llama8b", "4m", at).at(0)), mfu, 1e-12 * mfu);
  const double step_s = step.at("step_time_s").get<double>();
  EXPECT_NEAR(number(panel("fmsim-training", "Step time", "{{job}} step", "llama8b", "4m", at).at(0)), step_s,
              1e-12 * step_s);
  // Mean step time from the histogram over a window of compute only: the step time (relative 1e-9).
  EXPECT_NEAR(
      number(panel("fmsim-training", "Step time", "{{job}} mean incl. checkpoint stalls", "llama8b", "4m", at).at(0)),
      step_s, 1e-9 * step_s);
  // p99: every step of the window in the bucket (0.9, 1.1] x step time.
  const double p99 = number(panel("fmsim-training", "Step time", "{{job}} p99", "llama8b", "4m", at).at(0));
  EXPECT_GE(p99, 0.9 * step_s * (1 - 1e-12));
  EXPECT_LE(p99, 1.1 * step_s * (1 + 1e-12));
  // Tensor pipe active = MFU x the recompute factor (1 with selective recompute).
  EXPECT_NEAR(number(panel("fmsim-training", "Tensor pipe active", "{{job}}", "llama8b", "4m", at).at(0)), mfu,
              1e-12 * mfu);
  // Memory used per GPU = the memory model's bytes per GPU, in MiB as DCGM reports it.
  const double mib = step.at("memory_bytes").get<double>() / kMiB;
  EXPECT_NEAR(number(panel("fmsim-training", "Memory used", "{{job}}", "llama8b", "4m", at).at(0)), mib, 1e-9 * mib);
}

TEST_F(DashboardsOnDefaultMetrics, GpuFleetPanelsSumEachNodesEightGpus) {
  // The fleet panels sum (or average) dcgm-exporter's per-GPU series by host: a p5.48xlarge has 8
  // GPUs, so a node reads 8 x one GPU (issue 43: per-node series read one GPU's 646 W as a node's).
  const std::int64_t at = computing_time();
  const double mib = run_->at("step").at("memory_bytes").get<double>() / kMiB;
  EXPECT_EQ(number(prom_->query("count by (Hostname) (DCGM_FI_DEV_POWER_USAGE{job=\"llama8b\"})", at).at(0)), 8.0);
  const auto used =
      by_label(panel("fmsim-gpu-fleet", "Framebuffer used", "{{Hostname}}", "llama8b", "4m", at), "Hostname");
  ASSERT_EQ(used.size(), 2u);
  for (const auto& [host, v] : used) EXPECT_NEAR(v, 8.0 * mib, 1e-9 * 8.0 * mib) << host;
  // Power of a GPU = idle + (cap - idle) x SM active, idle 11.5% of the H100's 700 W TDP (the cap):
  // a node draws 8 times that.
  const auto sm = by_label(panel("fmsim-gpu-fleet", "SM active", "{{Hostname}}", "llama8b", "4m", at), "Hostname");
  const auto power = by_label(panel("fmsim-gpu-fleet", "Power draw", "{{Hostname}}", "llama8b", "4m", at), "Hostname");
  ASSERT_EQ(power.size(), 2u);
  for (const auto& [host, watts] : power) {
    const double idle = 0.115 * 700.0;
    const double expected = 8.0 * (idle + (700.0 - idle) * sm.at(host));
    EXPECT_NEAR(watts, expected, 1e-9 * expected) << host;
    EXPECT_GT(watts, 8.0 * idle);
  }
  // What `fmsim compare` prints as fmsim's prediction per GPU for the same job (--json "predicted"):
  // a node's panels read 8 times its power and NVLink traffic, and its SM activity (relative 1e-9).
  const auto compare =
      run_fmsim({"compare", "--prometheus", prom_->url(), "--job", "llama8b", "--model", "llama3.1-8b", "--cluster",
                 "p5.48xlarge:2", "--tp", "2", "--gbs", "64", "--at", std::to_string(at), "--window", "15m", "--json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.all();
  std::map<std::string, double> predicted;
  const auto compared = nlohmann::json::parse(compare.out);
  for (const auto& row : compared.at("rows")) {
    predicted[row.at("quantity").get<std::string>()] = row.at("predicted").get<double>();
  }
  for (const std::string q : {"power per GPU", "NVLink TX per GPU", "SM active"}) {
    ASSERT_EQ(predicted.count(q), 1u) << q << ": " << compare.out;
  }
  const auto nvlink =
      by_label(panel("fmsim-gpu-fleet", "NVLink TX / RX", "{{Hostname}} tx", "llama8b", "4m", at), "Hostname");
  ASSERT_EQ(nvlink.size(), 2u);
  for (const auto& [host, watts] : power) {
    const double gpu_watts = predicted.at("power per GPU");
    EXPECT_NEAR(watts, 8.0 * gpu_watts, 1e-9 * 8.0 * gpu_watts) << host;
    const double gpu_bytes = predicted.at("NVLink TX per GPU") * 1e9;  // printed in GB/s
    EXPECT_NEAR(nvlink.at(host), 8.0 * gpu_bytes, 1e-9 * 8.0 * gpu_bytes) << host;
    EXPECT_NEAR(sm.at(host), predicted.at("SM active"), 1e-9) << host;
  }
  // GPU utilization (%) = 100 x graphics engine active, averaged over the node's GPUs.
  const auto util =
      by_label(panel("fmsim-gpu-fleet", "GPU utilization", "{{Hostname}}", "llama8b", "4m", at), "Hostname");
  const auto engine =
      by_label(panel("fmsim-gpu-fleet", "Graphics engine active", "{{Hostname}}", "llama8b", "4m", at), "Hostname");
  for (const auto& [host, v] : util) EXPECT_NEAR(v, 100.0 * engine.at(host), 1e-9 * v) << host;
}

TEST_F(DashboardsOnDefaultMetrics, ServingPanelsShowWhatServePrinted) {
  // Over the whole run (the panels' rate window = the samples' span, evaluated at the last one).
  const auto& metrics = serve_->at("metrics");
  const std::int64_t end = metrics.at("last_timestamp_s").get<std::int64_t>();
  const std::int64_t span = end - metrics.at("first_timestamp_s").get<std::int64_t>();
  const std::string window = std::to_string(span) + "s";
  const auto& latency = serve_->at("latency_s");
  // A histogram panel resolves a percentile to its bucket: histogram_quantile interpolates inside
  // the vLLM bucket that holds the printed percentile, so the panel lies in that bucket.
  const std::vector<double> ttft_bounds = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
                                           1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
  const std::vector<double> tpot_bounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                           0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
  const std::vector<double> e2e_bounds = {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
                                          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  struct Check {
    std::string title;
    std::string printed;  // key of latency_s
    const std::vector<double>* bounds;
  };
  // TPOT: every request has 256 output tokens, so the per-token histogram's percentiles are the
  // per-request TPOT percentiles fmsim prints.
  for (const Check& c :
       {Check{"Time to first token", "ttft", &ttft_bounds}, Check{"Time per output token", "tpot", &tpot_bounds},
        Check{"End-to-end request latency", "e2e", &e2e_bounds}}) {
    for (const std::string q : {"p50", "p90", "p99"}) {
      const double printed = latency.at(c.printed).at(q).get<double>();
      const auto [lo, hi] = bucket_of(*c.bounds, printed);
      const auto result = panel("fmsim-serving", c.title, q, "vllm8b", window, end);
      ASSERT_EQ(result.size(), 1u) << c.title << " " << q;
      const double shown = number(result.at(0));
      EXPECT_GE(shown, lo) << c.title << " " << q << " printed " << printed;
      EXPECT_LE(shown, hi) << c.title << " " << q << " printed " << printed;
    }
  }
  // The histogram's mean (sum / count) is the mean inter-token latency fmsim prints (relative 1e-9):
  // each request's observations add up to its decode time.
  const double itl_mean = number(prom_
                                     ->query("sum(vllm:inter_token_latency_seconds_sum{job=\"vllm8b\"}) / "
                                             "sum(vllm:inter_token_latency_seconds_count{job=\"vllm8b\"})",
                                             end)
                                     .at(0));
  EXPECT_NEAR(itl_mean, latency.at("itl").at("mean").get<double>(), 1e-9 * itl_mean);
  // Token throughput over the run: the panel divides the tokens by the samples' span (the grid's
  // last tick, at or after the last token), fmsim by the run's duration: they differ by at most
  // one resolution (1 s) over the duration.
  const auto& throughput = serve_->at("throughput");
  const double duration = serve_->at("duration_s").get<double>();
  const double tolerance = 1.0 / duration;
  const double output = throughput.at("output_tokens_per_s_per_replica").get<double>();
  const double input = throughput.at("total_tokens_per_s_per_replica").get<double>() - output;
  EXPECT_NEAR(number(panel("fmsim-serving", "Token throughput", "generation", "vllm8b", window, end).at(0)), output,
              tolerance * output);
  EXPECT_NEAR(number(panel("fmsim-serving", "Token throughput", "prompt", "vllm8b", window, end).at(0)), input,
              tolerance * input);
}

TEST_F(DashboardsOnDefaultMetrics, ClusterPanelsAverageToWhatClusterPrinted) {
  // Each panel's expression averaged over the replay (a 1-minute subquery at the last sample)
  // against the summary fmsim prints: the samples are the twin's minute means, so the averages
  // agree but for the partial minutes at the two ends (2 x 60 s over the span).
  const auto& metrics = cluster_->at("metrics");
  const auto& summary = cluster_->at("policies").at(0).at("summary");
  const std::int64_t end = metrics.at("last_timestamp_s").get<std::int64_t>();
  const std::int64_t span = end - metrics.at("first_timestamp_s").get<std::int64_t>();
  const double tolerance = 2.0 * 60.0 / summary.at("span_s").get<double>();
  const auto average = [&](const std::string& title, const std::string& legend) {
    for (const auto& t : dashboard_targets()) {
      if (t.dashboard != "fmsim-cluster" || t.panel != title || t.legend != legend) continue;
      const std::string expr = instantiate(t.expr, "slurm", "4m");
      return number(prom_->query("avg_over_time((" + expr + ")[" + std::to_string(span) + "s:1m])", end).at(0));
    }
    throw std::runtime_error("no panel " + title + " / " + legend);
  };
  const double utilisation = summary.at("utilisation").get<double>();
  EXPECT_NEAR(average("Node utilisation", "allocated / all nodes"), utilisation, tolerance * utilisation);
  EXPECT_NEAR(average("Node utilisation", "fmsim twin"), utilisation, tolerance * utilisation);
  EXPECT_NEAR(average("GPU utilisation", "allocated / total GPUs"), utilisation, tolerance * utilisation);
  const double queue = summary.at("mean_queue_length").get<double>();
  EXPECT_NEAR(average("Jobs pending / running", "pending"), queue, tolerance * queue);
  const double fragmented = summary.at("mean_fragmented_nodes").get<double>();
  EXPECT_NEAR(average("Fragmentation: free nodes the top pending job cannot use", "fragmented nodes (fmsim twin)"),
              fragmented, tolerance * fragmented);
}

}  // namespace
}  // namespace fmsim::testing
