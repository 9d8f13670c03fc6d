#include "config/job_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/error.hpp"

namespace fmsim::config {

namespace {

/// What one trace may hold, checked row by row before it is simulated.
constexpr double kMaxTraceDuration = 10 * 365.25 * 86400;  ///< s: durations, limits, the submit span
constexpr double kMaxTraceNodes = 1'000'000;
constexpr double kMaxTraceNumber = 1e12;  ///< any other number (Unix times are 1.7e9)

/// Accepted column names per field, in order of preference.
const std::vector<std::pair<std::string, std::vector<std::string>>>& aliases() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> table{
      {"id", {"id", "job_id", "jobid", "job_name"}},
      {"submit", {"submit", "submit_time", "submitted_time", "start_time"}},
      {"nodes", {"nodes", "node_num", "num_nodes"}},
      {"gpus", {"gpus", "gpu_num", "num_gpus", "gpu_count"}},
      {"duration", {"duration", "run_time", "runtime", "elapsed"}},
      {"start", {"start_time"}},
      {"end", {"end_time"}},
      {"time_limit", {"time_limit", "timelimit"}},
      {"partition", {"partition"}},
      {"account", {"account", "vc", "group", "queue_name"}},
      {"user", {"user", "user_name"}},
      {"nice", {"nice"}},
      {"qos", {"qos"}},
      {"kind", {"kind", "type"}},
      {"state", {"state", "status"}},
      {"segment", {"segment"}},
      {"checkpoint_interval", {"checkpoint_interval"}},
      {"reservation", {"reservation", "resv"}},
      {"model", {"model"}},
      {"tp", {"tp"}},
      {"pp", {"pp"}},
      {"cp", {"cp"}},
      {"ep", {"ep"}},
      {"gbs", {"gbs", "global_batch"}},
      {"seq", {"seq", "seq_len"}},
      {"tokens", {"tokens"}},
  };
  return table;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"')
        quoted = false;
      else
        cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& s : out) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t a = 0;
    while (a < s.size() && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    s = s.substr(a);
  }
  return out;
}

/// Seconds: a number, or "YYYY-MM-DD HH:MM:SS" / "YYYY-MM-DDTHH:MM:SS" as UTC, years 1900 to 9999
/// (a year of -2147483648 overflowed `y - 1900`: found by fuzz_traces under UBSan).
std::optional<double> parse_time(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {}
  std::tm tm{};
  int y, mo, d, h = 0, mi = 0, se = 0;
  char sep = ' ';
  if (std::sscanf(s.c_str(), "%d-%d-%d%c%d:%d:%d", &y, &mo, &d, &sep, &h, &mi, &se) >= 3) {
    if (y < 1900 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 24 || mi < 0 || mi > 59 ||
        se < 0 || se > 60)
      return std::nullopt;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    return static_cast<double>(timegm(&tm));
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& trace_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> f;
    for (const auto& [field, names] : aliases()) f.push_back(field);
    return f;
  }();
  return fields;
}

std::vector<orchestration::JobSpec> parse_trace_csv(const std::string& text, const std::string& path,
                                                    const TraceOptions& options) {
  for (const auto& [field, column] : options.column_for)
    if (std::find(trace_fields().begin(), trace_fields().end(), field) == trace_fields().end())
      throw core::InputError::flag("--trace-map", fmt::format("'{}' is not a trace field; use one of {}", field,
                                                              fmt::join(trace_fields(), ", ")));
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    header = split_csv_line(line);
    break;
  }
  if (header.empty()) throw core::InputError(path, line_no, "header", "the trace is empty; it needs a header line");
  std::map<std::string, int> col;
  for (const auto& [field, names] : aliases()) {
    std::vector<std::string> wanted = names;
    if (const auto it = options.column_for.find(field); it != options.column_for.end()) wanted = {it->second};
    for (const auto& name : wanted) {
      const auto h = std::find(header.begin(), header.end(), name);
      if (h != header.end()) {
        col[field] = static_cast<int>(h - header.begin());
        break;
      }
    }
    if (options.column_for.count(field) && !col.count(field))
      throw core::InputError(path, line_no, options.column_for.at(field),
                             fmt::format("--trace-map {}: no such column", field));
  }
  if (!col.count("submit"))
    throw core::InputError(path, line_no, "submit", "no submit-time column (submit, submit_time, ...)");
  if (!col.count("nodes") && !col.count("gpus"))
    throw core::InputError(path, line_no, "nodes", "no node or GPU count column (nodes, node_num, gpus, gpu_num, ...)");
  if (!col.count("duration") && !(col.count("start") && col.count("end")) && !col.count("model"))
    throw core::InputError(path, line_no, "duration",
                           "no run time: a duration column, start_time and end_time, or training jobs (model, tokens)");
  // Submit may have fallen back to start_time: then `start` is the same column, fine.
  std::vector<orchestration::JobSpec> jobs;
  double first_submit = std::numeric_limits<double>::infinity();
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto cells = split_csv_line(line);
    auto cell = [&](const std::string& field) -> std::string {
      const auto it = col.find(field);
      if (it == col.end() || it->second >= static_cast<int>(cells.size())) return "";
      return cells[static_cast<std::size_t>(it->second)];
    };
    auto number = [&](const std::string& field, double lo, double hi = kMaxTraceNumber,
                      std::string_view unit = "") -> std::optional<double> {
      const std::string s = cell(field);
      if (s.empty()) return std::nullopt;
      const auto v = parse_time(s);
      if (!v || *v < lo || *v > hi)
        throw core::InputError(path, line_no, header[static_cast<std::size_t>(col.at(field))],
                               fmt::format("'{}' is out of range; allowed: {:g} to {:g}{}", s, lo, hi, unit));
      return v;
    };
    // Durations: the simulation's clock counts integer nanoseconds and its series sample every
    // simulated minute, so a row lasting 1e12 s would allocate without end.
    auto duration = [&](const std::string& field, double lo) {
      return number(field, lo, kMaxTraceDuration, " s (10 years)");
    };
    if (jobs.size() >= static_cast<std::size_t>(orchestration::kMaxTraceJobs))
      throw core::InputError(path, line_no, "rows",
                             fmt::format("more than {} jobs; at most {} are simulated", orchestration::kMaxTraceJobs,
                                         orchestration::kMaxTraceJobs));
    orchestration::JobSpec j;
    const std::string id = cell("id");
    j.id = static_cast<int>(jobs.size()) + 1;
    if (!id.empty()) {
      try {
        std::size_t used = 0;
        const long v = std::stol(id, &used);
        if (used == id.size() && v > 0 && v < 2000000000) j.id = static_cast<int>(v);
      } catch (const std::exception&) {}
    }
    j.name = id.empty() ? fmt::format("job{}", j.id) : id;
    const std::string submit_text = cell("submit");
    const auto submit = parse_time(submit_text);
    if (!submit)
      throw core::InputError(path, line_no, header[static_cast<std::size_t>(col.at("submit"))],
                             fmt::format("'{}' is not a time (seconds or YYYY-MM-DD HH:MM:SS)", submit_text));
    j.submit_s = *submit;
    first_submit = std::min(first_submit, j.submit_s);
    const auto nodes = number("nodes", 0, kMaxTraceNodes);
    const auto gpus = number("gpus", 0, kMaxTraceNodes * options.gpus_per_node);
    if (nodes && *nodes >= 1)
      j.request.nodes = static_cast<int>(std::ceil(*nodes));
    else if (gpus)
      j.request.nodes = std::max(1, static_cast<int>(std::ceil(*gpus / options.gpus_per_node)));
    else
      throw core::InputError(path, line_no, "nodes", "no node or GPU count in this row");
    if (options.max_nodes > 0 && j.request.nodes > options.max_nodes)
      throw core::InputError(
          path, line_no, "nodes",
          fmt::format("job {} needs {} nodes; the cluster has {}", j.name, j.request.nodes, options.max_nodes));
    j.training.model = cell("model");
    if (!j.training.model.empty()) {
      auto whole = [&](const char* field, long long lo) -> std::optional<long long> {
        const auto v = number(field, static_cast<double>(lo), 2e9);
        if (!v) return std::nullopt;
        if (*v != std::floor(*v))
          throw core::InputError(path, line_no, field, fmt::format("'{}' is not a whole number", cell(field)));
        return static_cast<long long>(*v);
      };
      j.training.tp = static_cast<int>(whole("tp", 1).value_or(1));
      j.training.pp = static_cast<int>(whole("pp", 1).value_or(1));
      j.training.cp = static_cast<int>(whole("cp", 1).value_or(1));
      j.training.ep = static_cast<int>(whole("ep", 1).value_or(1));
      j.training.gbs = whole("gbs", 1).value_or(0);
      j.training.seq = whole("seq", 1).value_or(4096);
      const auto tokens = number("tokens", 1, 1e18);
      if (!tokens)
        throw core::InputError(path, line_no, "tokens", "a training job (model column) needs the tokens it trains");
      j.training.tokens = *tokens;
    }
    if (const auto d = duration("duration", 0)) {
      j.run_s = *d;
    } else if (!j.training.model.empty()) {
      j.run_s = 0;  // from its step time (fmsim cluster computes it)
    } else {
      const auto s = number("start", 0), e = number("end", 0);
      if (!s || !e || *e < *s)
        throw core::InputError(path, line_no, "duration", "no duration and no valid start/end times");
      if (*e - *s > kMaxTraceDuration)
        throw core::InputError(
            path, line_no, "duration",
            fmt::format("end - start is {:g} s; allowed: at most {:g} s (10 years)", *e - *s, kMaxTraceDuration));
      j.run_s = *e - *s;
    }
    if (j.training.model.empty() || j.run_s > 0) j.run_s = std::max(1.0, j.run_s);
    if (const auto l = duration("time_limit", 1)) {
      j.time_limit_s = *l;
    } else if (!j.training.model.empty() && j.run_s == 0) {
      j.time_limit_s = 0;  // run time x --limit-factor, once the run time is known
    } else {
      j.time_limit_s = std::ceil(j.run_s * options.limit_factor / 60.0) * 60.0;
      if (options.max_limit_s > 0) j.time_limit_s = std::min(j.time_limit_s, options.max_limit_s);
    }
    j.partition = cell("partition");
    j.account = cell("account");
    j.user = cell("user");
    if (j.account.empty()) j.account = j.user;
    if (const auto n = cell("nice"); !n.empty()) {
      try {
        j.nice = std::stoi(n);
      } catch (const std::exception&) {
        throw core::InputError(path, line_no, "nice", fmt::format("'{}' is not an integer", n));
      }
    }
    j.qos = cell("qos");
    j.kind = cell("kind");
    if (const auto s = number("segment", 0, kMaxTraceNodes)) j.request.segment = static_cast<int>(*s);
    if (const auto c = duration("checkpoint_interval", 0)) j.checkpoint_interval_s = *c;
    j.reservation = cell("reservation");
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) throw core::InputError(path, line_no, "rows", "the trace has a header but no jobs");
  for (auto& j : jobs) {
    j.submit_s -= first_submit;
    if (j.submit_s > kMaxTraceDuration)
      throw core::InputError(
          path, 0, "submit",
          fmt::format("job {} is submitted {:g} s after the first; allowed: at most {:g} s (10 years)", j.name,
                      j.submit_s, kMaxTraceDuration));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const orchestration::JobSpec& a, const orchestration::JobSpec& b) {
    return a.submit_s < b.submit_s;
  });
  return jobs;
}

std::string write_trace_csv(const std::vector<orchestration::JobSpec>& jobs) {
  std::string out =
      "id,submit,nodes,duration,time_limit,partition,account,user,nice,qos,kind,segment,checkpoint_interval,"
      "reservation\n";
  for (const auto& j : jobs)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", j.id, j.submit_s, j.request.nodes, j.run_s,
                       j.time_limit_s, j.partition, j.account, j.user, j.nice, j.qos, j.kind, j.request.segment,
                       j.checkpoint_interval_s, j.reservation);
  return out;
}

}  // namespace fmsim::config
