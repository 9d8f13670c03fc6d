// Input-pipeline bandwidth check (model in data_loading.hpp).
#include "storage/data_loading.hpp"

#include <algorithm>
#include <limits>

namespace fmsim::storage {

double token_id_bytes(long long vocab) { return vocab <= 65536 ? 2.0 : 4.0; }

DataLoadingCheck check_data_loading(const DataLoadingDemand& demand, const TierPerformance& tier) {
  DataLoadingCheck c;
  const int nodes = std::max(1, demand.nodes);
  c.required = core::BytesPerSecond(demand.tokens_per_s * demand.bytes_per_token * demand.read_amplification);
  c.required_per_node = c.required / static_cast<double>(nodes);
  c.delivered = tier.aggregate_read;
  c.delivered_per_node = tier.per_node_read;
  if (tier.read_requests_per_s > 0.0 && tier.request_size.value() > 0.0) {
    const core::BytesPerSecond by_requests(tier.read_requests_per_s * tier.request_size.value());
    if (c.delivered.value() <= 0.0 || by_requests < c.delivered) c.delivered = by_requests;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double aggregate = c.delivered.value() > 0.0 ? c.delivered / c.required : inf;
  const double per_node = c.delivered_per_node.value() > 0.0 ? c.delivered_per_node / c.required_per_node : inf;
  c.headroom = std::min(aggregate, per_node);
  c.limit = aggregate <= per_node ? "tier aggregate" : "per-node client";
  c.starves = c.required.value() > 0.0 && c.headroom < 1.0;
  return c;
}

}  // namespace fmsim::storage
