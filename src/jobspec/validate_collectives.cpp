// validation/collectives.csv rows predicted with the collectives model.
#include "jobspec/validate_collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "collectives/cost_model.hpp"
#include "config/cluster_loader.hpp"
#include "core/error.hpp"
#include "topology/group.hpp"

namespace fmsim::jobspec {
namespace {

// Rows at or above this size are "large-message" rows; smaller ones and latency rows are "small".
constexpr double kLargeMessageBytes = 64.0 * 1024 * 1024;
// A row that says only "large" is predicted at the largest size its sources use.
constexpr double kLargeDefaultBytes = 16.0 * 1024 * 1024 * 1024;

}  // namespace

CollectiveRowResult predict_collective_row(const config::CollectiveMeasurement& m, const hardware::Catalog& catalog,
                                           const collectives::Calibration& cal) {
  CollectiveRowResult r;
  r.m = m;
  const auto op = collectives::op_from_name(m.collective);
  if (!op) {
    r.reason = fmt::format("unknown collective '{}'", m.collective);
    return r;
  }
  collectives::Options options;
  if (!m.algorithm.empty()) {
    const auto a = collectives::algorithm_from_name(m.algorithm);
    if (!a) {
      r.reason = fmt::format("unknown algorithm '{}'", m.algorithm);
      return r;
    }
    options.algorithm = *a;
  }
  if (!m.busbw_gbps && !m.time_us) {
    r.reason = "row gives neither busbw_GBps nor time_us";
    return r;
  }
  hardware::ClusterSpec cluster;
  try {
    cluster = config::cluster_for_gpus(catalog, m.instance_type, m.gpus, "instance_type");
  } catch (const core::InputError& e) {
    r.reason = e.what();
    return r;
  }
  const topology::Topology topo = topology::build_topology(cluster);
  if (topo.gpus != m.gpus || topo.nodes != m.nodes) {
    r.reason = fmt::format("{} GPUs on {} nodes do not match whole units of {} ({} GPUs, {} nodes)", m.gpus, m.nodes,
                           m.instance_type, topo.gpus, topo.nodes);
    return r;
  }
  r.bytes = m.bytes ? *m.bytes : kLargeDefaultBytes;
  const collectives::CollectiveCost c =
      collectives::estimate(topo, cal, topology::Group::all(topo), *op, core::Bytes(r.bytes), options);
  if (!c.feasible) {
    r.reason = fmt::format("algorithm {} cannot run on this group", m.algorithm);
    return r;
  }
  r.predicted = true;
  r.algorithm = collectives::algorithm_name(c.algorithm);
  r.protocol = collectives::protocol_name(c.protocol);
  if (m.time_us) {
    r.metric = "time_us";
    r.measured = *m.time_us;
    r.prediction = c.time.value() * 1e6;
  } else {
    r.metric = "busbw_GBps";
    r.measured = *m.busbw_gbps;
    r.prediction = c.busbw.value() / 1e9;
  }
  r.large = !m.time_us && r.bytes >= kLargeMessageBytes;
  r.band_pct = r.large ? kCollectiveLargeTargetPct : kCollectiveSmallTargetPct;
  r.error_pct = 100.0 * (r.prediction - r.measured) / r.measured;
  return r;
}

CollectiveSummary summarize_collectives(const std::vector<CollectiveRowResult>& rows) {
  CollectiveSummary s;
  std::vector<double> errs;
  for (const CollectiveRowResult& r : rows) {
    ++s.rows;
    if (!r.predicted) continue;
    ++s.predicted;
    const double e = std::abs(r.error_pct);
    errs.push_back(e);
    s.max = std::max(s.max, e);
    const bool within = e <= r.band_pct;
    if (r.large) {
      ++s.large_rows;
      s.large_within += within ? 1 : 0;
    } else {
      ++s.small_rows;
      s.small_within += within ? 1 : 0;
    }
  }
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    const std::size_t k = errs.size();
    s.median = k % 2 == 1 ? errs[k / 2] : 0.5 * (errs[k / 2 - 1] + errs[k / 2]);
  }
  return s;
}

}  // namespace fmsim::jobspec
