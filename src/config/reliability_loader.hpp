// Failure models, recovery defaults and checkpoint-engine defaults from data/reliability/*.yaml
// (and user files in the same format), plus the flag values of `fmsim checkpoint` and `fmsim goodput`.
#pragma once

#include <string>
#include <vector>

#include "core/units.hpp"
#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"
#include "reliability/failure_model.hpp"
#include "reliability/goodput.hpp"
#include "storage/checkpoint_io.hpp"
#include "storage/storage_tier.hpp"

namespace fmsim::config {

/// A published fleet-wide failure rate (e.g. Meta RSC-1: 6.5 per 1000 node-days).
struct NamedRate {
  std::string name;
  double per_node_hour = 0.0;
  std::string source;
};

/// Everything in failures.yaml.
struct FailureData {
  std::vector<reliability::FailureModel> models;
  std::vector<NamedRate> rates;
  reliability::RecoveryCosts recovery;
};

/// The shipped data/reliability/failures.yaml, with `user_file` (same format; a model or rate
/// with an existing name replaces it, recovery values override) applied on top when given.
/// Throws core::InputError naming file:line: field on bad input.
FailureData load_failure_data(const std::string& user_file = "", const std::string& flag = "--failures");

/// Parses failures.yaml-formatted text (`file` names it in messages).
FailureData parse_failure_data(std::string_view text, const std::string& file);

/// The model called `name`; InputError on `flag` with the closest names otherwise.
const reliability::FailureModel& find_failure_model(const FailureData& data, const std::string& name,
                                                    const std::string& flag);

/// Everything in checkpointing.yaml.
struct CheckpointDefaults {
  double bytes_per_param = 14.0;
  double weight_bytes_per_param = 2.0;
  storage::CheckpointEngine engine;
  storage::TierOptions client;
};

CheckpointDefaults load_checkpoint_defaults();
CheckpointDefaults parse_checkpoint_defaults(std::string_view text, const std::string& file);

// --- flag values ------------------------------------------------------------------------------

/// "405B", "1.5e12", "70000000000".
double parse_count_flag(const std::string& text, const std::string& flag);
core::Bytes parse_bytes_flag(const std::string& text, const std::string& flag);
core::BytesPerSecond parse_bandwidth_flag(const std::string& text, const std::string& flag);
core::Seconds parse_duration_flag(const std::string& text, const std::string& flag);
/// "none"|"ddp", "optimizer"|"zero1"|"zero2", "full"|"zero3"|"fsdp".
storage::Sharding parse_sharding(const std::string& text, const std::string& flag);
/// "sync", "async", "in-memory", "peer".
reliability::CheckpointStrategy parse_strategy(const std::string& text, const std::string& flag);
/// A failure rate per 1000 node-days ("6.5") or the name of a published rate ("meta-rsc1").
double parse_node_failure_rate(const FailureData& data, const std::string& text, const std::string& flag);

// --- the job whose checkpoint is modelled (shared by `fmsim checkpoint` and `fmsim goodput`) ---

/// Raw flag values; empty strings and zeros mean "not given".
struct CheckpointJobFlags {
  std::string model;              ///< --model: preset or config.json
  std::string params;             ///< --params: "405B"
  double bytes_per_param = 0.0;   ///< --bytes-per-param
  double weight_bytes = 0.0;      ///< --weight-bytes
  std::string cluster;            ///< --cluster: "p5.48xlarge:2048" or a cluster YAML
  int nodes = 0;                  ///< --nodes (without --cluster)
  int gpus = 0;                   ///< --gpus (without --cluster)
  int gpus_per_node = 8;          ///< --gpus-per-node (without --cluster)
  int tp = 1;                     ///< --tp
  int pp = 1;                     ///< --pp
  std::string sharding = "optimizer";
  std::string storage;            ///< --storage: catalog key
  std::string capacity;           ///< --capacity (FSx)
  std::string throughput_per_tib; ///< --throughput-per-tib (FSx)
  int prefixes = 0;               ///< --prefixes (S3)
  std::string tier_bandwidth;     ///< --tier-bandwidth: a tier given by numbers
  std::string tier_node_bandwidth;///< --tier-node-bandwidth
  std::string node_network;       ///< --node-network: one node's egress
  bool async = false;             ///< --async
  std::string writer_throughput;  ///< --writer-throughput ("0" = unbounded)
  std::string device_to_host;     ///< --device-to-host
  int keep = 2;                   ///< --keep
};

/// The resolved job: what is saved, by whom, to which tier.
struct CheckpointJob {
  std::string model;                   ///< model name, or "" for --params
  bool has_contents = false;           ///< --model or --params given
  storage::CheckpointContents contents;
  storage::CheckpointLayout layout;
  storage::TierPerformance tier;
  bool has_tier = false;
  storage::CheckpointEngine engine;
  core::BytesPerSecond node_network{}; ///< 0 = unbounded
  hardware::ClusterSpec cluster;       ///< count/system filled from --cluster or --nodes/--gpus
  int keep = 2;
  CheckpointDefaults defaults;
};

/// Resolves the flags against the catalog and the shipped defaults; InputError naming the flag on
/// bad or inconsistent values (e.g. --tp x --pp not dividing the GPUs).
CheckpointJob resolve_checkpoint_job(const CheckpointJobFlags& flags, const hardware::Catalog& catalog);

/// The tier `name` of the catalog attached to `cluster` (capacity etc. from the cluster's own
/// attachment of that storage if it has one); InputError on `flag` when unknown.
storage::TierPerformance resolve_tier(const hardware::Catalog& catalog, const hardware::ClusterSpec& cluster,
                                      const std::string& name, const CheckpointJobFlags& flags,
                                      const CheckpointDefaults& defaults, const std::string& flag);

}  // namespace fmsim::config
