#include "collectives/comm_cost.hpp"

#include <bit>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "collectives/cost_model.hpp"
#include "topology/group.hpp"
#include "topology/topology.hpp"

namespace fmsim::collectives {
namespace {

struct Key {
  int op, size, stride;
  std::uint64_t bytes;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = std::hash<std::uint64_t>()(k.bytes);
    h ^= (static_cast<std::size_t>(k.op) * 0x9e3779b97f4a7c15ULL) + (static_cast<std::size_t>(k.size) << 20) +
         static_cast<std::size_t>(k.stride);
    return h;
  }
};

// Shared by every copy of the CommCostFn; the mutex makes it safe for the planner's threads.
struct State {
  topology::Topology topology;
  Calibration calibration;
  std::mutex mutex;
  std::unordered_map<Key, double, KeyHash> memo;
};

}  // namespace

CommCostFn make_comm_cost(const hardware::ClusterSpec& cluster) {
  auto state = std::make_shared<State>();
  state->topology = topology::build_topology(cluster);
  return [state](Op op, CommGroup group, core::Bytes bytes) {
    const Key key{static_cast<int>(op), group.size, group.stride, std::bit_cast<std::uint64_t>(bytes.value())};
    {
      std::lock_guard lock(state->mutex);
      if (auto it = state->memo.find(key); it != state->memo.end()) return core::Seconds(it->second);
    }
    const auto shape = topology::classify(state->topology, topology::Group::strided(0, group.size, group.stride));
    const auto cost = estimate(state->topology, state->calibration, shape, op, bytes);
    const double t = cost.feasible ? cost.time.value() : 0.0;
    std::lock_guard lock(state->mutex);
    state->memo.emplace(key, t);
    return core::Seconds(t);
  };
}

}  // namespace fmsim::collectives
