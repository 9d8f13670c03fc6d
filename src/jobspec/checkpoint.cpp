// Checkpoint-job flag values into a resolved checkpoint job.
#include "jobspec/checkpoint.hpp"

#include <fmt/format.h>

#include "config/cluster_loader.hpp"
#include "config/flag_values.hpp"
#include "config/model_loader.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::jobspec {

storage::TierPerformance resolve_tier(const hardware::Catalog& catalog, const hardware::ClusterSpec& cluster,
                                      const std::string& name, const CheckpointJobFlags& flags,
                                      const config::CheckpointDefaults& defaults, const std::string& flag) {
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
  if (!flags.capacity.empty()) attachment.capacity = config::parse_bytes_flag(flags.capacity, "--capacity");
  if (!flags.throughput_per_tib.empty()) {
    std::string text = flags.throughput_per_tib;
    const auto slash = core::to_lower(text).rfind("/tib");
    if (slash != std::string::npos) text = text.substr(0, slash);
    attachment.throughput_per_tib = config::parse_bandwidth_flag(text, "--throughput-per-tib");
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
    job.cluster = config::parse_cluster(catalog, flags.cluster, "--cluster");
  } else {
    if (flags.gpus_per_node <= 0) throw core::InputError::flag("--gpus-per-node", "must be greater than zero");
    int nodes = flags.nodes;
    if (flags.gpus > 0) {
      if (flags.gpus % flags.gpus_per_node != 0) {
        throw core::InputError::flag(
            "--gpus", fmt::format("{} GPUs do not fill whole nodes of {}", flags.gpus, flags.gpus_per_node));
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
    throw core::InputError::flag("--tp",
                                 fmt::format("tp x pp = {} does not divide {} GPUs", flags.tp * flags.pp, ranks));
  }
  job.layout = storage::CheckpointLayout{
      .ranks = ranks,
      .nodes = job.cluster.nodes(),
      .data_parallel = ranks / (flags.tp * flags.pp),
      .tensor_parallel = flags.tp,
      .sharding = config::word_flag(parallelism::kShardingWords, flags.sharding, "--sharding")};

  // Contents.
  if (!flags.model.empty() && !flags.params.empty()) {
    throw core::InputError::flag("--params", "give either --model or --params, not both");
  }
  double params = 0.0;
  if (!flags.model.empty()) {
    const workload::ModelSpec model = config::load_model(flags.model, "--model");
    params = static_cast<double>(workload::count_parameters(model).total);
    job.model = model.name;
  } else if (!flags.params.empty()) {
    params = config::parse_count_flag(flags.params, "--params");
  }
  resolve_checkpoint_storage(job, params, flags, catalog);
  return job;
}

void resolve_checkpoint_storage(CheckpointJob& job, double parameters, const CheckpointJobFlags& flags,
                                const hardware::Catalog& catalog) {
  job.defaults = config::load_checkpoint_defaults();
  job.keep = flags.keep;
  job.node_network = job.cluster.system.network_bandwidth;
  if (!flags.node_network.empty())
    job.node_network = config::parse_bandwidth_flag(flags.node_network, "--node-network");

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
    job.engine.device_to_host = config::parse_bandwidth_flag(flags.device_to_host, "--device-to-host");
  }
  if (!flags.pageable_copy.empty()) {
    job.engine.pageable_copy = config::parse_bandwidth_flag(flags.pageable_copy, "--pageable-copy");
  }
  if (!flags.writer_throughput.empty()) {
    job.engine.writer_throughput =
        flags.writer_throughput == "0" || core::to_lower(flags.writer_throughput) == "unlimited"
            ? core::BytesPerSecond(0.0)
            : config::parse_bandwidth_flag(flags.writer_throughput, "--writer-throughput");
  }

  // Tier: the catalog's, or one given by numbers.
  if (!flags.tier_bandwidth.empty()) {
    if (!flags.storage.empty())
      throw core::InputError::flag("--tier-bandwidth", "give either --storage or --tier-bandwidth");
    const core::BytesPerSecond per_node =
        flags.tier_node_bandwidth.empty()
            ? core::BytesPerSecond(0.0)
            : config::parse_bandwidth_flag(flags.tier_node_bandwidth, "--tier-node-bandwidth");
    const core::Bytes capacity =
        flags.capacity.empty() ? core::Bytes(0.0) : config::parse_bytes_flag(flags.capacity, "--capacity");
    job.tier = storage::custom_tier("custom", config::parse_bandwidth_flag(flags.tier_bandwidth, "--tier-bandwidth"),
                                    per_node, capacity);
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

}  // namespace fmsim::jobspec
