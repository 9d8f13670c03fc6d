// Parsing data/reliability/*.yaml and the reliability flags into specs.
#include "config/reliability_loader.hpp"

#include <fmt/format.h>

#include "config/cluster_loader.hpp"
#include "config/model_loader.hpp"
#include "config/words.hpp"
#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "reliability/checkpoint_interval.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::config {
namespace {

constexpr const char* kFailuresFile = "reliability/failures.yaml";
constexpr const char* kCheckpointingFile = "reliability/checkpointing.yaml";

// The analytic model compounds e^(lambda t) over a checkpoint period and a recovery: a time of
// many mean times between interruptions means no checkpoint ever completes between failures
// (ETTR below e^-50), and past about 700 MTBFs the arithmetic overflows into nan. Such a time is
// refused, naming its flag and the limit.
constexpr double kMaxMtbfMultiple = 50.0;

void check_against_mtbf(core::Seconds t, const char* flag, core::Seconds mtbf) {
  if (t.value() <= kMaxMtbfMultiple * mtbf.value()) return;
  throw core::InputError::flag(
      flag, fmt::format("{} is {:.3g} times the job's mean time between interruptions ({}); allowed: at most {:g} x MTBF "
                        "= {} (longer, no checkpoint would complete between failures)",
                        core::format_duration(t), t.value() / mtbf.value(), core::format_duration(mtbf), kMaxMtbfMultiple,
                        core::format_duration(core::Seconds(kMaxMtbfMultiple * mtbf.value()))));
}

core::Seconds duration_or(const std::string& text, const char* flag, core::Seconds fallback) {
  return text.empty() ? fallback : parse_duration_flag(text, flag);
}

std::string embedded_text(const char* path) {
  const auto text = core::embedded_file(path);
  FMSIM_CHECK(text.has_value(), std::string("missing embedded data file ") + path);
  return std::string(*text);
}

reliability::ComponentClass parse_class(const YamlNode& node) { return node.as_word(reliability::kComponentClassWords); }

reliability::FailureModel parse_model(const YamlNode& node, bool shipped) {
  node.check_keys({"name", "source", "observation", "causes"});
  reliability::FailureModel m;
  m.name = node["name"].as_string();
  if (const auto source = node.find("source")) m.source = source->as_string();
  if (shipped && m.source.empty()) node.fail("missing 'source'");
  const YamlNode obs = node["observation"];
  obs.check_keys({"nodes", "duration"});
  m.observed_nodes = read_sourced(obs["nodes"], shipped).value.as_number(Bound::Positive);
  m.observed_duration = read_sourced(obs["duration"], shipped).value.as_duration();
  for (const YamlNode& item : node["causes"].items()) {
    item.check_keys({"name", "label", "class", "count", "replace", "planned", "source"});
    reliability::FailureCause c;
    c.name = item["name"].as_string();
    c.component = parse_class(item["class"]);
    c.count = item["count"].as_number(Bound::NonNegative);
    if (const auto replace = item.find("replace")) c.replace_node = replace->as_bool();
    if (const auto planned = item.find("planned")) c.planned = planned->as_bool();
    if (shipped && !item.has("source")) item.fail("missing 'source'");
    m.causes.push_back(c);
  }
  if (m.count(false) <= 0.0) node["causes"].fail("needs at least one unplanned cause with a positive count");
  return m;
}

void apply(FailureData& data, const YamlDocument& doc, bool shipped) {
  const YamlNode root = doc.node();
  root.check_keys({"kind", "models", "rates", "recovery"});
  if (root["kind"].as_string() != "FailureModels") root["kind"].fail("expected 'FailureModels'");
  if (const auto models = root.find("models")) {
    for (const YamlNode& item : models->items()) {
      reliability::FailureModel m = parse_model(item, shipped);
      bool replaced = false;
      for (auto& existing : data.models) {
        if (core::to_lower(existing.name) == core::to_lower(m.name)) {
          existing = m;
          replaced = true;
        }
      }
      if (!replaced) data.models.push_back(std::move(m));
    }
  }
  if (const auto rates = root.find("rates")) {
    for (const YamlNode& item : rates->items()) {
      item.check_keys({"name", "value", "unit", "source"});
      NamedRate r;
      r.name = item["name"].as_string();
      const double value = item["value"].as_number(Bound::Positive);
      const std::string unit = item["unit"].as_enum({"per 1000 node-days", "per node-hour"});
      r.per_node_hour = unit == "per node-hour" ? value : reliability::per_node_hour_from_per_1000_node_days(value);
      if (const auto source = item.find("source")) r.source = source->as_string();
      if (shipped && r.source.empty()) item.fail("missing 'source'");
      bool replaced = false;
      for (auto& existing : data.rates) {
        if (core::to_lower(existing.name) == core::to_lower(r.name)) {
          existing = r;
          replaced = true;
        }
      }
      if (!replaced) data.rates.push_back(r);
    }
  }
  if (const auto rec = root.find("recovery")) {
    rec->check_keys({"detect", "replace", "restart", "repair", "spares"});
    auto duration = [&](const char* key, core::Seconds& out) {
      if (const auto v = rec->find(key)) out = read_sourced(*v, shipped).value.as_duration(Bound::NonNegative);
    };
    duration("detect", data.recovery.detect);
    duration("replace", data.recovery.replace);
    duration("restart", data.recovery.restart);
    duration("repair", data.recovery.repair);
    if (const auto v = rec->find("spares")) data.recovery.spares = v->as_int(Bound::NonNegative);
  }
}

}  // namespace

FailureData parse_failure_data(std::string_view text, const std::string& file) {
  FailureData data;
  apply(data, load_yaml_text(text, file), false);
  return data;
}

FailureData load_failure_data(const std::string& user_file, const std::string& flag) {
  FailureData data;
  apply(data, load_yaml_text(embedded_text(kFailuresFile), std::string("data/") + kFailuresFile), true);
  if (!user_file.empty()) apply(data, load_yaml_file(user_file, flag), false);
  return data;
}

const reliability::FailureModel& find_failure_model(const FailureData& data, const std::string& name,
                                                    const std::string& flag) {
  std::vector<std::string> names;
  for (const auto& m : data.models) {
    if (core::to_lower(m.name) == core::to_lower(name)) return m;
    names.push_back(m.name);
  }
  throw core::InputError::flag(flag, core::unknown_name_message("failure model", name, names));
}

CheckpointDefaults parse_checkpoint_defaults(std::string_view text, const std::string& file) {
  const YamlDocument doc = load_yaml_text(text, file);
  const YamlNode root = doc.node();
  root.check_keys({"kind", "contents", "engine", "client"});
  if (root["kind"].as_string() != "CheckpointDefaults") root["kind"].fail("expected 'CheckpointDefaults'");
  CheckpointDefaults d;
  const YamlNode contents = root["contents"];
  contents.check_keys({"bytes_per_param", "weight_bytes_per_param"});
  d.bytes_per_param = read_sourced(contents["bytes_per_param"], true).value.as_number(Bound::Positive);
  d.weight_bytes_per_param = read_sourced(contents["weight_bytes_per_param"], true).value.as_number(Bound::Positive);
  if (d.weight_bytes_per_param > d.bytes_per_param) contents["weight_bytes_per_param"].fail("exceeds bytes_per_param");
  const YamlNode engine = root["engine"];
  engine.check_keys({"device_to_host", "device_to_pageable", "writer_throughput", "reader_throughput"});
  d.engine.device_to_host = read_sourced(engine["device_to_host"], true).value.as_bandwidth();
  d.engine.pageable_copy = read_sourced(engine["device_to_pageable"], true).value.as_bandwidth();
  d.engine.writer_throughput = read_sourced(engine["writer_throughput"], true).value.as_bandwidth();
  d.engine.reader_throughput = read_sourced(engine["reader_throughput"], true).value.as_bandwidth();
  const YamlNode client = root["client"];
  client.check_keys({"s3_connections_per_node", "s3_part_size", "nvme_write_per_node", "nvme_read_per_node"});
  d.client.connections_per_node = read_sourced(client["s3_connections_per_node"], true).value.as_int(Bound::Positive);
  d.client.part_size = read_sourced(client["s3_part_size"], true).value.as_bytes();
  d.client.nvme_write_per_node = read_sourced(client["nvme_write_per_node"], true).value.as_bandwidth();
  d.client.nvme_read_per_node = read_sourced(client["nvme_read_per_node"], true).value.as_bandwidth();
  d.client.host_copy = d.engine.device_to_host;
  return d;
}

CheckpointDefaults load_checkpoint_defaults() {
  return parse_checkpoint_defaults(embedded_text(kCheckpointingFile), std::string("data/") + kCheckpointingFile);
}

double parse_count_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_count(text);
  if (!v || *v.value <= 0.0) {
    throw core::InputError::flag(flag, fmt::format("'{}' is not a positive count (e.g. 405B, 1.5e12)", text));
  }
  return *v.value;
}

core::Bytes parse_bytes_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_bytes(text);
  if (!v || v.value->value() <= 0.0) throw core::InputError::flag(flag, v ? "must be greater than zero" : v.error);
  return *v.value;
}

core::BytesPerSecond parse_bandwidth_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_bandwidth(text);
  if (!v || v.value->value() <= 0.0) throw core::InputError::flag(flag, v ? "must be greater than zero" : v.error);
  return *v.value;
}

core::Seconds parse_duration_flag(const std::string& text, const std::string& flag) {
  const auto v = core::parse_duration(text);
  if (!v || v.value->value() < 0.0) throw core::InputError::flag(flag, v ? "must not be negative" : v.error);
  // Simulated time is integer nanoseconds (at most 292 years); a job's durations stay far inside.
  constexpr double kTenYears = 10 * 365.25 * 86400;
  if (v.value->value() > kTenYears) throw core::InputError::flag(flag, "'" + text + "' is too long; allowed: 0 to 10 years (3.16e8 s)");
  return *v.value;
}

double parse_node_failure_rate(const FailureData& data, const std::string& text, const std::string& flag) {
  for (const auto& r : data.rates) {
    if (core::to_lower(r.name) == core::to_lower(text)) return r.per_node_hour;
  }
  const auto v = core::parse_count(text);
  if (v && *v.value > 0.0) return reliability::per_node_hour_from_per_1000_node_days(*v.value);
  std::vector<std::string> names;
  for (const auto& r : data.rates) names.push_back(r.name);
  throw core::InputError::flag(flag, fmt::format("'{}' is neither a rate per 1000 node-days (e.g. 6.5) nor a known rate ({})",
                                                 text, core::join(names, ", ")));
}

storage::TierPerformance resolve_tier(const hardware::Catalog& catalog, const hardware::ClusterSpec& cluster,
                                      const std::string& name, const CheckpointJobFlags& flags,
                                      const CheckpointDefaults& defaults, const std::string& flag) {
  if (core::to_lower(name) == "host-memory" || core::to_lower(name) == "memory") {
    return storage::host_memory_tier(cluster, defaults.client);
  }
  const hardware::StorageSpec* spec = catalog.find_storage(name);
  if (spec == nullptr) {
    std::vector<std::string> names = catalog.storage_names();
    names.push_back("host-memory");
    throw core::InputError::flag(flag, core::unknown_name_message("storage", name, names));
  }
  hardware::StorageAttachment attachment;
  attachment.storage = spec->name;
  for (const auto& a : cluster.storage) {
    if (a.storage == spec->name) attachment = a;
  }
  if (!flags.capacity.empty()) attachment.capacity = parse_bytes_flag(flags.capacity, "--capacity");
  if (!flags.throughput_per_tib.empty()) {
    std::string text = flags.throughput_per_tib;
    const auto slash = core::to_lower(text).rfind("/tib");
    if (slash != std::string::npos) text = text.substr(0, slash);
    attachment.throughput_per_tib = parse_bandwidth_flag(text, "--throughput-per-tib");
  }
  if (flags.prefixes > 0) attachment.prefixes = flags.prefixes;
  if (spec->kind == hardware::StorageKind::FsxLustre && attachment.capacity.value() <= 0.0 &&
      spec->min_capacity.value() <= 0.0) {
    throw core::InputError::flag("--capacity", fmt::format("storage '{}' needs a provisioned capacity", spec->name));
  }
  return storage::tier_performance(*spec, attachment, cluster, defaults.client);
}

CheckpointJob resolve_checkpoint_job(const CheckpointJobFlags& flags, const hardware::Catalog& catalog) {
  CheckpointJob job;

  // Size of the job.
  if (!flags.cluster.empty()) {
    if (flags.nodes > 0 || flags.gpus > 0) {
      throw core::InputError::flag("--cluster", "give either --cluster or --nodes/--gpus, not both");
    }
    job.cluster = parse_cluster(catalog, flags.cluster, "--cluster");
  } else {
    if (flags.gpus_per_node <= 0) throw core::InputError::flag("--gpus-per-node", "must be greater than zero");
    int nodes = flags.nodes;
    if (flags.gpus > 0) {
      if (flags.gpus % flags.gpus_per_node != 0) {
        throw core::InputError::flag("--gpus", fmt::format("{} GPUs do not fill whole nodes of {}", flags.gpus,
                                                           flags.gpus_per_node));
      }
      if (nodes > 0 && nodes * flags.gpus_per_node != flags.gpus) {
        throw core::InputError::flag("--gpus", "disagrees with --nodes x --gpus-per-node");
      }
      nodes = flags.gpus / flags.gpus_per_node;
    }
    if (nodes <= 0) throw core::InputError::flag("--nodes", "give --cluster, --nodes or --gpus");
    job.cluster.name = "custom";
    job.cluster.system.name = "custom";
    job.cluster.system.gpus_per_node = flags.gpus_per_node;
    job.cluster.count = nodes;
  }

  // Layout.
  const int ranks = job.cluster.gpus();
  if (flags.tp <= 0 || flags.pp <= 0) throw core::InputError::flag("--tp", "--tp and --pp must be positive");
  if (ranks % (flags.tp * flags.pp) != 0) {
    throw core::InputError::flag("--tp", fmt::format("tp x pp = {} does not divide {} GPUs", flags.tp * flags.pp, ranks));
  }
  job.layout = storage::CheckpointLayout{.ranks = ranks,
                                         .nodes = job.cluster.nodes(),
                                         .data_parallel = ranks / (flags.tp * flags.pp),
                                         .tensor_parallel = flags.tp,
                                         .sharding = word_flag(parallelism::kShardingWords, flags.sharding, "--sharding")};

  // Contents.
  if (!flags.model.empty() && !flags.params.empty()) {
    throw core::InputError::flag("--params", "give either --model or --params, not both");
  }
  double params = 0.0;
  if (!flags.model.empty()) {
    const workload::ModelSpec model = load_model(flags.model, "--model");
    params = static_cast<double>(workload::count_parameters(model).total);
    job.model = model.name;
  } else if (!flags.params.empty()) {
    params = parse_count_flag(flags.params, "--params");
  }
  resolve_checkpoint_storage(job, params, flags, catalog);
  return job;
}

void resolve_checkpoint_storage(CheckpointJob& job, double parameters, const CheckpointJobFlags& flags,
                                const hardware::Catalog& catalog) {
  job.defaults = load_checkpoint_defaults();
  job.keep = flags.keep;
  job.node_network = job.cluster.system.network_bandwidth;
  if (!flags.node_network.empty()) job.node_network = parse_bandwidth_flag(flags.node_network, "--node-network");

  const double bytes_per_param = flags.bytes_per_param > 0.0 ? flags.bytes_per_param : job.defaults.bytes_per_param;
  const double weight_bytes = flags.weight_bytes > 0.0 ? flags.weight_bytes : job.defaults.weight_bytes_per_param;
  if (weight_bytes > bytes_per_param) throw core::InputError::flag("--weight-bytes", "exceeds --bytes-per-param");
  if (parameters > 0.0) {
    job.contents = storage::checkpoint_contents(parameters, bytes_per_param, weight_bytes);
    job.has_contents = true;
  }

  // Engine.
  job.engine = job.defaults.engine;
  job.engine.asynchronous = flags.async;
  if (!flags.device_to_host.empty()) {
    job.engine.device_to_host = parse_bandwidth_flag(flags.device_to_host, "--device-to-host");
  }
  if (!flags.pageable_copy.empty()) {
    job.engine.pageable_copy = parse_bandwidth_flag(flags.pageable_copy, "--pageable-copy");
  }
  if (!flags.writer_throughput.empty()) {
    job.engine.writer_throughput = flags.writer_throughput == "0" || core::to_lower(flags.writer_throughput) == "unlimited"
                                       ? core::BytesPerSecond(0.0)
                                       : parse_bandwidth_flag(flags.writer_throughput, "--writer-throughput");
  }

  // Tier: the catalog's, or one given by numbers.
  if (!flags.tier_bandwidth.empty()) {
    if (!flags.storage.empty()) throw core::InputError::flag("--tier-bandwidth", "give either --storage or --tier-bandwidth");
    const core::BytesPerSecond per_node = flags.tier_node_bandwidth.empty()
                                              ? core::BytesPerSecond(0.0)
                                              : parse_bandwidth_flag(flags.tier_node_bandwidth, "--tier-node-bandwidth");
    const core::Bytes capacity = flags.capacity.empty() ? core::Bytes(0.0) : parse_bytes_flag(flags.capacity, "--capacity");
    job.tier = storage::custom_tier("custom", parse_bandwidth_flag(flags.tier_bandwidth, "--tier-bandwidth"), per_node,
                                    capacity);
    job.has_tier = true;
  } else {
    std::string name = flags.storage;
    if (name.empty() && !job.cluster.storage.empty()) name = job.cluster.storage.front().storage;
    if (!name.empty()) {
      job.tier = resolve_tier(catalog, job.cluster, name, flags, job.defaults, "--storage");
      job.has_tier = true;
    }
  }
}

GoodputSetup resolve_goodput_setup(const GoodputFlags& f, const CheckpointJob& job, core::Seconds step_time) {
  GoodputSetup setup;
  const FailureData data = load_failure_data(f.failure_file, "--failure-file");
  reliability::FailureModel model = find_failure_model(data, f.failures, "--failures");
  if (!f.node_failure_rate.empty()) {
    model = model.with_unexpected_rate(parse_node_failure_rate(data, f.node_failure_rate, "--node-failure-rate"));
  }
  setup.failure_model = model.name;
  reliability::GoodputScenario& s = setup.scenario;
  s.failures = reliability::job_failure_process(model, job.layout.nodes, f.include_planned);
  if (!f.mtbf.empty()) {
    const auto mtbf = parse_duration_flag(f.mtbf, "--mtbf");
    if (mtbf.value() <= 0.0) throw core::InputError::flag("--mtbf", "must be greater than zero");
    s.failures.rate_per_second = 1.0 / mtbf.value();
  }
  s.gpus = job.layout.ranks;
  s.horizon = parse_duration_flag(f.duration, "--duration");
  if (s.horizon.value() <= 0.0) throw core::InputError::flag("--duration", "must be greater than zero");
  s.step_time = step_time;
  s.weibull_shape = f.weibull_shape;
  if (s.weibull_shape <= 0.0) throw core::InputError::flag("--weibull-shape", "must be greater than zero");
  // 10^6 runs take about 25 s on 2 cores in 56 MB (10^8 grew past 4 GB in 30 s); more is refused.
  if (f.replications < 0 || f.replications > 1000000) {
    throw core::InputError::flag("--replications", fmt::format("{} is out of range; allowed: 0 to 1000000", f.replications));
  }
  if (f.threads < 1) throw core::InputError::flag("--threads", "must be 1 or more");
  setup.monte_carlo = {.replications = f.replications, .seed = f.seed, .threads = f.threads};

  // Recovery path.
  s.recovery = data.recovery;
  s.recovery.detect = duration_or(f.detect, "--detect", s.recovery.detect);
  s.recovery.replace = duration_or(f.replace, "--replace", s.recovery.replace);
  s.recovery.restart = duration_or(f.restart, "--restart", s.recovery.restart);
  s.recovery.repair = duration_or(f.repair, "--repair", s.recovery.repair);
  if (f.spares < -1) throw core::InputError::flag("--spares", "must be -1 (unlimited) or more");
  s.recovery.spares = f.spares;

  // Checkpoint timing: from the storage model when the job's checkpoint is described, else flags.
  using reliability::CheckpointStrategy;
  const auto strategy =
      word_flag(reliability::kCheckpointStrategyWords, f.strategy.empty() ? (job.engine.asynchronous ? "async" : "sync") : f.strategy, "--strategy");
  setup.strategy = strategy;
  reliability::CheckpointTiming& t = s.checkpoint;
  if (f.replicas < 1) throw core::InputError::flag("--replicas", "must be 1 or more");
  if (job.has_contents && job.has_tier) {
    // Every strategy but sync stages the shard in pinned host memory and writes in the background.
    storage::CheckpointEngine engine = job.engine;
    engine.asynchronous = strategy != CheckpointStrategy::SyncDisk;
    const auto e = storage::estimate_checkpoint(job.contents, job.layout, job.tier, engine, job.node_network, job.keep);
    // A peer restore lands in the peer's pinned host memory and is copied back to the GPUs.
    const auto from_peer = storage::peer_transfer_time(e.plan.max_node_load, 1, job.node_network) + e.pinned_restore;
    switch (strategy) {
      case CheckpointStrategy::SyncDisk:
        t = {.interval = {}, .blocking = e.save.total, .persist = e.save.total, .load = e.load.total};
        break;
      case CheckpointStrategy::AsyncDisk:
      case CheckpointStrategy::PeerReplica:
        t = {.interval = {}, .blocking = e.staging_copy, .persist = e.save.total, .load = e.load.total};
        s.peer_load = from_peer;
        break;
      case CheckpointStrategy::InMemory:
        t = {.interval = {},
             .blocking = e.staging_copy,
             .persist = e.staging_copy + storage::peer_transfer_time(e.plan.max_node_bytes, f.replicas - 1, job.node_network),
             .load = from_peer};
        break;
    }
    setup.estimate = e;
  } else if (f.save_time.empty()) {
    throw core::InputError::flag("--save-time",
                                 "give --save-time (and --load-time), or --model/--params with --storage to model it");
  }
  if (!f.save_time.empty()) {
    const auto save = parse_duration_flag(f.save_time, "--save-time");
    const bool background = strategy != CheckpointStrategy::SyncDisk;
    t.persist = save;
    t.blocking = background ? duration_or(f.copy_time, "--copy-time", core::Seconds(0.0)) : save;
    t.load = duration_or(f.load_time, "--load-time", save);
  } else {
    t.load = duration_or(f.load_time, "--load-time", t.load);
    t.blocking = duration_or(f.copy_time, "--copy-time", t.blocking);
  }
  if (t.persist < t.blocking) t.persist = t.blocking;
  s.peer_recovery = strategy == CheckpointStrategy::PeerReplica;
  s.peer_load = duration_or(f.peer_load_time, "--peer-load-time", s.peer_load);

  // Interval: Young's and Daly's closed forms for reference; the optimum of the analytic model is used.
  const core::Seconds mtbf = s.failures.mtbf();
  const char* save_flag = f.save_time.empty() ? "--storage" : "--save-time";  // the storage model's save
  check_against_mtbf(t.persist, save_flag, mtbf);
  check_against_mtbf(t.blocking, f.copy_time.empty() ? save_flag : "--copy-time", mtbf);
  check_against_mtbf(t.load, f.load_time.empty() ? save_flag : "--load-time", mtbf);
  check_against_mtbf(s.recovery.detect + s.recovery.replace + s.recovery.restart, "--detect/--replace/--restart", mtbf);
  check_against_mtbf(s.peer_load, "--peer-load-time", mtbf);
  setup.young = reliability::young_interval(t.blocking, mtbf);
  setup.daly = reliability::daly_interval(t.blocking, mtbf);
  t.interval = core::Seconds(1.0);
  setup.optimum = reliability::optimal_interval(s);
  t.interval = f.interval.empty() ? setup.optimum : parse_duration_flag(f.interval, "--interval");
  if (t.interval.value() <= 0.0) throw core::InputError::flag("--interval", "must be greater than zero");
  check_against_mtbf(t.interval, "--interval", mtbf);
  return setup;
}

}  // namespace fmsim::config
