// `fmsim run --metrics-out`: the metrics file (promtool checks it in promtool_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "run_cli.hpp"

namespace {

using fmsim::testing::run_fmsim;
using ::testing::HasSubstr;

std::string make_temp_dir() {
  std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "fmsim-metrics-XXXXXX").string();
  const char* dir = mkdtemp(tmpl.data());
  if (dir == nullptr) throw std::runtime_error("mkdtemp failed");
  return dir;
}

struct TempDir {
  std::string path = make_temp_dir();
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TEST(MetricsCli, RunWritesTheExportersFamilies) {
  TempDir tmp;
  const auto r = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                            "--duration", "12h", "--replications", "0", "--metrics-out", tmp.path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Metrics: " + tmp.path + "/run.om"));
  std::ifstream in(tmp.path + "/run.om");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (const char* family :
       {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_DEV_POWER_USAGE", "node_amazonefa_tx_bytes",
        "node_network_receive_bytes_total", "fmsim_step_time_seconds", "fmsim_tokens_total",
        "fmsim_checkpoint_saves_total", "fmsim_failures_total", "fmsim_restarts_total", "fmsim_ettr_ratio"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + family + " ")) << family;
  }
  EXPECT_TRUE(text.ends_with("# EOF\n"));
  // promtool checks the file in promtool_test.cpp (PromtoolCheck.AcceptsTheFile/run_series).
}

TEST(MetricsCli, BadMetricsFlagsNameTheFlag) {
  TempDir tmp;
  const auto r =
      run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                 "--duration", "1h", "--replications", "0", "--metrics-out", tmp.path, "--metrics-resolution", "0.5s"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--metrics-resolution"));
  const auto s =
      run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs", "64",
                 "--duration", "1h", "--replications", "0", "--metrics-out", tmp.path, "--metrics-start", "yesterday"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_THAT(s.err, HasSubstr("--metrics-start"));
  // Per GPU is the default; per node is asked for, and both at once is a contradiction.
  const auto both = run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs",
                               "64", "--duration", "1h", "--replications", "0", "--metrics-out", tmp.path,
                               "--metrics-per-gpu", "--metrics-per-node"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("--metrics-per-node: excludes --metrics-per-gpu"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path + "/run.om"));
}

// The dcgm-exporter series are per GPU by default (gpu, UUID, device labels: 2 nodes x 8 GPUs
// = 16 series of a family); --metrics-per-node writes one per node, without them.
TEST(MetricsCli, DcgmSeriesArePerGpuByDefaultAndPerNodeOnRequest) {
  TempDir tmp;
  const auto count = [](const std::string& file, const std::string& prefix) {
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.starts_with(prefix) ? 1 : 0;
    return n;
  };
  for (const bool per_node : {false, true}) {
    const std::string dir = tmp.path + (per_node ? "/node" : "/gpu");
    // One hour of two p5.48xlarge, only the changes written.
    std::vector<std::string> args = {"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--gbs", "64"};
    args.insert(args.end(), {"--duration", "1h", "--replications", "0", "--metrics-heartbeat", "0"});
    args.insert(args.end(), {"--metrics-out", dir});
    if (per_node) args.push_back("--metrics-per-node");
    ASSERT_EQ(run_fmsim(args).exit_code, 0);
    // With changes only, a gauge constant over the hour has two samples (first and last tick).
    const std::size_t series = count(dir + "/run.om", "DCGM_FI_DEV_POWER_USAGE{") / 2;
    EXPECT_EQ(series, per_node ? 2u : 16u);
    EXPECT_EQ(count(dir + "/run.om", "DCGM_FI_DEV_POWER_USAGE{gpu=\"7\",UUID=\"GPU-"), per_node ? 0u : 4u);
  }
}

}  // namespace

namespace {

TEST(MetricsCli, ReportDrawsTheRunsPanels) {
  TempDir tmp;
  const auto r =
      fmsim::testing::run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "2", "--gbs",
                                 "64", "--duration", "12h", "--replications", "0", "--metrics-out", tmp.path + "/m"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = fmsim::testing::run_fmsim(
      {"metrics", "report", tmp.path + "/m", "--html", tmp.path + "/run.html", "--svg", tmp.path + "/throughput.svg"});
  ASSERT_EQ(rep.exit_code, 0) << rep.all();
  std::ifstream html_in(tmp.path + "/run.html");
  std::stringstream html;
  html << html_in.rdbuf();
  for (const char* chart : {"throughput", "mfu-ettr", "step-time", "activity", "power", "memory"}) {
    EXPECT_THAT(html.str(), HasSubstr(std::string("data-chart=\"") + chart + "\"")) << chart;
  }
  std::ifstream svg_in(tmp.path + "/throughput.svg");
  std::stringstream svg;
  svg << svg_in.rdbuf();
  EXPECT_TRUE(svg.str().starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  const auto none = fmsim::testing::run_fmsim({"metrics", "report", tmp.path + "/m"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("--html"));
  const auto missing = fmsim::testing::run_fmsim({"metrics", "serve", tmp.path + "/nothing"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("is not a directory"));
}

}  // namespace

namespace {

// Every sample of the series whose line starts with `series` ("name{labels"), in file order.
std::vector<std::pair<double, std::int64_t>> samples_of(const std::string& file, const std::string& series) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::pair<double, std::int64_t>> out;
  while (std::getline(in, line)) {
    if (!line.starts_with(series)) continue;
    std::istringstream fields(line.substr(line.find("} ") + 2));
    double v = 0.0;
    std::int64_t t = 0;
    fields >> v >> t;
    out.emplace_back(v, t);
  }
  return out;
}

TEST(MetricsCli, LocalNvmeCheckpointsShowInNodeExportersDiskFamilies) {
  // Checkpoints on the instance store (--storage instance-nvme), one an hour for 12 hours: each node
  // writes its share (checkpoint size / nodes) per save, busy for share / write rate, and holds at
  // most keep + 1 of them. node_exporter's names; device md0 (the RAID 0 the Deep Learning AMI builds).
  TempDir tmp;
  const auto r = run_fmsim(
      {"run",           "--model",    "llama3.1-8b", "--cluster",     "p5.48xlarge:2",  "--tp",       "2",
       "--gbs",         "64",         "--duration",  "12h",           "--replications", "0",          "--storage",
       "instance-nvme", "--interval", "1h",          "--metrics-out", tmp.path,         "--job-name", "nvme",
       "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double share = j["checkpoint"]["io"]["size_bytes"].get<double>() / 2.0;
  const std::string file = tmp.path + "/run.om";
  const std::string host = "{device=\"md0\",Hostname=\"node-0002\",job=\"nvme\",instance=\"node-0002:9100\"}";
  const auto written = samples_of(file, "node_disk_written_bytes_total" + host);
  const auto saves = samples_of(file, "fmsim_checkpoint_saves_total{job=\"nvme\"");
  ASSERT_FALSE(written.empty());
  ASSERT_FALSE(saves.empty());
  // At the end: the saves started, less at most the one still persisting, times the share.
  const double n = saves.back().first;
  EXPECT_GE(n, 10.0);
  EXPECT_LE(written.back().first, n * share + 1.0);
  EXPECT_GE(written.back().first, (n - 1.0) * share - 1.0);
  for (std::size_t i = 1; i < written.size(); ++i) EXPECT_GE(written[i].first, written[i - 1].first);
  // No failure in 12 hours here, so nothing is restored: nothing read.
  EXPECT_EQ(samples_of(file, "node_disk_read_bytes_total" + host).back().first, 0.0);
  // Busy for the bytes at the catalog's 10.8 GB/s write rate of a node's devices.
  const auto busy = samples_of(file, "node_disk_io_time_seconds_total" + host);
  EXPECT_NEAR(busy.back().first, written.back().first / 10.8e9, 1e-6 * busy.back().first);
  // The filesystem: the catalog's 8 x 3800 GB (data/hardware/systems.yaml, p5.48xlarge) less the
  // checkpoints held, never more than keep + 1 = 3 of them.
  const auto avail = samples_of(file,
                                "node_filesystem_avail_bytes{device=\"/dev/md0\",fstype=\"ext4\","
                                "mountpoint=\"/opt/dlami/nvme\",Hostname=\"node-0002\"");
  ASSERT_FALSE(avail.empty());
  const double capacity = avail.front().first;
  EXPECT_NEAR(capacity, 8 * 3.8e12, 1e9);
  for (const auto& [v, t] : avail) {
    EXPECT_LE(v, capacity);
    EXPECT_GE(v, capacity - 3.0 * share - 1.0);
  }
}

TEST(MetricsCli, ClusterWritesTheSlurmExportersSeries) {
  // `fmsim cluster --metrics-out`: prometheus-slurm-exporter's names over the replay. Each sample is
  // the twin's mean over the minute before it: allocated + idle + down nodes = the cluster's nodes,
  // GPUs = nodes x 8 (p5.48xlarge).
  TempDir tmp;
  const auto r =
      run_fmsim({"cluster", "--cluster", "p5.48xlarge:16", "--synthetic", "60", "--days", "1", "--node-failure-rate",
                 "50", "--metrics-out", tmp.path, "--job-name", "slurm-twin", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metrics"]["job"], "slurm-twin");
  const std::string file = tmp.path + "/cluster.om";
  const std::string labels = "{job=\"slurm-twin\",instance=\"slurmctld:8080\"}";
  const auto alloc = samples_of(file, "slurm_nodes_alloc" + labels);
  const auto idle = samples_of(file, "slurm_nodes_idle" + labels);
  const auto down = samples_of(file, "slurm_nodes_down" + labels);
  ASSERT_FALSE(alloc.empty());
  // Gauges are written where they change: read each at the timestamps of the allocation samples.
  const auto value_at = [](const std::vector<std::pair<double, std::int64_t>>& s, std::int64_t t) {
    double v = std::nan("");
    for (const auto& [x, at] : s) {
      if (at > t) break;
      v = x;
    }
    return v;
  };
  double peak = 0.0;
  for (const auto& [a, t] : alloc) {
    EXPECT_NEAR(a + value_at(idle, t) + value_at(down, t), 16.0, 1e-9) << t;
    peak = std::max(peak, a);
  }
  EXPECT_GT(peak, 0.0);
  EXPECT_EQ(samples_of(file, "slurm_gpus_total" + labels).front().first, 128.0);
  for (const char* family :
       {"slurm_queue_pending", "slurm_queue_running", "slurm_gpus_alloc", "slurm_gpus_idle", "slurm_gpus_utilization",
        "fmsim_cluster_utilisation_ratio", "fmsim_cluster_fragmented_nodes", "fmsim_cluster_fragmentation_ratio"}) {
    EXPECT_FALSE(samples_of(file, family + labels).empty()) << family;
  }
  // The replay's summary utilisation (allocated node-seconds / (nodes x span)) is the mean of the
  // per-minute series over the span (the thinned gauge read back at every minute).
  const auto util = samples_of(file, "fmsim_cluster_utilisation_ratio" + labels);
  double sum = 0.0;
  int minutes = 0;
  for (std::int64_t t = util.front().second; t <= util.back().second; t += 60, ++minutes) sum += value_at(util, t);
  EXPECT_NEAR(sum / minutes, j["policies"][0]["summary"]["utilisation"].get<double>(), 0.01);
}

}  // namespace

namespace {

// "name{a=\"x\",b=\"y\"}" or promtool's "{__name__=\"name\", a=\"x\"}" -> sorted "a=x,b=y,name".
std::string series_key(std::string text) {
  std::string name;
  if (!text.starts_with("{")) {
    name = text.substr(0, text.find('{'));
    text = text.substr(text.find('{'));
  }
  std::vector<std::string> parts;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' && text[i - 1] != '\\') quoted = !quoted;
    if (!quoted && c == ',') {
      parts.push_back(cur);
      cur.clear();
      continue;
    }
    if (!quoted && c == ' ') continue;
    cur.push_back(c);
  }
  if (!cur.empty()) parts.push_back(cur);
  for (auto& p : parts) {
    if (p.starts_with("__name__=")) {
      name = p.substr(10, p.size() - 11);
      p.clear();
    }
  }
  std::erase(parts, std::string());
  std::sort(parts.begin(), parts.end());
  std::string key = name;
  for (const auto& p : parts) key += "|" + p;
  return key;
}

// A sample line of either: series key, value, timestamp (as written).
std::tuple<std::string, double, std::int64_t> parse_sample(const std::string& line) {
  const auto close = line.rfind('}');
  std::istringstream fields(line.substr(close + 1));
  double v = 0.0;
  std::int64_t t = 0;
  fields >> v >> t;
  return {series_key(line.substr(0, close + 1)), v, t};
}

// The metrics commands read OpenMetrics text; given a TSDB block directory they say what it is and
// how to open it (exit 2), instead of "no metrics files".
TEST(MetricsCli, ReportOnATsdbBlockSaysHowToOpenIt) {
  TempDir tmp;
  ASSERT_EQ(run_fmsim({"run", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:1", "--gbs", "64", "--duration", "1h",
                       "--replications", "0", "--metrics-out", tmp.path + "/tsdb", "--metrics-format", "tsdb"})
                .exit_code,
            0);
  const auto r = run_fmsim({"metrics", "report", tmp.path + "/tsdb", "--html", tmp.path + "/r.html"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("Prometheus TSDB block"));
  EXPECT_THAT(r.err, HasSubstr("--storage.tsdb.path"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path + "/r.html"));
}

TEST(MetricsCli, TsdbBlockHoldsEverySampleOfTheText) {
  // The same run (two nodes, 6 hours, failures every 2 hours on average) written as OpenMetrics
  // text and as a TSDB block: promtool tsdb dump of the block has a sample of every series at
  // every minute, and each sample the text holds (changes and heartbeats) has the same value.
  TempDir tmp;
  const std::vector<std::string> args = {"run",
                                         "--model",
                                         "llama3.1-8b",
                                         "--cluster",
                                         "p5.48xlarge:2",
                                         "--tp",
                                         "2",
                                         "--gbs",
                                         "64",
                                         "--duration",
                                         "6h",
                                         "--replications",
                                         "0",
                                         "--mtbf",
                                         "2h",
                                         "--storage",
                                         "instance-nvme",
                                         "--interval",
                                         "30m"};
  auto text_args = args;
  text_args.insert(text_args.end(), {"--metrics-out", tmp.path + "/om"});
  ASSERT_EQ(run_fmsim(text_args).exit_code, 0);
  auto block_args = args;
  block_args.insert(block_args.end(), {"--metrics-out", tmp.path + "/tsdb", "--metrics-format", "tsdb"});
  const auto b = run_fmsim(block_args);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_THAT(b.out, HasSubstr("Prometheus TSDB block"));
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) GTEST_SKIP() << "promtool not installed";
  std::filesystem::create_directories(tmp.path + "/tsdb/wal");  // promtool opens the directory as a database
  const std::string dump = tmp.path + "/dump.txt";
  ASSERT_EQ(std::system(("promtool tsdb dump " + tmp.path + "/tsdb > " + dump + " 2>/dev/null").c_str()), 0);
  std::map<std::pair<std::string, std::int64_t>, double> block;
  std::set<std::string> block_series;
  {
    std::ifstream in(dump);
    std::string line;
    while (std::getline(in, line)) {
      const auto [key, v, ms] = parse_sample(line);
      block[{key, ms / 1000}] = v;
      block_series.insert(key);
    }
  }
  std::set<std::string> text_series;
  std::size_t compared = 0;
  std::ifstream in(tmp.path + "/om/run.om");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    const auto [key, v, s] = parse_sample(line);
    text_series.insert(key);
    const auto it = block.find({key, s});
    ASSERT_NE(it, block.end()) << line;
    EXPECT_EQ(it->second, v) << line;
    ++compared;
  }
  EXPECT_EQ(text_series, block_series);
  EXPECT_EQ(block.size(), block_series.size() * 361);  // every minute of 6 hours
  EXPECT_GT(compared, 1000u);
}

}  // namespace

namespace {

// `metrics load` writes the blocks itself from what it reads: a file it cannot turn into valid
// series is refused (exit 2, naming the file and the series) and leaves no block; a good file
// becomes one block, with progress on stderr; loading it again keeps the block already there.
TEST(MetricsCli, LoadRefusesWhatPrometheusCannotHoldAndReportsProgress) {
  TempDir tmp;
  const std::string dir = tmp.path + "/m";
  const std::string data = tmp.path + "/data";
  std::filesystem::create_directories(dir);
  const auto load_text = [&](const std::string& text) {
    std::ofstream(dir + "/a.om") << "# TYPE x gauge\n" << text << "# EOF\n";
    return run_fmsim({"metrics", "load", dir, "--prometheus-data", data});
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"x{a=\"1\",a=\"2\"} 1 100\n", "series \"x{a=\"1\",a=\"2\"}\" names label \"a\" twice"},
      {"x{a=\"1\",b=\"2\"} 1 100\nx{b=\"2\",a=\"1\"} 2 160\n",
       "series \"x{b=\"2\",a=\"1\"}\" appears twice (in another family or with its labels in another order)"},
      {"x{1a=\"1\"} 1 100\n", "\"1a\" is not a valid label name"},
      {"x 1 1e300\n", "timestamp 1e300 is out of range"},
  };
  for (const auto& [text, message] : bad) {
    const auto r = load_text(text);
    EXPECT_EQ(r.exit_code, 2) << text << r.all();
    EXPECT_THAT(r.err, HasSubstr("a.om"));
    EXPECT_THAT(r.err, HasSubstr(message));
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(data)) ++entries;
    EXPECT_EQ(entries, 0u) << "a refused file left something in the data directory";
  }
  // An empty label is dropped, as Prometheus drops it; escapes are undone.
  const auto good = load_text("x{a=\"\",b=\"q\\\"z\"} 1 100\nx{a=\"\",b=\"q\\\"z\"} 2 160\n");
  ASSERT_EQ(good.exit_code, 0) << good.all();
  EXPECT_THAT(good.err, HasSubstr("metrics load: a.om: 0.0 MiB, 1 series, 2 samples into block "));
  EXPECT_THAT(good.out, HasSubstr("Loaded 1 file into " + data + ": 1 block, 1970-01-01T00:01:40Z"));
  const auto again = run_fmsim({"metrics", "load", dir, "--prometheus-data", data, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.all();
  const auto blocks = nlohmann::json::parse(again.out).at("blocks");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(data + "/" + blocks.at(0).get<std::string>() + "/meta.json"));
  std::size_t in_data = 0;
  for (const auto& e : std::filesystem::directory_iterator(data)) in_data += e.is_directory() ? 1 : 0;
  EXPECT_EQ(in_data, 1u);  // the same block, not a second copy
}

}  // namespace
