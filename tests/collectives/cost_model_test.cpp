// The collective cost model: each test states the formula or fact it checks.
#include "collectives/cost_model.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "collectives/concurrency.hpp"
#include "test_clusters.hpp"

namespace fmsim::collectives {
namespace {

using topology::Group;

const Calibration kCal{};

// NCCL's own net transport (IB/RoCE): a GPU's p2p traffic uses one NIC (the [NT-267] rule), as
// opposed to aws-ofi-nccl's multi-rail EFA devices.
Calibration one_nic_p2p() {
  Calibration c;
  c.p2p_efa_multi_rail = false;
  return c;
}

TEST(BusFactor, MatchesNcclTests) {
  // all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast 1.
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllGather, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Op::AllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Op::Broadcast, 64), 1.0);
}

TEST(Ring, AllReduceMovesTwoNMinusOneOverNOfTheData) {
  // Ring all-reduce, Simple: bandwidth term = bytes * 2(n-1)/n / link, link = NVLink links x
  // NCCL per-link bandwidth x ring efficiency (18 x 20.6 GB/s x 0.99 on H100).
  const auto t = topology::build_topology(testing::hgx_h100(1));
  const double bytes = 1e9;
  const CollectiveCost c =
      estimate(t, kCal, Group::all(t), Op::AllReduce, core::Bytes(bytes), Options{Algorithm::Ring, Protocol::Simple});
  const double link = 18 * 20.6e9 * 0.99;
  EXPECT_NEAR((c.time - c.latency).value(), bytes * 2.0 * 7 / 8 / link, 1e-12);
  // busbw equals the link bandwidth once latency is negligible.
  const CollectiveCost big =
      estimate(t, kCal, Group::all(t), Op::AllReduce, core::gib(64), Options{Algorithm::Ring, Protocol::Simple});
  EXPECT_NEAR(big.busbw.value() / link, 1.0, 0.01);
}

TEST(Ring, AllGatherMovesNMinusOneOverN) {
  // Ring all-gather of `bytes` (the gathered size): each rank receives (n-1)/n of it.
  const auto t = topology::build_topology(testing::hgx_h100(1));
  const CollectiveCost c =
      estimate(t, kCal, Group::all(t), Op::AllGather, core::Bytes(8e9), Options{Algorithm::Ring, Protocol::Simple});
  EXPECT_NEAR((c.time - c.latency).value(), 8e9 * 7 / 8 / (18 * 20.6e9 * 0.99), 1e-12);
}

TEST(Ring, BusbwNeverExceedsTheSlowestLinkCrossed) {
  // A ring crossing nodes is limited by min(NVLink, NIC egress of the domain's ranks); for a DP
  // group with one rank per node, by that rank's rail: 50 GB/s x efficiency.
  const auto t = topology::build_topology(testing::hgx_h100(8, 0.7));
  for (const Group& g : {Group::all(t), Group::strided(0, 8, 8), Group::contiguous(0, 16)}) {
    const auto s = topology::classify(t, g);
    const double slowest = std::min(18 * 20.6e9, s.max_per_domain * 50e9 * 0.7);
    for (double b : {1e3, 1e6, 1e9, 1e11}) {
      for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
        const CollectiveCost c = estimate(t, kCal, s, Op::AllReduce, core::Bytes(b), Options{Algorithm::Ring, p});
        EXPECT_LE(c.busbw.value(), slowest * (1 + 1e-9));
      }
    }
  }
}

TEST(Selection, GroupInsideOneNvlinkDomainNeverTouchesTheNic) {
  // A TP group inside an instance costs the same whatever the NICs are (even none).
  hardware::ClusterSpec fast = testing::hgx_h100(4);
  hardware::ClusterSpec none = fast;
  none.system.nics_per_node = 0;
  none.system.nic_bandwidth = core::BytesPerSecond{};
  none.system.network_bandwidth = core::BytesPerSecond{};
  const auto a = topology::build_topology(fast);
  const auto b = topology::build_topology(none);
  for (Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::AllToAll}) {
    for (double bytes : {8.0, 1e6, 1e9}) {
      const auto ca = estimate(a, kCal, Group::contiguous(8, 8), op, core::Bytes(bytes));
      const auto cb = estimate(b, kCal, Group::contiguous(8, 8), op, core::Bytes(bytes));
      EXPECT_EQ(ca.time, cb.time);
      EXPECT_EQ(ca.algorithm, cb.algorithm);
    }
  }
  // Across instances without NICs nothing can run.
  EXPECT_FALSE(estimate(b, kCal, Group::all(b), Op::AllReduce, core::mib(1)).feasible);
}

TEST(Selection, PicksTheFastestCandidate) {
  // Auto = the minimum time over every NCCL candidate (hierarchical excluded).
  const auto t = topology::build_topology(testing::hgx_h100(2));
  const auto s = topology::classify(t, Group::all(t));
  for (double b : {8.0, 65536.0, 1e7, 1e9, 1e10}) {
    const CollectiveCost best = estimate(t, kCal, s, Op::AllReduce, core::Bytes(b));
    for (const CollectiveCost& c : candidates(t, kCal, s, Op::AllReduce, core::Bytes(b))) {
      if (c.algorithm == Algorithm::Hierarchical) continue;
      EXPECT_LE(best.time.value(), c.time.value() * (1 + 1e-12));
    }
  }
}

TEST(Selection, SmallMessagesUseLowLatencyProtocolsLargeOnesSimple) {
  // 8 B across two instances: an LL protocol (latency-bound); 4 GiB: Simple (bandwidth-bound).
  const auto t = topology::build_topology(testing::hgx_h100(2));
  EXPECT_EQ(estimate(t, kCal, Group::all(t), Op::AllReduce, core::Bytes(8)).protocol, Protocol::LL);
  EXPECT_EQ(estimate(t, kCal, Group::all(t), Op::AllReduce, core::gib(4)).protocol, Protocol::Simple);
}

TEST(Nvls, EightGpuAllReduceFollowsNcclNvlsFormula) {
  // NVLS all-reduce busbw = 2 x channels x speed x nvlsEfficiency x (ch-1)/ch, with 8 channels
  // x 40 GB/s on H100 (8 x 50 would exceed 0.9 x 370.8 GB/s): 2 x 320 x 0.85 x 7/8 = 476 GB/s.
  const auto t = topology::build_topology(testing::hgx_h100(1));
  const CollectiveCost c = estimate(t, kCal, Group::all(t), Op::AllReduce, core::gib(64), Options{Algorithm::Nvls});
  EXPECT_NEAR(c.busbw.value() / 1e9, 2 * 320 * 0.85 * 7.0 / 8.0, 1.0);
  // NVLS needs NVSwitch multicast inside one domain: across instances it is infeasible.
  const auto two = topology::build_topology(testing::hgx_h100(2));
  EXPECT_FALSE(estimate(two, kCal, Group::all(two), Op::AllReduce, core::gib(1), Options{Algorithm::Nvls}).feasible);
}

TEST(NvlsTree, TwoNodeBusbwCanExceedTheNicRate) {
  // With NVLS inside each instance, two instances exchange bytes/8 per rail once:
  // algbw = min(NVLS intra, 8 x 50 GB/s x eff) -> busbw ~1.9 x that, above the 400 GB/s of NICs.
  const auto t = topology::build_topology(testing::hgx_h100(2, 0.9));
  const CollectiveCost c = estimate(t, kCal, Group::all(t), Op::AllReduce, core::gib(16), Options{Algorithm::NvlsTree});
  EXPECT_GT(c.busbw.value(), 400e9);
  EXPECT_LE(c.algbw.value(), 8 * 50e9 * 0.9);
}

TEST(Tree, LatencyGrowsWithLog2OfNodes) {
  // Tree/LL latency = base + 2((ppn-1) intra + log2(nodes) inter): 2 -> 8 nodes adds 2 x 2 inter.
  const auto t = topology::build_topology(testing::hgx_h100(8));
  const auto two = estimate(t, kCal, Group::contiguous(0, 16), Op::AllReduce, core::Bytes(8),
                            Options{Algorithm::Tree, Protocol::LL});
  const auto eight =
      estimate(t, kCal, Group::all(t), Op::AllReduce, core::Bytes(8), Options{Algorithm::Tree, Protocol::LL});
  const double inter = kCal.tree.network[0] * 1e-6 + t.message_latency.value();
  EXPECT_NEAR((eight.latency - two.latency).value(), 2 * 2 * inter, 1e-12);
}

TEST(Pat, OnlyWithOneRankPerNode) {
  // PAT runs all-gather / reduce-scatter when every node holds one rank (nNodes == nRanks).
  const auto t = topology::build_topology(testing::hgx_h100(8));
  EXPECT_TRUE(
      estimate(t, kCal, Group::strided(0, 8, 8), Op::AllGather, core::mib(1), Options{Algorithm::Pat}).feasible);
  EXPECT_FALSE(estimate(t, kCal, Group::all(t), Op::AllGather, core::mib(1), Options{Algorithm::Pat}).feasible);
}

TEST(Hierarchical, InterPhaseIsARingPerRailOnBytesOverLocal) {
  // Hierarchical all-reduce over D domains of p ranks: the network phase moves
  // 2(D-1)/D x bytes/p per rail; with NVLS faster than the network, algbw = p x rail x D/(2(D-1)).
  const auto t = topology::build_topology(testing::hgx_h100(4, 0.5));
  const CollectiveCost c =
      estimate(t, kCal, Group::all(t), Op::AllReduce, core::gib(256), Options{Algorithm::Hierarchical});
  EXPECT_NEAR(c.algbw.value() / (8 * 50e9 * 0.5 * 4 / 6.0), 1.0, 0.01);
}

TEST(AllToAll, IntraAndInterShareTheMessage) {
  // All-to-all of S per rank on 2 instances: (p-1)/n of S over NVLink, (n-p)/n over the GPU's
  // network share; the network part dominates. On EFA with aws-ofi-nccl multi-rail that share is
  // all 4 of the GPU's 100 Gbps NICs (50 GB/s x eff); through a one-NIC p2p transport, 12.5 GB/s.
  const auto t = topology::build_topology(testing::hgx_h100(2, 1.0));
  const double s = 1e9;
  const CollectiveCost c = estimate(t, kCal, Group::all(t), Op::AllToAll, core::Bytes(s));
  EXPECT_NEAR((c.time - c.latency).value(), s * 8 / 16 / 50e9, 1e-9);
  const CollectiveCost one = estimate(t, one_nic_p2p(), Group::all(t), Op::AllToAll, core::Bytes(s));
  EXPECT_NEAR((one.time - one.latency).value(), s * 8 / 16 / 12.5e9, 1e-9);
}

TEST(SendRecv, NvlinkPairVersusNetworkPair) {
  // p2p inside an instance: 450 GB/s x 0.87; across: the GPU's 4 EFA NICs (multi-rail, 50 GB/s)
  // x efficiency, or one 100 Gbps NIC through a one-NIC p2p transport.
  const auto t = topology::build_topology(testing::hgx_h100(2, 1.0));
  const auto in = estimate(t, kCal, Group::of({0, 1}), Op::SendRecv, core::gib(4));
  const auto out = estimate(t, kCal, Group::of({0, 8}), Op::SendRecv, core::gib(4));
  EXPECT_NEAR(in.algbw.value() / (450e9 * 0.87), 1.0, 0.01);
  EXPECT_NEAR(out.algbw.value() / 50e9, 1.0, 0.01);
  const auto one = estimate(t, one_nic_p2p(), Group::of({0, 8}), Op::SendRecv, core::gib(4));
  EXPECT_NEAR(one.algbw.value() / 12.5e9, 1.0, 0.01);
}

TEST(Speed, AnalyticalEstimateIsUnderAMicrosecond) {
#ifdef FMSIM_SANITIZED
  GTEST_SKIP() << "speed is checked in the Release build; ASan/UBSan slow every call 2-5x";
#endif
  // One estimate on a pre-classified group: < 1 us on average (generous for CI machines: 5 us).
  const auto t = topology::build_topology(testing::hgx_h100(128));
  const auto s = topology::classify(t, Group::strided(0, 128, 8));
  const int n = 20000;
  double sink = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) sink += estimate(t, kCal, s, Op::AllReduce, core::Bytes(1e6 + i)).time.value();
  const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
  EXPECT_GT(sink, 0.0);
  EXPECT_LT(per, 5e-6);
}

TEST(Concurrency, AloneEqualsTheAnalyticalCost) {
  // A single request in the flow simulation finishes exactly at start + estimate().
  const auto t = topology::build_topology(testing::hgx_h100(4));
  const std::vector<CollectiveRequest> one{{Group::strided(0, 4, 8), Op::AllReduce, core::gib(1), core::ms(2), {}}};
  const auto r = simulate_concurrent(t, kCal, one);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NEAR(r[0].finish.value(), 2e-3 + r[0].standalone.time.value(), 1e-12);
  EXPECT_NEAR(r[0].slowdown, 1.0, 1e-9);
}

TEST(Concurrency, TwoCollectivesOnTheSameRailsShareThem) {
  // Two identical DP all-reduces over the same ranks at the same time: each gets half the NIC
  // rails, so its bandwidth term doubles.
  const auto t = topology::build_topology(testing::hgx_h100(4));
  const CollectiveRequest dp{Group::strided(0, 4, 8), Op::AllReduce, core::gib(1), core::Seconds{}, {}};
  const auto r = simulate_concurrent(t, kCal, {dp, dp});
  EXPECT_NEAR(r[0].slowdown, 2.0, 1e-6);
  EXPECT_NEAR(r[1].slowdown, 2.0, 1e-6);
  // A TP all-reduce inside instance 0 shares no link with a DP group on other ranks' rails.
  const CollectiveRequest tp{Group::contiguous(0, 8), Op::AllReduce, core::gib(1), core::Seconds{}, {}};
  const CollectiveRequest dp2{Group::strided(9, 3, 8), Op::AllReduce, core::gib(1), core::Seconds{}, {}};
  const auto q = simulate_concurrent(t, kCal, {tp, dp2});
  EXPECT_NEAR(q[0].slowdown, 1.0, 1e-9);
  EXPECT_NEAR(q[1].slowdown, 1.0, 1e-9);
}

TEST(Concurrency, PipelineSendSharesTheRailWithDataParallel) {
  // DP gradients of rank 0's group while rank 0 sends activations to rank 8 (next stage) on the
  // same rail: both stretch.
  const auto t = topology::build_topology(testing::hgx_h100(2));
  const CollectiveRequest dp{Group::strided(0, 2, 8), Op::AllReduce, core::gib(1), core::Seconds{}, {}};
  const CollectiveRequest pp{Group::of({0, 8}), Op::SendRecv, core::gib(1), core::Seconds{}, {}};
  const auto r = simulate_concurrent(t, kCal, {dp, pp});
  EXPECT_GT(r[0].slowdown, 1.05);
  EXPECT_GT(r[1].slowdown, 1.05);
}

TEST(AllToAll, FlowLevelMatchesTheSymmetricClosedForm) {
  // Identical flows: the general max-min solver gives the closed form's time.
  const auto t = topology::build_topology(testing::hgx_h100(4));
  const auto closed = simulate_alltoall(t, kCal, Group::all(t), core::gib(1));
  const auto flows = simulate_alltoall(t, kCal, Group::all(t), core::gib(1), true);
  EXPECT_TRUE(closed.symmetric);
  EXPECT_EQ(flows.flows, 32 * 31);
  EXPECT_NEAR(flows.time.value() / closed.time.value(), 1.0, 1e-6);
}

TEST(AllToAll, UnevenSplitsAreBoundByTheHeaviestSender) {
  // all-to-all-v where rank 0 sends 4x more across the network: it finishes last, at its bytes /
  // its rail rate (one NIC here, the p2p limit of NCCL's own net transport).
  const auto t = topology::build_topology(testing::hgx_h100(2, 1.0));
  const int n = 16;
  std::vector<double> m(static_cast<std::size_t>(n * n), 0.0);
  for (int j = 8; j < 16; ++j) m[static_cast<std::size_t>(j)] = 4e8;          // rank 0 -> other node
  for (int j = 0; j < 8; ++j) m[static_cast<std::size_t>(15 * n + j)] = 1e8;  // rank 15 -> first node
  const auto one = one_nic_p2p();
  const auto r = simulate_alltoallv(t, one, Group::all(t), m);
  EXPECT_NEAR(r.time.value() - estimate(t, one, Group::all(t), Op::AllToAll, core::Bytes(32e8)).latency.value(),
              32e8 / 12.5e9, 1e-6);
}

}  // namespace
}  // namespace fmsim::collectives
