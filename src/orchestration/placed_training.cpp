#include "orchestration/placed_training.hpp"

#include <algorithm>
#include <bit>
#include <tuple>

#include "collectives/comm_cost.hpp"
#include "collectives/cost_model.hpp"
#include "core/error.hpp"
#include "topology/group.hpp"

namespace fmsim::orchestration {

namespace {

/// (NVLink domain, leaf switch) of every node of the allocation in order, each relabelled by
/// first appearance: [d0, l0, d1, l1, ...]. A node of an HGX instance is its own domain.
std::vector<int> placement_key(const ClusterLayout& layout, const std::vector<int>& nodes) {
  std::vector<int> key;
  key.reserve(2 * nodes.size());
  std::vector<std::pair<int, int>> domains, leaves;  // original id -> label, in order seen
  auto label = [](std::vector<std::pair<int, int>>& seen, int id) {
    for (const auto& [orig, lab] : seen)
      if (orig == id) return lab;
    seen.emplace_back(id, static_cast<int>(seen.size()));
    return static_cast<int>(seen.size()) - 1;
  };
  for (int node : nodes) {
    const int block = layout.node_block.empty() ? -1 : layout.node_block[static_cast<std::size_t>(node)];
    const int leaf = layout.node_leaf.empty() ? -1 : layout.node_leaf[static_cast<std::size_t>(node)];
    key.push_back(label(domains, block >= 0 ? block : -2 - node));
    key.push_back(label(leaves, leaf));
  }
  return key;
}

/// Shapes of every instance of a (size, stride) group of a job of `positions` nodes with
/// `gpn` ranks each, under the placement `key`; distinct shapes only.
std::vector<topology::GroupShape> instance_shapes(const std::vector<int>& key, int gpn, const topology::Topology& t,
                                                  collectives::CommGroup group) {
  const int positions = static_cast<int>(key.size() / 2);
  const int ranks = positions * gpn;
  const int span = std::max(1, group.size * group.stride);
  std::vector<topology::GroupShape> out;
  std::vector<int> per_domain(static_cast<std::size_t>(positions), 0), per_leaf(static_cast<std::size_t>(positions), 0);
  for (int block = 0; block * span < ranks; ++block)
    for (int off = 0; off < group.stride; ++off) {
      topology::GroupShape s;
      std::fill(per_domain.begin(), per_domain.end(), 0);
      std::fill(per_leaf.begin(), per_leaf.end(), 0);
      int count = 0, last_node = -1, on_node = 0;
      s.nodes = 0;
      s.max_per_node = 0;
      for (int i = 0; i < group.size; ++i) {
        const int r = block * span + off + i * group.stride;
        if (r >= ranks) break;
        ++count;
        const int node = r / gpn;
        if (node != last_node) {
          ++s.nodes;
          on_node = 0;
          last_node = node;
        }
        s.max_per_node = std::max(s.max_per_node, ++on_node);
        ++per_domain[static_cast<std::size_t>(key[2 * static_cast<std::size_t>(node)])];
        ++per_leaf[static_cast<std::size_t>(key[2 * static_cast<std::size_t>(node) + 1])];
      }
      if (count == 0) continue;
      s.size = count;
      s.domains = s.leaves = 0;
      s.max_per_domain = 0;
      s.min_per_domain = count;
      for (int c : per_domain)
        if (c > 0) {
          ++s.domains;
          s.max_per_domain = std::max(s.max_per_domain, c);
          s.min_per_domain = std::min(s.min_per_domain, c);
        }
      for (int c : per_leaf) s.leaves += c > 0;
      s.leaves = std::max(1, s.leaves);
      s.nics_per_node = t.nics_per_node <= 0 ? 0 : std::min(t.nics_per_node, s.max_per_node * t.nics_per_gpu());
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  return out;
}

}  // namespace

PlacedStepModel::PlacedStepModel(const ClusterLayout& layout, const hardware::ClusterSpec& cluster)
    : layout_(layout), topology_(topology::build_topology(cluster)) {}

int PlacedStepModel::add_job(const training::TrainingJob& job, const training::Calibration& calibration) {
  const int gpn = std::max(1, layout_.gpus_per_node);
  FMSIM_CHECK(job.job_gpus() % gpn == 0, "a placed training job uses whole nodes");
  jobs_.push_back({job, calibration, job.job_gpus() / gpn});
  return static_cast<int>(jobs_.size()) - 1;
}

double PlacedStepModel::ideal_step_time(int handle) {
  const int n = jobs_[static_cast<std::size_t>(handle)].nodes;
  std::vector<int> first(static_cast<std::size_t>(std::min(n, layout_.nodes())));
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = static_cast<int>(i);
  return step_time(handle, first);
}

double PlacedStepModel::step_time(int handle, const std::vector<int>& nodes) {
  ++lookups_;
  auto key = placement_key(layout_, nodes);
  const auto memo_key = std::make_pair(handle, key);
  if (const auto it = memo_.find(memo_key); it != memo_.end()) return it->second;
  ++calls_;
  const auto& j = jobs_[static_cast<std::size_t>(handle)];
  const int gpn = std::max(1, layout_.gpus_per_node);
  const collectives::Calibration coll;
  // Per (op, size, stride, bytes): the slowest instance of the group decides.
  std::map<std::tuple<int, int, int, std::uint64_t>, double> costs;
  std::map<std::pair<int, int>, std::vector<topology::GroupShape>> shapes;
  const collectives::CommCostFn comm = [&](collectives::Op op, collectives::CommGroup group, core::Bytes bytes) {
    const auto k =
        std::make_tuple(static_cast<int>(op), group.size, group.stride, std::bit_cast<std::uint64_t>(bytes.value()));
    if (const auto it = costs.find(k); it != costs.end()) return core::Seconds(it->second);
    auto& list = shapes[{group.size, group.stride}];
    if (list.empty()) list = instance_shapes(key, gpn, topology_, group);
    double worst = 0;
    for (const auto& s : list) {
      const auto c = collectives::estimate(topology_, coll, s, op, bytes);
      if (c.feasible) worst = std::max(worst, c.time.value());
    }
    costs.emplace(k, worst);
    return core::Seconds(worst);
  };
  const auto r = training::estimate_step(j.job, j.calibration, comm);
  const double t = r.feasible ? r.step_time.value() : 0.0;
  memo_.emplace(memo_key, t);
  return t;
}

}  // namespace fmsim::orchestration
