// fmsim checkpoint: checkpoint size, sharding, save and load times on a storage tier, DRA export
// and lazy load, and the input pipeline's read bandwidth.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/reliability_report.hpp"
#include "config/flag_values.hpp"
#include "config/reliability_loader.hpp"
#include "core/error.hpp"
#include "storage/checkpoint_io.hpp"
#include "storage/data_loading.hpp"
#include "storage/data_repository.hpp"

namespace fmsim::cli {

/// The flags describing the job whose checkpoint is modelled; shared with `fmsim goodput`.
void add_checkpoint_job_flags(CLI::App& cmd, jobspec::CheckpointJobFlags& f) {
  cmd.add_option("--model", f.model, "Model preset or config.json (parameter count from its dimensions)")
      ->type_name("NAME");
  cmd.add_option("--params", f.params, "Parameter count instead of --model, e.g. 405B")->type_name("COUNT");
  cmd.add_option("--cluster", f.cluster, "Cluster, e.g. p5.48xlarge:2048, or a cluster YAML")->type_name("SPEC");
  cmd.add_option("--nodes", f.nodes, "Nodes (without --cluster)");
  cmd.add_option("--gpus", f.gpus, "GPUs (without --cluster)");
  cmd.add_option("--gpus-per-node", f.gpus_per_node, "GPUs per node (without --cluster; default 8)");
  cmd.add_option("--tp", f.tp, "Tensor-parallel size (ranks innermost on a node; default 1)");
  cmd.add_option("--pp", f.pp, "Pipeline-parallel size (default 1); data parallel = GPUs / (tp x pp)");
  cmd.add_option("--sharding", f.sharding,
                 "Data-parallel sharding (checkpoint shards: none for ddp, optimizer for zero1/zero2,\n"
                 "full for fsdp): " +
                     parallelism::kShardingWords.allowed() + "; default: zero1");
  add_checkpoint_storage_flags(cmd, f);
}

/// The flags describing what is saved and where (contents, tier, engine); shared with `fmsim run`,
/// which takes the job's size and layout from its training flags.
void add_checkpoint_storage_flags(CLI::App& cmd, jobspec::CheckpointJobFlags& f) {
  cmd.add_option("--bytes-per-param", f.bytes_per_param,
                 "Checkpoint bytes per parameter (default 14: bf16 weights + fp32 master + Adam m, v)");
  cmd.add_option("--weight-bytes", f.weight_bytes, "Of which working weights (default 2: bf16)");
  cmd.add_option("--storage", f.storage,
                 "Checkpoint tier from the catalog (e.g. fsx-persistent2-1000, s3, s3-express, instance-nvme) "
                 "or host-memory; default: the cluster's first attached storage")
      ->type_name("NAME");
  cmd.add_option("--capacity", f.capacity, "Provisioned FSx capacity, e.g. 1.2PiB")->type_name("BYTES");
  cmd.add_option("--throughput-per-tib", f.throughput_per_tib, "FSx throughput per TiB override, e.g. 500MB/s")
      ->type_name("BW");
  cmd.add_option("--prefixes", f.prefixes, "S3 prefixes the checkpoint is spread over");
  cmd.add_option("--tier-bandwidth", f.tier_bandwidth, "A tier given by its aggregate bandwidth instead of --storage")
      ->type_name("BW");
  cmd.add_option("--tier-node-bandwidth", f.tier_node_bandwidth, "Per-node limit of that tier")->type_name("BW");
  cmd.add_option("--node-network", f.node_network, "One node's network egress (default: the system's)")
      ->type_name("BW");
  cmd.add_flag("--async", f.async, "Asynchronous save: only the copy into pinned host memory blocks training");
  cmd.add_option("--writer-throughput", f.writer_throughput,
                 "One rank's serialise-and-write stream (default 0.7 GB/s, torch.save; 0 = unbounded)")
      ->type_name("BW");
  cmd.add_option("--device-to-host", f.device_to_host,
                 "GPU-to-pinned-host copy per GPU, async staging (default 50 GB/s)")
      ->type_name("BW");
  cmd.add_option("--pageable-copy", f.pageable_copy,
                 "GPU-to-pageable-host copy per GPU, what a synchronous torch.save pays (default 1.4 GB/s)")
      ->type_name("BW");
  cmd.add_option("--keep", f.keep, "Checkpoints kept on the tier (capacity check; default 2)");
}

namespace {

struct CheckpointFlags {
  jobspec::CheckpointJobFlags job;
  std::string s3;        ///< DRA: the S3 storage linked to an FSx tier
  std::string interval;  ///< checkpoint interval (export check)
  std::string dataset;   ///< dataset size (lazy load)
  std::string tokens_per_s;
  double bytes_per_token = 4.0;
  bool json = false;
};

nlohmann::json io_json(const storage::IoTime& t) {
  return {{"total_s", t.total.value()},
          {"bottleneck", storage::to_string(t.bottleneck)},
          {"rank_stream_s", t.rank_stream.value()},
          {"gpu_to_host_s", t.device_copy.value()},
          {"writer_stream_s", t.writer_stream.value()},
          {"node_network_s", t.node_network.value()},
          {"tier_per_node_s", t.node_tier.value()},
          {"tier_bandwidth_s", t.tier_bandwidth.value()},
          {"tier_requests_s", t.tier_requests.value()},
          {"latency_s", t.latency.value()}};
}

std::string stage(core::Seconds s) { return s.value() > 0.0 ? core::format_duration(s) : "-"; }

void print_io(const char* title, const storage::IoTime& t, const char* stream_detail) {
  std::cout << fmt::format("{:<14} {:>12}   bottleneck: {}\n", title, core::format_duration(t.total),
                           storage::to_string(t.bottleneck));
  std::cout << fmt::format("  rank stream  {:>12}   (gpu-host copy {} + {} {})\n", stage(t.rank_stream),
                           stage(t.device_copy), stream_detail, stage(t.writer_stream));
  std::cout << fmt::format("  node network {:>12}\n", stage(t.node_network));
  std::cout << fmt::format("  tier/node    {:>12}\n", stage(t.node_tier));
  std::cout << fmt::format("  tier total   {:>12}\n", stage(t.tier_bandwidth));
  std::cout << fmt::format("  tier reqs    {:>12}\n", stage(t.tier_requests));
}

void run_checkpoint(const CheckpointFlags& f, Context& ctx) {
  const jobspec::CheckpointJob job = jobspec::resolve_checkpoint_job(f.job, ctx.catalog());
  if (!job.has_contents) throw core::InputError::flag("--params", "give --model or --params");
  if (!job.has_tier)
    throw core::InputError::flag("--storage", "give --storage, --tier-bandwidth or a cluster with storage");
  const auto e =
      storage::estimate_checkpoint(job.contents, job.layout, job.tier, job.engine, job.node_network, job.keep);

  nlohmann::json out;
  out["model"] = job.model;
  out["parameters"] = job.contents.parameters;
  out["bytes_per_param"] = job.contents.bytes_per_param();
  out["size_bytes"] = e.plan.total.value();
  out["weights_bytes"] = job.contents.weights().value();
  out["optimizer_bytes"] = job.contents.optimizer().value();
  out["layout"] = {{"gpus", job.layout.ranks},
                   {"nodes", job.layout.nodes},
                   {"tp", job.layout.tensor_parallel},
                   {"dp", job.layout.data_parallel},
                   {"sharding", storage::sharded_state(job.layout.sharding)},
                   {"writers", e.plan.writers},
                   {"max_writer_bytes", e.plan.max_writer_bytes.value()},
                   {"max_node_bytes", e.plan.max_node_bytes.value()},
                   {"load_bytes", e.plan.load_total.value()}};
  out["tier"] = {{"name", job.tier.name},
                 {"kind", storage::to_string(job.tier.kind)},
                 {"aggregate_write_bytes_per_s", job.tier.aggregate_write.value()},
                 {"per_node_write_bytes_per_s", job.tier.per_node_write.value()},
                 {"write_requests_per_s", job.tier.write_requests_per_s},
                 {"capacity_bytes", job.tier.capacity.value()}};
  out["asynchronous"] = job.engine.asynchronous;
  out["save"] = io_json(e.save);
  out["load"] = io_json(e.load);
  out["blocking_s"] = e.blocking.value();
  out["persist_s"] = e.persist.value();
  out["retained_bytes"] = e.retained.value();
  out["fits"] = e.fits;

  std::string dra_text;
  if (!f.s3.empty()) {
    const auto s3 = resolve_dra_s3(job, f.job, f.s3, "--s3", ctx);
    if (!f.interval.empty()) {
      const auto interval = config::parse_duration_flag(f.interval, "--interval");
      const auto x =
          export_report(storage::estimate_export(e.plan.total, e.save.total, interval, job.tier, s3), s3.name);
      out["export"] = x.json;
      dra_text += x.text;
    }
    if (!f.dataset.empty()) {
      const auto l = storage::estimate_lazy_load(config::parse_bytes_flag(f.dataset, "--dataset"), job.tier, s3);
      out["lazy_load"] = {{"rate_bytes_per_s", l.rate.value()}, {"time_s", l.time.value()}, {"limit", l.limit}};
      dra_text += fmt::format("Lazy load from {}: first read of the dataset takes {} at {} ({})\n", s3.name,
                              core::format_duration(l.time), format_rate(l.rate), l.limit);
    }
  }
  std::string loading_text;
  if (!f.tokens_per_s.empty()) {
    const storage::DataLoadingDemand demand{.tokens_per_s = config::parse_count_flag(f.tokens_per_s, "--tokens-per-s"),
                                            .bytes_per_token = f.bytes_per_token,
                                            .nodes = job.layout.nodes};
    const auto c = data_loading_report(storage::check_data_loading(demand, job.tier));
    out["data_loading"] = c.json;
    loading_text = c.text;
  }

  if (f.json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("Checkpoint: {}{:.4g}B parameters x {:.3g} B = {} (weights {}, optimizer {})\n",
                           job.model.empty() ? "" : job.model + ", ", job.contents.parameters / 1e9,
                           job.contents.bytes_per_param(), core::format_bytes(e.plan.total),
                           core::format_bytes(job.contents.weights()), core::format_bytes(job.contents.optimizer()));
  std::cout << fmt::format(
      "Job: {} GPUs on {} nodes, tp {} x dp {}, sharding {}; {} writers, at most {} per rank, {} per node\n",
      job.layout.ranks, job.layout.nodes, job.layout.tensor_parallel, job.layout.data_parallel,
      storage::sharded_state(job.layout.sharding), e.plan.writers, core::format_bytes(e.plan.max_writer_bytes),
      core::format_bytes(e.plan.max_node_bytes));
  std::cout << fmt::format("Tier: {} ({}): aggregate write {}, per node {}, node network {}\n", job.tier.name,
                           storage::to_string(job.tier.kind), format_rate(job.tier.aggregate_write),
                           format_rate(job.tier.per_node_write), format_rate(job.node_network));
  print_io(job.engine.asynchronous ? "Save (async)" : "Save", e.save, "serialise and write");
  print_io("Load", e.load, "read and deserialise");
  std::cout << fmt::format("Training stalls {} per checkpoint; restorable {} after it starts\n",
                           core::format_duration(e.blocking), core::format_duration(e.persist));
  std::cout << fmt::format(
      "Capacity: {} checkpoints = {}{}\n", job.keep, core::format_bytes(e.retained),
      job.tier.capacity.value() > 0.0
          ? fmt::format(" of {}: {}", core::format_bytes(job.tier.capacity), e.fits ? "fits" : "DOES NOT FIT")
          : "");
  std::cout << dra_text << loading_text;
}

}  // namespace

void add_checkpoint_command(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<CheckpointFlags>();
  auto* cmd = app.add_subcommand("checkpoint", "Checkpoint size, sharding, save/load time on a storage tier");
  add_checkpoint_job_flags(*cmd, flags->job);
  cmd->add_option("--s3", flags->s3, "S3 storage linked to the FSx tier by a data repository association")
      ->type_name("NAME");
  cmd->add_option("--interval", flags->interval, "Checkpoint interval, for the DRA export check (e.g. 30min)")
      ->type_name("DURATION");
  cmd->add_option("--dataset", flags->dataset, "Dataset size, for the DRA lazy-load estimate (e.g. 60TB)")
      ->type_name("BYTES");
  cmd->add_option("--tokens-per-s", flags->tokens_per_s, "Job throughput, for the data-loading check (e.g. 50M)")
      ->type_name("COUNT");
  cmd->add_option("--bytes-per-token", flags->bytes_per_token, "Stored bytes per token (default 4)");
  cmd->add_flag("--json", flags->json, "Print JSON");
  cmd->footer(
      "Examples:\n"
      "  fmsim checkpoint --model llama3.1-405b --cluster p5.48xlarge:2048 --tp 8 --pp 16 \\\n"
      "      --storage fsx-persistent2-1000 --capacity 1PiB --s3 s3 --interval 30min\n"
      "  fmsim checkpoint --params 176B --nodes 48 --tp 4 --pp 12 --tier-bandwidth 500GB/s --json");
  cmd->callback([flags, &ctx] { run_checkpoint(*flags, ctx); });
}

}  // namespace fmsim::cli
