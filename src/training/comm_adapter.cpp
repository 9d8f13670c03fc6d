// Temporary alpha-beta communication model (replaced by the collectives library binding).
#include "training/comm_adapter.hpp"

#include <algorithm>

namespace fmsim::training {

CommCostFn make_comm_cost(const hardware::ClusterSpec& cluster) {
  return [cluster](CommOp op, CommGroup g, core::Bytes bytes, int concurrent) {
    const int gpn = cluster.gpus_per_node();
    const int domain = cluster.nvlink_domain_gpus();
    const bool inside = static_cast<long>(g.size) * g.stride <= domain;
    const double nvl = cluster.gpu.nvlink_per_direction().value() * 0.8;
    const double nic = cluster.system.network_bandwidth.value() * cluster.fabric.efficiency / std::max(1, gpn) *
                       std::min(1.0, static_cast<double>(gpn) / std::max(1, concurrent) / std::max(1, gpn));
    const double bw = inside ? nvl : std::max(1.0, nic * std::max(1, gpn) / std::max(1, concurrent));
    const double n = g.size;
    double factor = 1.0;
    switch (op) {
      case CommOp::AllReduce: factor = 2.0 * (n - 1) / n; break;
      case CommOp::AllGather:
      case CommOp::ReduceScatter:
      case CommOp::AllToAll: factor = (n - 1) / n; break;
      case CommOp::SendRecv: factor = 1.0; break;
    }
    const double latency = inside ? 10e-6 : 40e-6;
    return core::Seconds(latency + bytes.value() * factor / bw);
  };
}

}  // namespace fmsim::training
