// NCCL-style alpha-beta costs per algorithm and protocol, and the selection of the fastest.
#include "collectives/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fmsim::collectives {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGB = 1e9;
constexpr double kUs = 1e-6;

int log2i(long long v) {
  int l = -1;
  while (v > 0) {
    v >>= 1;
    ++l;
  }
  return l;
}

/// What the cost formulas need about the group on this topology, in SI units.
struct Context {
  const Calibration& cal;
  const FamilyTuning& fam;
  const topology::Topology& topo;
  const topology::GroupShape& shape;
  int n = 1;               // ranks
  int domains = 1;         // NVLink domains crossed (NCCL's nNodes; an NVL72 rack counts as one)
  int local = 1;           // ranks per domain (NCCL's ppn)
  std::size_t bucket = 0;  // NCCL node bucket: 1, 2, 3+ domains
  bool nvlink = false;
  double nvl = 0.0;     // NCCL's NVLink bandwidth of one GPU, bytes/s
  double nic = 0.0;     // achievable NIC bandwidth of one GPU's rail, bytes/s
  double net = 0.0;     // achievable egress of the group's ranks in one domain, bytes/s
  double l_msg = 0.0;   // fabric latency per LL/LL128 hop, s
  double l_bulk = 0.0;  // fabric latency as NCCL charges it (Simple pays it twice), s
  double net_overhead = 0.0;
  double ll_max = 0.0;
  bool ll128 = true;

  Context(const topology::Topology& t, const Calibration& c, const topology::GroupShape& g)
      : cal(c), fam(c.family(t.sm_version)), topo(t), shape(g) {
    n = g.size;
    domains = g.domains;
    local = g.max_per_domain;
    bucket = static_cast<std::size_t>(std::min(domains, 3) - 1);
    nvlink = t.domain_gpus > 1 && t.nvlink_links > 0;
    nvl = nvlink ? t.nvlink_links * fam.nvlink_link_bandwidth * kGB : c.pci_bandwidth * kGB;
    nic = t.nic_bandwidth_per_gpu().value() * t.net_efficiency;
    net = local * nic;
    if (g.leaves > 1) net /= t.oversubscription;
    l_msg = t.message_latency.value();
    l_bulk = t.net_latency.value();
    const bool amd = t.cpu_vendor == hardware::CpuVendor::Amd;
    net_overhead = (amd ? c.net_overhead_amd_us : c.net_overhead_intel_us) * kUs;
    if (domains == 1) {
      ll_max = fam.ll_max_bandwidth * kGB;
    } else {
      ll_max = (amd ? c.ll_max_bandwidth_amd : c.ll_max_bandwidth_intel)[bucket] * kGB;
    }
    ll128 = nvlink || domains == 1;
  }

  [[nodiscard]] bool crosses_network() const { return domains > 1; }
  [[nodiscard]] bool network_missing() const { return crosses_network() && net <= 0.0; }
  /// Per intra-domain hop latency of `lat` for protocol index `p`, seconds.
  [[nodiscard]] double intra(const AlgorithmLatency& lat, std::size_t p) const {
    return (nvlink ? lat.nvlink[p] : lat.pci[p]) * kUs;
  }
  /// Per inter-domain hop latency: NCCL's hardware term plus the fabric latency, which Simple
  /// pays twice (send and flush). With one rank per domain NCCL charges the tree's network term.
  [[nodiscard]] double inter(const AlgorithmLatency& lat, std::size_t p) const {
    const double hw = (local == 1 ? cal.tree.network[p] : lat.network[p]) * kUs;
    return hw + (p == 2 ? 2.0 * l_bulk : l_msg);
  }
  /// Channels NCCL would open: enough for the bandwidth, and across domains two per NIC the
  /// group's ranks own in a node (NCCL duplicates each ring per NIC; p4d needs 8 for 4 NICs).
  [[nodiscard]] int ring_channels(double bus) const {
    int ch = static_cast<int>(std::ceil(bus / (fam.ring_channel_bandwidth * kGB)));
    if (crosses_network()) ch = std::max(ch, 2 * shape.nics_per_node);
    return std::clamp(ch, 2, cal.max_channels);
  }
};

struct Candidate {
  Algorithm algorithm;
  Protocol protocol;
  double latency;  // s
  double algbw;    // bytes/s
  int channels;
};

CollectiveCost to_cost(const Candidate& c, Op op, int n, double bytes) {
  CollectiveCost out;
  out.algorithm = c.algorithm;
  out.protocol = c.protocol;
  out.channels = c.channels;
  const double t = c.latency + (c.algbw > 0.0 ? bytes / c.algbw : kInf);
  out.time = core::Seconds(t);
  out.latency = core::Seconds(c.latency);
  const double alg = t > 0.0 ? bytes / t : 0.0;
  out.algbw = core::BytesPerSecond(alg);
  out.busbw = core::BytesPerSecond(alg * bus_factor(op, n));
  out.feasible = std::isfinite(t);
  return out;
}

constexpr Protocol kProtocols[3] = {Protocol::LL, Protocol::LL128, Protocol::Simple};

template <class Sink>
void ring(const Context& x, Op op, double bytes, Sink&& sink) {
  if (x.network_missing()) return;
  const int n = x.n;
  const int nsteps = op == Op::AllReduce ? 2 * (n - 1) : (op == Op::AllGather || op == Op::ReduceScatter) ? n - 1 : n;
  const double intra_bw = x.local > 1 ? x.nvl * x.fam.ring_efficiency : kInf;
  const double link = x.crosses_network() ? std::min(intra_bw, x.net) : intra_bw;
  const int ch = x.ring_channels(link);
  const double ratio = static_cast<double>(n) / nsteps;
  const int inter_steps = !x.crosses_network() ? 0 : op == Op::AllReduce ? 2 * (x.domains - 1) : x.domains - 1;
  for (std::size_t p = 0; p < 3; ++p) {
    if (p == 1 && !x.ll128) continue;
    double bus = link;
    if (p == 0) bus = std::min(link * x.cal.ring_ll_factor, x.ll_max);
    if (p == 1) bus = std::min(link * x.cal.ring_ll128_factor, ch * x.fam.ring_ll128_per_channel[x.bucket] * kGB);
    double lat = x.cal.ring.base[p] * kUs;
    double intra = x.intra(x.cal.ring, p);
    if (x.crosses_network()) intra = std::max(intra, x.net_overhead * (p == 2 ? 3.0 : 1.0));
    const double inter = x.inter(x.cal.ring, p);
    if (op == Op::Broadcast || op == Op::Reduce) {
      lat += (n - x.domains) * intra + (x.domains - 1) * inter;
    } else {
      lat += (nsteps - inter_steps) * intra + inter_steps * inter;
      if (p == 2 && x.crosses_network() && op == Op::AllReduce && bytes / (ch * n) >= 64.0) {
        lat *= x.cal.ring_plateau_factor;
      }
    }
    sink(Candidate{Algorithm::Ring, kProtocols[p], lat, bus * ratio, ch});
  }
}

template <class Sink>
void tree(const Context& x, double bytes, Sink&& sink) {
  if (x.network_missing()) return;
  const double chain = x.local > 1 ? x.nvl : kInf;
  double raw = chain;
  if (x.crosses_network()) raw = std::min(chain, x.domains == 2 ? 2.0 * x.net : x.net);
  const int ch = x.ring_channels(std::min(x.nvl, x.crosses_network() ? x.net : kInf));
  const double simple = std::min(raw * x.cal.tree_factor, ch * x.fam.tree_per_channel[x.bucket] * kGB);
  const int log_size = log2i(static_cast<long long>(bytes) >> 6);
  const int tree_hops = log2i(x.domains);
  for (std::size_t p = 0; p < 3; ++p) {
    if (p == 1 && !x.ll128) continue;
    double bus = simple;
    if (p == 0) bus = std::min(simple * x.cal.tree_ll_factor, x.ll_max);
    if (p == 1) {
      const double f = x.domains == 1 ? x.cal.tree_ll128_factor_one_node : x.cal.tree_ll128_factor_multi_node;
      bus = std::min(simple * f, ch * x.fam.tree_ll128_per_channel[x.bucket] * kGB);
    }
    double alg = bus * 0.5;
    if (log_size >= 0 && log_size < 24) alg *= x.cal.tree_correction[p][static_cast<std::size_t>(log_size)];
    const double lat =
        x.cal.tree.base[p] * kUs + 2.0 * ((x.local - 1) * x.intra(x.cal.tree, p) + tree_hops * x.inter(x.cal.tree, p));
    sink(Candidate{Algorithm::Tree, kProtocols[p], lat, alg, ch});
  }
}

/// NVLS inside one domain of `local` ranks: channels, and the per-channel bandwidth after
/// NCCL's efficiency and channel-overlap factors (bytes/s).
struct NvlsGraph {
  int channels = 0;
  double per_channel = 0.0;
};

NvlsGraph nvls_graph(const Context& x) {
  NvlsGraph g;
  g.channels = std::min(x.local, x.fam.nvls_max_channels);
  if (g.channels < 2 || x.fam.channel_speeds.empty()) return g;
  const double budget = x.cal.nvls_channel_budget * x.nvl / kGB;
  double speed = x.fam.channel_speeds.back();
  for (double s : x.fam.channel_speeds) {
    if (g.channels * s <= budget) {
      speed = s;
      break;
    }
  }
  g.per_channel = speed * kGB * x.fam.nvls_efficiency * (g.channels - 1) / g.channels;
  return g;
}

double nvls_latency(const Context& x, const AlgorithmLatency& lat) {
  // A multi-node NVLink domain (NVL72) synchronises its NVSwitch trays at every chunk.
  const int nodes_per_domain = std::max(1, x.shape.nodes / std::max(1, x.domains));
  return lat.nvlink[2] * kUs + x.cal.mnnvl_nvls_latency_per_node_us * kUs * (nodes_per_domain - 1);
}

template <class Sink>
void nvls(const Context& x, Op op, Sink&& sink) {
  if (!x.topo.nvls || x.crosses_network() || x.local < 2 || x.fam.nvls_efficiency <= 0.0) return;
  const NvlsGraph g = nvls_graph(x);
  if (g.channels < 2) return;
  double alg = 0.0;
  if (op == Op::AllReduce) {
    alg = 2.0 * g.channels * g.per_channel * x.n / (2.0 * (x.n - 1));
  } else {
    alg = g.channels * g.per_channel * (x.local - 1) / x.local;
  }
  sink(Candidate{Algorithm::Nvls, Protocol::Simple, x.cal.nvls.base[2] * kUs + nvls_latency(x, x.cal.nvls), alg,
                 g.channels});
}

template <class Sink>
void nvls_tree(const Context& x, Sink&& sink) {
  if (!x.topo.nvls || !x.crosses_network() || x.local < 2 || x.fam.nvls_efficiency <= 0.0) return;
  if (x.network_missing()) return;
  const NvlsGraph g = nvls_graph(x);
  if (g.channels < 2) return;
  const double intra = 2.0 * g.channels * g.per_channel * x.local / (2.0 * (x.local - 1));
  const double inter = x.domains == 2 ? x.net : x.net / 2.0;
  const double lat = x.cal.nvls_tree.base[2] * kUs + nvls_latency(x, x.cal.nvls_tree) +
                     2.0 * log2i(x.domains) * x.inter(x.cal.nvls_tree, 2);
  sink(Candidate{Algorithm::NvlsTree, Protocol::Simple, lat, std::min(intra, inter), g.channels});
}

template <class Sink>
void pat(const Context& x, Sink&& sink) {
  if (x.local != 1 || !x.crosses_network() || x.network_missing()) return;
  const double alg = x.net * x.cal.pat_factor;
  const double lat = x.cal.pat.base[2] * kUs +
                     log2i(x.domains) * x.inter(x.cal.pat, 2) / x.cal.pat_log_latency_divisor +
                     x.n * x.cal.pat_per_rank_latency_us * kUs;
  sink(Candidate{Algorithm::Pat, Protocol::Simple, lat, alg, x.ring_channels(x.net)});
}

template <class Sink>
void hierarchical(const Context& x, Op op, double bytes, Sink&& sink) {
  if (!x.crosses_network() || x.network_missing()) return;
  if (op != Op::AllReduce && op != Op::AllGather && op != Op::ReduceScatter) return;
  // Intra-domain phase: the better of NVLS and a Simple ring over the `local` ranks of a domain.
  double intra_alg = kInf;
  double intra_lat = 0.0;
  if (x.local > 1) {
    topology::GroupShape inner = x.shape;
    inner.size = x.local;
    inner.domains = 1;
    inner.leaves = 1;
    inner.nodes = std::max(1, x.shape.nodes / x.domains);
    inner.min_per_domain = x.local;
    const Context xi(x.topo, x.cal, inner);
    double best = kInf;
    auto keep = [&](const Candidate& c) {
      if (c.protocol != Protocol::Simple) return;
      const double t = c.latency + bytes / c.algbw;
      if (t < best) {
        best = t;
        intra_alg = c.algbw;
        intra_lat = c.latency;
      }
    };
    ring(xi, op, bytes, keep);
    nvls(xi, op, keep);
  }
  // Inter-domain phase: one ring per rail over the domains, each carrying bytes / local.
  const int d = x.domains;
  const double steps = op == Op::AllReduce ? 2.0 * (d - 1) : d - 1.0;
  const double inter_alg = x.net * d / steps;
  const double inter_lat = x.cal.ring.base[2] * kUs + steps * x.inter(x.cal.ring, 2);
  sink(Candidate{Algorithm::Hierarchical, Protocol::Simple, intra_lat + inter_lat, std::min(intra_alg, inter_alg),
                 x.ring_channels(x.net)});
}

/// Send/recv and all-to-all: direct point-to-point transfers.
template <class Sink>
void direct(const Context& x, Op op, Sink&& sink) {
  if (x.network_missing()) return;
  const double nvl_p2p =
      x.nvlink ? x.topo.nvlink_bandwidth.value() * x.cal.p2p_nvlink_efficiency : x.cal.pci_bandwidth * kGB;
  const double rail =
      p2p_nic_bandwidth(x.topo, x.cal) * x.topo.net_efficiency / (x.shape.leaves > 1 ? x.topo.oversubscription : 1.0);
  const double base = x.cal.p2p_base_latency_us * kUs;
  if (op == Op::SendRecv) {
    if (!x.crosses_network()) {
      sink(Candidate{Algorithm::Direct, Protocol::Simple, base + x.cal.ring.nvlink[2] * kUs, nvl_p2p, 1});
      return;
    }
    sink(Candidate{Algorithm::Direct, Protocol::LL, base + x.cal.ring.network[0] * kUs + x.l_msg,
                   rail * x.cal.ring_ll_factor, 1});
    sink(Candidate{Algorithm::Direct, Protocol::Simple, base + x.cal.ring.network[2] * kUs + 2.0 * x.l_bulk, rail, 1});
    return;
  }
  // All-to-all: each rank sends bytes/n to every rank; NVLink and NIC traffic flow concurrently.
  const double n = x.n;
  const double intra_share = (x.local - 1) / n;
  const double inter_share = (n - x.local) / n;
  double seconds_per_byte = 0.0;
  if (intra_share > 0.0) seconds_per_byte = std::max(seconds_per_byte, intra_share / nvl_p2p);
  if (inter_share > 0.0) seconds_per_byte = std::max(seconds_per_byte, inter_share / rail);
  double lat = base + (n - 1) * x.cal.p2p_per_peer_latency_us * kUs;
  if (x.crosses_network()) lat += x.cal.ring.network[2] * kUs + 2.0 * x.l_bulk;
  sink(Candidate{Algorithm::Direct, Protocol::Simple, lat, seconds_per_byte > 0.0 ? 1.0 / seconds_per_byte : kInf,
                 x.cal.max_channels});
}

template <class Sink>
void enumerate(const Context& x, Op op, double bytes, Sink&& sink) {
  switch (op) {
    case Op::AllReduce:
      ring(x, op, bytes, sink);
      tree(x, bytes, sink);
      nvls(x, op, sink);
      nvls_tree(x, sink);
      hierarchical(x, op, bytes, sink);
      break;
    case Op::AllGather:
    case Op::ReduceScatter:
      ring(x, op, bytes, sink);
      nvls(x, op, sink);
      pat(x, sink);
      hierarchical(x, op, bytes, sink);
      break;
    case Op::Broadcast:
    case Op::Reduce: ring(x, op, bytes, sink); break;
    case Op::AllToAll:
    case Op::SendRecv: direct(x, op, sink); break;
  }
}

}  // namespace

double p2p_nic_bandwidth(const topology::Topology& topology, const Calibration& calibration) {
  const double per_gpu = topology.nic_bandwidth_per_gpu().value();
  if (calibration.p2p_efa_multi_rail && topology.fabric_kind == hardware::FabricKind::Efa) return per_gpu;
  return std::min(per_gpu, calibration.p2p_max_nics_per_gpu * topology.nic_bandwidth.value());
}

CollectiveCost estimate(const topology::Topology& topology, const Calibration& calibration,
                        const topology::GroupShape& group, Op op, core::Bytes bytes, const Options& options) {
  if (group.size <= 1) {
    CollectiveCost none;
    none.algorithm = options.algorithm == Algorithm::Auto ? Algorithm::Ring : options.algorithm;
    return none;
  }
  const Context x(topology, calibration, group);
  const double b = std::max(bytes.value(), 0.0);
  bool found = false;
  Candidate best{};
  double best_time = kInf;
  enumerate(x, op, b, [&](const Candidate& c) {
    if (options.algorithm == Algorithm::Auto ? c.algorithm == Algorithm::Hierarchical
                                             : c.algorithm != options.algorithm) {
      return;
    }
    if (options.protocol != Protocol::Auto && c.protocol != options.protocol) return;
    const double t = c.latency + b / c.algbw;
    if (!found || t < best_time) {
      found = true;
      best = c;
      best_time = t;
    }
  });
  if (!found) {
    CollectiveCost none;
    none.feasible = false;
    none.time = core::Seconds(kInf);
    none.algorithm = options.algorithm;
    none.protocol = options.protocol;
    return none;
  }
  return to_cost(best, op, group.size, b);
}

CollectiveCost estimate(const topology::Topology& topology, const Calibration& calibration,
                        const topology::Group& group, Op op, core::Bytes bytes, const Options& options) {
  return estimate(topology, calibration, topology::classify(topology, group), op, bytes, options);
}

std::vector<CollectiveCost> candidates(const topology::Topology& topology, const Calibration& calibration,
                                       const topology::GroupShape& group, Op op, core::Bytes bytes) {
  std::vector<CollectiveCost> out;
  if (group.size <= 1) return out;
  const Context x(topology, calibration, group);
  const double b = std::max(bytes.value(), 0.0);
  enumerate(x, op, b, [&](const Candidate& c) { out.push_back(to_cost(c, op, group.size, b)); });
  return out;
}

}  // namespace fmsim::collectives
