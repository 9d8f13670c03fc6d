// One sentence on where a layout's step time goes, and whether its communication groups stay
// inside an NVLink domain or cross the scale-out network.
#pragma once

#include <string>
#include <vector>

#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "training/comm_model.hpp"
#include "training/step_model.hpp"

namespace fmsim::planner {

/// Components of StepBreakdown, in its declaration order.
enum class Component { Compute, Tp, Cp, Ep, Pp, Dp, Bubble, Optimizer, Other };

/// Short name for tables and charts: "compute", "tp comm", ..., "bubble", "optimizer", "other".
std::string_view to_string(Component c);

/// All components in breakdown order.
const std::vector<Component>& all_components();

/// Seconds of `c` in `b`.
double component_seconds(const training::StepBreakdown& b, Component c);

/// The communication group of a component under the step model's rank order (TP innermost, then
/// CP, DP, PP outermost; EP over ep ranks with stride etp). Size 1 for non-communication components.
collectives::CommGroup component_group(Component c, const parallelism::Layout& layout);

/// True when a group of `group.size` ranks at stride `group.stride` spans more GPUs than one
/// NVLink domain of the cluster (the same rule the communication model applies:
/// size * stride > domain), i.e. its traffic crosses the scale-out fabric.
bool crosses_nvlink_domain(collectives::CommGroup group, const hardware::ClusterSpec& cluster);

/// "EFA v2", "InfiniBand", or "the network" for a cluster without a fabric.
std::string network_name(const hardware::ClusterSpec& cluster);

/// "one NVL72 domain" (36 GPUs and up), else "one 8-GPU NVLink domain".
std::string domain_name(const hardware::ClusterSpec& cluster);

/// The dominant cost of a step.
struct Bottleneck {
  Component component = Component::Compute;  ///< the largest non-compute component
  double share = 0.0;                        ///< its fraction of the step time
  double compute_share = 0.0;                ///< fraction of the step in kernels (incl. recompute)
  bool crosses_network = false;              ///< its group crosses the NVLink domain (communication components)
  bool compute_bound = false;                ///< the largest non-compute share is below kComputeBoundShare
  std::string sentence;                      ///< e.g. "EP all-to-all (ep 16) crosses EFA v2: 38% of the step"
};

/// Below this share of the step, no overhead is called the bottleneck: the step is compute-bound.
inline constexpr double kComputeBoundShare = 0.10;

/// Finds the largest non-compute component of `step` and says, for communication, whether its
/// group crosses the cluster's NVLink domain. Precondition: step.step_time > 0.
Bottleneck find_bottleneck(const training::StepResult& step, const parallelism::Layout& layout,
                           const hardware::ClusterSpec& cluster);

/// A phrase naming component `c` with its group size and placement, e.g.
/// "EP all-to-all (ep 16) crosses EFA v2" or "pipeline bubble (pp 4, vp 5, 64 micro-batches)".
std::string describe_component(Component c, const parallelism::Layout& layout, std::int64_t micro_batches,
                               const hardware::ClusterSpec& cluster);

}  // namespace fmsim::planner
