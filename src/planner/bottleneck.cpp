// Bottleneck sentences from the step breakdown and the placement of communication groups.
#include "planner/bottleneck.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace fmsim::planner {

std::string_view to_string(Component c) {
  switch (c) {
    case Component::Compute: return "compute";
    case Component::Tp: return "tp comm";
    case Component::Cp: return "cp comm";
    case Component::Ep: return "ep all-to-all";
    case Component::Pp: return "pp send/recv";
    case Component::Dp: return "dp comm";
    case Component::Bubble: return "pipeline bubble";
    case Component::Optimizer: return "optimizer";
    case Component::Other: return "other";
  }
  return "?";
}

const std::vector<Component>& all_components() {
  static const std::vector<Component> kAll{Component::Compute, Component::Tp,        Component::Cp,
                                           Component::Ep,      Component::Pp,        Component::Dp,
                                           Component::Bubble,  Component::Optimizer, Component::Other};
  return kAll;
}

double component_seconds(const training::StepBreakdown& b, Component c) {
  switch (c) {
    case Component::Compute: return b.compute.value();
    case Component::Tp: return b.tp_comm.value();
    case Component::Cp: return b.cp_comm.value();
    case Component::Ep: return b.ep_comm.value();
    case Component::Pp: return b.pp_comm.value();
    case Component::Dp: return b.dp_comm.value();
    case Component::Bubble: return b.bubble.value();
    case Component::Optimizer: return b.optimizer.value();
    case Component::Other: return b.other.value();
  }
  return 0.0;
}

collectives::CommGroup component_group(Component c, const parallelism::Layout& l) {
  const auto g = training::groups_of(l);
  switch (c) {
    case Component::Tp: return g.tp;
    case Component::Cp: return g.cp;
    case Component::Ep: return g.ep;
    case Component::Pp: return g.pp;
    case Component::Dp: return l.sharding == parallelism::Sharding::Zero3 ? g.fsdp : g.dp;
    default: return {1, 1};
  }
}

bool crosses_nvlink_domain(collectives::CommGroup group, const hardware::ClusterSpec& cluster) {
  return training::domains_spanned(group, cluster.nvlink_domain_gpus()) > 1;
}

std::string network_name(const hardware::ClusterSpec& cluster) {
  switch (cluster.fabric.kind) {
    case hardware::FabricKind::Efa:
      return cluster.fabric.generation > 0 ? fmt::format("EFA v{}", cluster.fabric.generation) : "EFA";
    case hardware::FabricKind::InfiniBand: return "InfiniBand";
    case hardware::FabricKind::None: break;
  }
  return "the network";
}

std::string domain_name(const hardware::ClusterSpec& cluster) {
  const int d = cluster.system.nvlink_domain_gpus;
  if (d >= 36) return fmt::format("one NVL{} domain", d);
  return fmt::format("one {}-GPU NVLink domain", d);
}

std::string describe_component(Component c, const parallelism::Layout& l, std::int64_t micro_batches,
                               const hardware::ClusterSpec& cluster) {
  const auto where = [&](Component comm) {
    return crosses_nvlink_domain(component_group(comm, l), cluster) ? "crosses " + network_name(cluster)
                                                                    : "inside " + domain_name(cluster);
  };
  switch (c) {
    case Component::Compute: return "compute kernels (incl. recompute)";
    case Component::Tp: return fmt::format("TP all-gather/reduce-scatter (tp {}) {}", l.tp, where(c));
    case Component::Cp: return fmt::format("CP ring exchange (cp {}) {}", l.cp, where(c));
    case Component::Ep: return fmt::format("EP all-to-all (ep {}) {}", l.ep, where(c));
    case Component::Pp: return fmt::format("PP send/recv (pp {}) {}", l.pp, where(c));
    case Component::Dp: {
      const auto g = component_group(c, l);
      const std::string_view what = l.sharding == parallelism::Sharding::Zero3  ? "FSDP gather/reduce-scatter"
                                    : l.sharding == parallelism::Sharding::None ? "DP gradient all-reduce"
                                                                                : "DP reduce-scatter/all-gather";
      return fmt::format("{} (dp {}) {}", what, g.size, where(c));
    }
    case Component::Bubble:
      return l.vp > 1 ? fmt::format("pipeline bubble (pp {}, vp {}, {} micro-batches)", l.pp, l.vp, micro_batches)
                      : fmt::format("pipeline bubble (pp {}, {} micro-batches)", l.pp, micro_batches);
    case Component::Optimizer: return "optimizer step";
    case Component::Other: return "fixed per-step framework overhead";
  }
  return "?";
}

Bottleneck find_bottleneck(const training::StepResult& step, const parallelism::Layout& layout,
                           const hardware::ClusterSpec& cluster) {
  const double total = step.step_time.value();
  FMSIM_CHECK(total > 0.0 && std::isfinite(total), "bottleneck of a step without a positive step time");
  Bottleneck b;
  b.compute_share = step.breakdown.compute.value() / total;
  double largest = -1.0;
  for (Component c : all_components()) {
    if (c == Component::Compute) continue;
    const double s = component_seconds(step.breakdown, c);
    if (s > largest) {  // strict: ties keep the earlier component (deterministic)
      largest = s;
      b.component = c;
    }
  }
  b.share = largest / total;
  b.crosses_network = crosses_nvlink_domain(component_group(b.component, layout), cluster);
  b.compute_bound = b.share < kComputeBoundShare;
  const std::string what = describe_component(b.component, layout, step.micro_batches, cluster);
  if (b.compute_bound) {
    b.sentence = fmt::format("compute-bound ({:.0f}% of the step in kernels); next: {}, {:.0f}%",
                             100.0 * b.compute_share, what, 100.0 * b.share);
  } else {
    b.sentence = fmt::format("{}: {:.0f}% of the step", what, 100.0 * b.share);
  }
  return b;
}

}  // namespace fmsim::planner
