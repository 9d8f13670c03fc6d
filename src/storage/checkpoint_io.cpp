// Checkpoint sharding and save/load time (model in checkpoint_io.hpp, docs/models/storage.md).
#include "storage/checkpoint_io.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace fmsim::storage {
namespace {

core::Seconds divide(core::Bytes b, core::BytesPerSecond r) {
  if (r.value() <= 0.0 || b.value() <= 0.0) return core::Seconds(0.0);
  return b / r;
}

// Fills total and bottleneck from the stage times already set.
void finish(IoTime& t) {
  t.rank_stream = t.device_copy + t.writer_stream;
  const std::pair<core::Seconds, IoLimit> stages[] = {{t.rank_stream, IoLimit::RankStream},
                                                      {t.node_network, IoLimit::NodeNetwork},
                                                      {t.node_tier, IoLimit::NodeTier},
                                                      {t.tier_bandwidth, IoLimit::TierBandwidth},
                                                      {t.tier_requests, IoLimit::TierRequests}};
  core::Seconds slowest(0.0);
  t.bottleneck = IoLimit::None;
  for (const auto& [time, limit] : stages) {
    if (time > slowest) {
      slowest = time;
      t.bottleneck = limit;
    }
  }
  t.total = slowest + t.latency;
}

}  // namespace

CheckpointContents checkpoint_contents(double parameters, double bytes_per_param, double weight_bytes) {
  FMSIM_CHECK(bytes_per_param >= weight_bytes, "weights cannot exceed the whole checkpoint");
  return CheckpointContents{.parameters = parameters,
                            .weight_bytes_per_param = weight_bytes,
                            .optimizer_bytes_per_param = bytes_per_param - weight_bytes};
}

std::string_view sharded_state(Sharding sharding) {
  switch (sharding) {
    case Sharding::None: return "none";
    case Sharding::DistributedOptimizer:
    case Sharding::Zero2: return "optimizer";
    case Sharding::Zero3: return "full";
  }
  return "?";
}

std::string to_string(IoLimit limit) {
  switch (limit) {
    case IoLimit::None: return "none";
    case IoLimit::RankStream: return "rank stream";
    case IoLimit::NodeNetwork: return "node network";
    case IoLimit::NodeTier: return "tier per-client limit";
    case IoLimit::TierBandwidth: return "tier aggregate bandwidth";
    case IoLimit::TierRequests: return "tier request rate";
  }
  return "?";
}

ShardPlan plan_shards(const CheckpointContents& c, const CheckpointLayout& layout) {
  FMSIM_CHECK(layout.ranks >= 1 && layout.nodes >= 1 && layout.data_parallel >= 1, "layout sizes must be positive");
  FMSIM_CHECK(layout.ranks % layout.nodes == 0, "ranks must fill whole nodes");
  FMSIM_CHECK(layout.ranks % layout.data_parallel == 0, "data parallel must divide ranks");
  const double ranks = layout.ranks;
  const double mp = layout.model_parallel();
  const int gpn = layout.gpus_per_node();

  // Bytes written by a data-parallel-rank-0 rank (first) and by any other rank (second).
  double lead = 0.0;
  double other = 0.0;
  double per_rank_load = 0.0;
  int writers = 0;
  switch (layout.sharding) {
    case Sharding::None:
      lead = c.total().value() / mp;
      other = 0.0;
      writers = layout.model_parallel();
      per_rank_load = c.total().value() / mp;
      break;
    case Sharding::DistributedOptimizer:
    case Sharding::Zero2:
      lead = c.weights().value() / mp + c.optimizer().value() / ranks;
      other = c.optimizer().value() / ranks;
      writers = other > 0.0 ? layout.ranks : layout.model_parallel();
      per_rank_load = c.weights().value() / mp + c.optimizer().value() / ranks;
      break;
    case Sharding::Zero3:
      lead = c.total().value() / ranks;
      other = lead;
      writers = layout.ranks;
      per_rank_load = lead;
      break;
  }
  if (layout.data_parallel == 1) other = lead;

  // Rank r has data-parallel index (r / tp) % dp; count the lead ranks (index 0) on the worst node.
  const int tp = std::max(1, layout.tensor_parallel);
  int leads_on_node = 0;
  for (int node = 0; node < layout.nodes; ++node) {
    int leads = 0;
    for (int r = node * gpn; r < (node + 1) * gpn; ++r) leads += ((r / tp) % layout.data_parallel) == 0 ? 1 : 0;
    leads_on_node = std::max(leads_on_node, leads);
    if (leads_on_node == gpn) break;
  }
  ShardPlan plan;
  plan.total = c.total();
  plan.writers = writers;
  plan.max_writer_bytes = core::Bytes(lead);
  plan.max_node_bytes = core::Bytes(leads_on_node * lead + (gpn - leads_on_node) * other);
  plan.max_rank_load = core::Bytes(per_rank_load);
  plan.max_node_load = core::Bytes(per_rank_load * gpn);
  plan.load_total = core::Bytes(per_rank_load * ranks);
  return plan;
}

CheckpointEstimate estimate_checkpoint(const CheckpointContents& contents, const CheckpointLayout& layout,
                                       const TierPerformance& tier, const CheckpointEngine& engine,
                                       core::BytesPerSecond node_network, int keep) {
  CheckpointEstimate e;
  e.plan = plan_shards(contents, layout);
  const ShardPlan& p = e.plan;

  // Synchronous saves and all loads go through pageable host memory; async saves stage in pinned.
  const core::BytesPerSecond pageable =
      engine.pageable_copy.value() > 0.0 ? engine.pageable_copy : engine.device_to_host;
  e.staging_copy = divide(p.max_writer_bytes, engine.device_to_host);
  e.pinned_restore = divide(p.max_rank_load, engine.device_to_host);

  IoTime& s = e.save;
  s.device_copy = engine.asynchronous ? e.staging_copy : divide(p.max_writer_bytes, pageable);
  s.writer_stream = divide(p.max_writer_bytes, engine.writer_throughput);
  if (tier.remote) s.node_network = divide(p.max_node_bytes, node_network);
  s.node_tier = divide(p.max_node_bytes, tier.per_node_write);
  s.tier_bandwidth = divide(p.total, tier.aggregate_write);
  if (tier.write_requests_per_s > 0.0 && tier.request_size.value() > 0.0) {
    // Every writer's shard is cut into whole parts.
    const double parts_per_writer = std::ceil(p.max_writer_bytes / tier.request_size);
    s.tier_requests = core::Seconds(parts_per_writer * p.writers / tier.write_requests_per_s);
  }
  s.latency = tier.latency;
  finish(s);

  IoTime& l = e.load;
  l.device_copy = divide(p.max_rank_load, pageable);
  l.writer_stream = divide(p.max_rank_load, engine.reader_throughput);
  if (tier.remote) l.node_network = divide(p.max_node_load, node_network);
  l.node_tier = divide(p.max_node_load, tier.per_node_read);
  l.tier_bandwidth = divide(p.load_total, tier.aggregate_read);
  if (tier.read_requests_per_s > 0.0 && tier.request_size.value() > 0.0) {
    const double parts_per_rank = std::ceil(p.max_rank_load / tier.request_size);
    l.tier_requests = core::Seconds(parts_per_rank * layout.ranks / tier.read_requests_per_s);
  }
  l.latency = tier.latency;
  finish(l);

  e.persist = s.total;
  e.blocking = engine.asynchronous ? e.staging_copy : s.total;
  e.retained = p.total * static_cast<double>(std::max(1, keep));
  e.fits = tier.capacity.value() <= 0.0 || e.retained <= tier.capacity;
  return e;
}

core::Seconds peer_transfer_time(core::Bytes node_bytes, int copies, core::BytesPerSecond node_network) {
  if (copies <= 0) return core::Seconds(0.0);
  return divide(node_bytes * static_cast<double>(copies), node_network);
}

}  // namespace fmsim::storage
