// Flow-level network model: max-min fair bandwidth sharing (progressive filling) and an
// event-driven simulation of flows with sizes and start times over shared links.
//
// Method: progressive filling (water-filling) as in Bertsekas & Gallager, "Data Networks", 2nd ed.,
// §6.5.2, the bandwidth-sharing model SimGrid's LMM solver implements (Velho et al., "On the
// validity of flow-level TCP network models for grid and cloud simulations", TOMACS 2013).
// Every active flow gets the same rate (times its weight) until a link it crosses saturates; the
// flows of that link are frozen and the others keep growing.
//
// Assumptions: fluid flows, no per-packet effects, rates re-solved only when a flow starts or
// ends; links are unidirectional with a fixed capacity. Domain: bulk transfers (>= 64 KiB),
// where latency is small against transfer time; the collective model adds latencies itself.
#pragma once

#include <span>
#include <vector>

#include "core/units.hpp"

namespace fmsim::network {

/// A set of flows in compressed form: flow f crosses links[offsets[f] .. offsets[f+1]).
struct FlowSet {
  std::vector<int> offsets{0};
  std::vector<int> links;
  std::vector<double> weights;  ///< relative share of each flow (1 = equal share)

  [[nodiscard]] int size() const { return static_cast<int>(offsets.size()) - 1; }
  /// Adds a flow over `route` with `weight`; returns its index.
  int add(std::span<const int> route, double weight = 1.0);
  void reserve(std::size_t flows, std::size_t total_links);
};

/// Max-min fair rates (bytes/s) of every flow of `flows` on links of `capacity` (bytes/s).
/// A flow crossing no link is unconstrained and gets +infinity. Capacity is conserved: on every
/// link the rates of its flows sum to at most its capacity, and every flow crosses a saturated link.
std::vector<double> max_min_rates(std::span<const double> capacity, const FlowSet& flows);

/// One transfer of the event-driven simulation.
struct Flow {
  std::vector<int> route;
  core::Bytes size{};
  core::Seconds start{};
  double weight = 1.0;
};

/// Flows in compressed form with sizes and start times, for large simulations (all-to-all).
struct TimedFlowSet {
  FlowSet flows;
  std::vector<double> bytes;
  std::vector<double> start;  ///< seconds

  int add(std::span<const int> route, core::Bytes size, core::Seconds start_time, double weight = 1.0);
};

/// Completion time (seconds) of every flow when all share the links max-min fairly, rates being
/// re-solved whenever a flow starts or finishes. Zero-size flows finish at their start.
std::vector<double> simulate_flows(std::span<const double> capacity, const TimedFlowSet& flows);
std::vector<core::Seconds> simulate_flows(std::span<const double> capacity, const std::vector<Flow>& flows);

}  // namespace fmsim::network
