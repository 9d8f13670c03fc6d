// Failure models, recovery defaults and checkpoint-engine defaults from data/reliability/*.yaml
// (and user files in the same format), plus the flag values of `fmsim checkpoint`, `fmsim goodput`
// and `fmsim run`: the checkpointed job and the goodput scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "hardware/catalog.hpp"
#include "hardware/specs.hpp"
#include "reliability/failure_model.hpp"
#include "reliability/goodput.hpp"
#include "reliability/monte_carlo.hpp"
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
  std::string sharding = "zero1";  ///< --sharding: a word of parallelism::kShardingWords
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
  std::string pageable_copy;      ///< --pageable-copy
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

/// The part of a checkpoint job that does not depend on its size and layout: node network,
/// contents (`parameters` x --bytes-per-param; none when `parameters` is 0), engine and tier.
/// `job.cluster` must be set; the size flags (--model, --params, --cluster, --nodes, --gpus, --tp,
/// --pp, --sharding) are not read, so `fmsim run` can derive them from its training layout.
void resolve_checkpoint_storage(CheckpointJob& job, double parameters, const CheckpointJobFlags& flags,
                                const hardware::Catalog& catalog);

// --- the goodput scenario (shared by `fmsim goodput` and `fmsim run`) -------------------------

/// Raw values of the failure, checkpoint-strategy, recovery, duration and Monte Carlo flags;
/// empty strings mean "not given" (the shipped default applies).
struct GoodputFlags {
  std::string failures = "llama3-405b";  ///< --failures: failure mix
  std::string failure_file;              ///< --failure-file
  std::string mtbf;                      ///< --mtbf: job-level, overrides the mix's rate
  std::string node_failure_rate;         ///< --node-failure-rate: per 1000 node-days or a named rate
  bool include_planned = false;          ///< --include-planned
  std::string strategy;                  ///< --strategy; "" = async with --async, else sync
  std::string save_time, copy_time, load_time, peer_load_time;  ///< instead of the storage model
  int replicas = 2;                      ///< --replicas: copies of an in-memory checkpoint
  std::string interval;                  ///< --interval; "" = the optimum
  std::string detect, replace, restart, repair;
  int spares = -1;                       ///< --spares; -1 = never short of one
  std::string duration = "30d";          ///< --duration: wall-clock length of the run
  double weibull_shape = 1.0;            ///< --weibull-shape
  int replications = 1000;               ///< --replications: Monte Carlo runs (0 = none, in `run`)
  std::uint64_t seed = 20240723;         ///< --seed
  int threads = 2;                       ///< --threads
};

/// A goodput scenario resolved from the flags, with what the commands report about it.
struct GoodputSetup {
  std::string failure_model;               ///< name of the failure mix
  reliability::GoodputScenario scenario;   ///< checkpoint interval set: --interval or the optimum
  reliability::CheckpointStrategy strategy = reliability::CheckpointStrategy::SyncDisk;
  std::optional<storage::CheckpointEstimate> estimate;  ///< when the storage model timed the checkpoint
  core::Seconds young{};                   ///< Young's interval sqrt(2 delta M), delta = the stall
  core::Seconds daly{};                    ///< Daly's higher-order interval
  core::Seconds optimum{};                 ///< the interval that maximises the analytic ETTR
  reliability::MonteCarloOptions monte_carlo;
};

/// The scenario of a run of `job` (its nodes and GPUs fail; its checkpoint is timed by the storage
/// model when it has contents and a tier, else by --save-time and friends) whose steps take
/// `step_time` (0 = negligible). InputError naming the flag on bad or missing values.
GoodputSetup resolve_goodput_setup(const GoodputFlags& flags, const CheckpointJob& job, core::Seconds step_time);

/// The tier `name` of the catalog attached to `cluster` (capacity etc. from the cluster's own
/// attachment of that storage if it has one); InputError on `flag` when unknown.
storage::TierPerformance resolve_tier(const hardware::Catalog& catalog, const hardware::ClusterSpec& cluster,
                                      const std::string& name, const CheckpointJobFlags& flags,
                                      const CheckpointDefaults& defaults, const std::string& flag);

}  // namespace fmsim::config
