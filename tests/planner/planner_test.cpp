// Planner: exhaustive agreement of the pruned search, determinism across thread counts, cost
// arithmetic, objectives, pins, scaling and bottleneck placement.
#include "planner/planner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include "collectives/comm_cost.hpp"
#include "planner_fixtures.hpp"

namespace fmsim::planner {
namespace {

using parallelism::Recompute;
using parallelism::Sharding;
using testing::calibration;
using testing::cluster;
using testing::small_model;
using testing::small_moe;
using testing::small_request;

// The value lists searched by both the planner and the brute force below.
SearchSpace explicit_space() {
  SearchSpace s;
  s.tp = {1, 2, 4, 8};
  s.pp = {1, 2, 4};
  s.vp = {1, 2};
  s.cp = {1, 2};
  s.micro_batch = {1, 2, 4};
  s.sharding = {Sharding::None, Sharding::DistributedOptimizer, Sharding::Zero2, Sharding::Zero3};
  s.recompute = {Recompute::None, Recompute::Selective, Recompute::Full};
  s.precision = {core::Precision::BF16, core::Precision::FP8};
  return s;
}

// Brute force: every combination of the explicit lists, checked only by estimate_step itself
// (validity via parallelism::why_invalid, memory via fits_memory). Returns (count of layouts that
// are valid and fit, best step time, best layout).
struct Brute {
  std::size_t fitting = 0;
  double best = INFINITY;
  parallelism::Layout layout;
};
Brute brute_force(const PlanRequest& r, const hardware::ClusterSpec& c, int gpus) {
  Brute out;
  const auto cal = calibration();
  const auto comm = collectives::make_comm_cost(sized_cluster(c, gpus));
  const auto s = explicit_space();
  for (int tp : s.tp)
    for (int cp : s.cp)
      for (int pp : s.pp)
        for (int vp : s.vp) {
          for (auto sh : s.sharding)
            for (int mbs : s.micro_batch)
              for (auto rc : s.recompute)
                for (auto p : s.precision) {
                  parallelism::Layout l;
                  l.tp = tp;
                  l.pp = pp;
                  l.vp = vp;
                  l.cp = cp;
                  l.sequence_parallel = tp > 1;
                  l.sharding = sh;
                  l.micro_batch = mbs;
                  l.recompute = rc;
                  l.precision = p;
                  l.global_batch = r.global_batch;
                  l = parallelism::with_dp(l, gpus);
                  training::TrainingJob job;
                  job.model = r.model;
                  job.cluster = sized_cluster(c, gpus);
                  job.layout = l;
                  job.seq_len = r.seq_len;
                  job.gpus = gpus;
                  const auto res = training::estimate_step(job, cal, comm);
                  if (!res.feasible || !res.fits_memory) continue;
                  ++out.fitting;
                  if (res.step_time.value() < out.best) {
                    out.best = res.step_time.value();
                    out.layout = l;
                  }
                }
        }
  return out;
}

TEST(Planner, PrunedSearchKeepsEveryFittingLayoutAndFindsTheExhaustiveBest) {
  // Fact: the planner's divisibility and memory pruning only drops layouts that estimate_step
  // itself rejects (invalid) or reports as not fitting. So on a small case, (a) the number of
  // layouts the planner costs equals the brute-force count of valid, fitting layouts over the same
  // value lists, and (b) its #1 has the brute-force minimum step time.
  // 4.5 GiB of HBM makes the memory pruning active (some layouts do not fit).
  const auto c = cluster("small-8gpu", 4.5, 50.0);
  auto r = small_request(small_model(), {c});
  r.space = explicit_space();
  const auto brute = brute_force(r, c, 16);
  ASSERT_GT(brute.fitting, 0u);
  const auto plan = planner::plan(r, calibration());
  ASSERT_EQ(plan.systems.size(), 1u);
  const auto& sp = plan.systems.front();
  EXPECT_GT(sp.stats.pruned_memory, 0u) << "the case should exercise memory pruning";
  EXPECT_EQ(sp.stats.evaluated, brute.fitting);
  ASSERT_FALSE(sp.top.empty());
  EXPECT_DOUBLE_EQ(sp.top.front().step.step_time.value(), brute.best);
  // Candidates are the shapes x variants; each is either pruned or costed.
  EXPECT_EQ(sp.stats.candidates, sp.stats.pruned_batch + sp.stats.pruned_memory + sp.stats.evaluated);
}

TEST(Planner, SameRankingForAnyThreadCount) {
  // Determinism: results are merged in enumeration order and ties broken by it, so 1, 2, 3 and 7
  // threads give the same layouts, times and counts, bit for bit.
  const auto c1 = cluster("a", 16.0, 50.0);
  const auto c2 = cluster("b", 24.0, 80.0);
  auto r = small_request(small_model(), {c1, c2});
  r.top = 5;
  std::vector<std::tuple<std::string, double, std::size_t>> reference;
  for (int threads : {1, 2, 3, 7}) {
    r.threads = threads;
    const auto plan = planner::plan(r, calibration());
    std::vector<std::tuple<std::string, double, std::size_t>> got;
    for (const auto& sp : plan.systems) {
      for (const auto& p : sp.top)
        got.emplace_back(sp.cluster.system.name + " " + p.label(), p.step.step_time.value(), sp.stats.evaluated);
    }
    ASSERT_FALSE(got.empty());
    if (reference.empty()) {
      reference = got;
    } else {
      EXPECT_EQ(got, reference) << threads << " threads";
    }
  }
}

TEST(Planner, CostArithmetic) {
  // steps = ceil(tokens / (global_batch * seq)); train time = steps x step time;
  // cost = units x price per unit-hour x train hours; tokens per dollar = steps x gbs x seq / cost.
  EXPECT_DOUBLE_EQ(steps_for_tokens(15e12, 1024, 8192), std::ceil(15e12 / (1024.0 * 8192.0)));
  EXPECT_DOUBLE_EQ(steps_for_tokens(1024.0 * 8192.0 * 3, 1024, 8192), 3.0);
  EXPECT_DOUBLE_EQ(cost_usd(7200.0, 4, 55.0), 4 * 55.0 * 2.0);

  const auto c = cluster("priced", 40.0, 55.0);
  auto r = small_request(small_model(), {c});
  const auto plan = planner::plan(r, calibration());
  const auto& p = plan.systems.front().top.front();
  EXPECT_EQ(p.units, 2);  // 16 GPUs on 8-GPU units
  EXPECT_DOUBLE_EQ(p.steps, std::ceil(1e9 / (64.0 * 2048.0)));
  EXPECT_DOUBLE_EQ(p.train_seconds, p.steps * p.step.step_time.value());
  EXPECT_DOUBLE_EQ(p.cost_usd, 2 * 55.0 * p.train_seconds / 3600.0);
  EXPECT_DOUBLE_EQ(p.tokens_per_dollar, p.steps * 64.0 * 2048.0 / p.cost_usd);
  EXPECT_DOUBLE_EQ(p.headroom_bytes, p.step.memory_capacity.value() - p.step.memory.total().value());
}

TEST(Planner, UnknownPriceHasNoCostAndRanksLastByCost) {
  // A system without a price gets NaN cost; under the cost objective its key is +infinity.
  const auto unpriced = cluster("unpriced", 40.0, 0.0);
  auto r = small_request(small_model(), {unpriced});
  const auto plan = planner::plan(r, calibration());
  const auto& p = plan.systems.front().top.front();
  EXPECT_TRUE(std::isnan(p.cost_usd));
  EXPECT_TRUE(std::isinf(objective_key(p, Objective::Cost)));
  EXPECT_DOUBLE_EQ(objective_key(p, Objective::Time), p.train_seconds);
}

TEST(Planner, UnitsRoundUpToWholeSystems) {
  // Units = ceil(gpus / GPUs per unit): 512 GPUs on a 72-GPU UltraServer need 8 of them.
  auto c = cluster("ultra", 40.0, 100.0);
  c.system.gpus_per_node = 4;
  c.system.nodes = 18;
  EXPECT_EQ(sized_cluster(c, 512).count, 8);
  EXPECT_EQ(sized_cluster(c, 72).count, 1);
  EXPECT_EQ(sized_cluster(c, 73).count, 2);
}

TEST(Planner, ObjectiveChoosesBetweenFastAndCheapSystems) {
  // Same GPU memory; "fast" has twice the FLOP rate at ten times the price. By time the fast
  // system wins; by cost (and tokens per dollar, its reciprocal up to the budget) the cheap one.
  const auto cheap = cluster("cheap", 40.0, 10.0, 1, 989.0);
  const auto fast = cluster("fast", 40.0, 100.0, 1, 1978.0);
  auto r = small_request(small_model(), {cheap, fast});
  r.objective = Objective::Time;
  auto plan = planner::plan(r, calibration());
  ASSERT_TRUE(plan.best_system.has_value());
  EXPECT_EQ(plan.systems[*plan.best_system].cluster.system.name, "fast");
  r.objective = Objective::Cost;
  plan = planner::plan(r, calibration());
  EXPECT_EQ(plan.systems[*plan.best_system].cluster.system.name, "cheap");
  r.objective = Objective::TokensPerDollar;
  plan = planner::plan(r, calibration());
  EXPECT_EQ(plan.systems[*plan.best_system].cluster.system.name, "cheap");
}

TEST(Planner, RankingFollowsTheObjectiveKey) {
  // Within a system the top list is sorted by the objective key, and (distinct_shapes) no two
  // entries share (GPUs, tp, pp, cp, ep).
  auto r = small_request(small_model(), {cluster("a", 24.0, 50.0)});
  r.top = 6;
  const auto plan = planner::plan(r, calibration());
  const auto& top = plan.systems.front().top;
  ASSERT_GE(top.size(), 2u);
  std::set<std::tuple<int, int, int, int, int>> shapes;
  for (std::size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(top[i].rank, static_cast<int>(i) + 1);
    if (i > 0) {
      EXPECT_LE(objective_key(top[i - 1], r.objective), objective_key(top[i], r.objective));
    }
    EXPECT_TRUE(
        shapes.insert({top[i].gpus, top[i].layout.tp, top[i].layout.pp, top[i].layout.cp, top[i].layout.ep}).second);
  }
}

TEST(Planner, PinsNarrowTheSearch) {
  // Pinning tp = 2 and max_pp = 2 leaves only layouts with tp 2 and pp <= 2, and fewer candidates.
  auto r = small_request(small_model(), {cluster("a", 40.0, 50.0)});
  const auto free_plan = planner::plan(r, calibration());
  r.space.tp = {2};
  r.space.max_pp = 2;
  r.top = 10;
  const auto pinned = planner::plan(r, calibration());
  ASSERT_FALSE(pinned.systems.front().top.empty());
  for (const auto& p : pinned.systems.front().top) {
    EXPECT_EQ(p.layout.tp, 2);
    EXPECT_LE(p.layout.pp, 2);
  }
  EXPECT_LT(pinned.stats.candidates, free_plan.stats.candidates);
}

TEST(Planner, NothingFitsGivesAReasonWithTheSmallestFootprint) {
  // With 1 GiB of HBM nothing fits (the fixed overhead alone is 2.5 GiB): no layout, and the
  // reason names the smallest footprint seen.
  auto r = small_request(small_model(), {cluster("tiny", 1.0, 50.0)});
  const auto plan = planner::plan(r, calibration());
  EXPECT_TRUE(plan.systems.front().top.empty());
  EXPECT_FALSE(plan.best_system.has_value());
  EXPECT_NE(plan.systems.front().empty_reason.find("smallest footprint"), std::string::npos);
}

TEST(Planner, LoraBaseSetsTheMemoryCheck) {
  // QLoRA stores the frozen base in 4-bit NF4 (0.5 B + quantisation constants per parameter,
  // Dettmers et al. 2023) instead of 2 B of BF16: the planner's memory check of every layout
  // uses the request's base, so fewer layouts of an 8B-class model are pruned on 12 GiB GPUs.
  workload::ModelSpec m = small_model();  // widened to 8B-class: 16 heads x 256, 32 layers
  m.head_dim = 256;
  m.hidden = m.num_heads * m.head_dim;
  m.ffn_hidden = 14336;
  m.num_layers = 32;
  m.vocab = 128256;
  auto r = small_request(m, {cluster("a", 12.0, 50.0)});
  r.task = training::Task::Lora;
  SearchSpace pinned;
  pinned.tp = {1, 2};
  pinned.pp = {1};
  pinned.cp = {1};
  pinned.micro_batch = {1};
  pinned.sharding = {Sharding::DistributedOptimizer};  // frozen weights replicated over dp
  r.space = pinned;
  const auto bf16 = planner::plan(r, calibration());
  r.lora_base = training::LoraBase::Nf4;
  const auto nf4 = planner::plan(r, calibration());
  EXPECT_LT(nf4.stats.pruned_memory, bf16.stats.pruned_memory);
  ASSERT_FALSE(nf4.systems.front().top.empty());
  for (const auto& p : bf16.systems.front().top) EXPECT_GT(p.layout.tp, 1) << "a 2 B/param base does not fit tp 1";
  EXPECT_EQ(nf4.systems.front().top.front().layout.tp, 1) << "the NF4 base fits without tensor parallelism";
}

TEST(Planner, MoeSearchesExpertParallelism) {
  // For an MoE model, ep is searched (powers of 2 dividing the 8 experts); every costed layout has
  // ep dividing the experts and tp*cp*dp.
  auto r = small_request(small_moe(), {cluster("a", 40.0, 50.0)});
  r.top = 10;
  r.distinct_shapes = true;
  const auto plan = planner::plan(r, calibration());
  bool saw_ep = false;
  for (const auto& p : plan.systems.front().top) {
    EXPECT_EQ(8 % p.layout.ep, 0);
    EXPECT_EQ((p.layout.tp * p.layout.cp * p.layout.dp) % (p.layout.ep * p.layout.etp), 0);
    saw_ep = saw_ep || p.layout.ep > 1;
  }
  EXPECT_TRUE(saw_ep) << "the top 10 distinct shapes of an MoE model should include ep > 1";
}

TEST(Planner, ScalingSpeedupAndKnee) {
  // speedup(i) = step time at the previous count / step time at i; marginal efficiency =
  // speedup / GPU ratio; the knee is the last count reached by steps that all had efficiency
  // >= kPayingEfficiency.
  auto r = small_request(small_model(), {cluster("a", 40.0, 50.0, 4)});
  r.gpu_counts = {8, 16, 32};
  const auto plan = planner::plan_scaling(r, calibration());
  ASSERT_EQ(plan.scaling.size(), 1u);
  const auto& pts = plan.scaling.front().points;
  ASSERT_EQ(pts.size(), 3u);
  std::optional<std::size_t> knee;
  bool paying = true;
  const ScalingPoint* prev = nullptr;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    ASSERT_TRUE(pts[i].best.has_value());
    if (prev) {
      EXPECT_DOUBLE_EQ(pts[i].speedup, prev->best->step.step_time.value() / pts[i].best->step.step_time.value());
      EXPECT_DOUBLE_EQ(pts[i].marginal_efficiency, pts[i].speedup / (static_cast<double>(pts[i].gpus) / prev->gpus));
      paying = paying && pts[i].marginal_efficiency >= kPayingEfficiency;
    }
    if (paying) knee = i;
    prev = &pts[i];
  }
  EXPECT_EQ(plan.scaling.front().knee, knee);
}

TEST(Planner, RankedGpuCountsLimitTheTopList) {
  // With gpu_counts {8, 16} but ranked_gpu_counts {16}, every ranked layout uses 16 GPUs, while
  // the scaling sweep still has a point at 8.
  auto r = small_request(small_model(), {cluster("a", 40.0, 50.0, 2)});
  r.gpu_counts = {8, 16};
  r.ranked_gpu_counts = {16};
  const auto plan = planner::plan_scaling(r, calibration());
  for (const auto& p : plan.systems.front().top) EXPECT_EQ(p.gpus, 16);
  ASSERT_EQ(plan.scaling.front().points.size(), 2u);
  EXPECT_EQ(plan.scaling.front().points.front().gpus, 8);
}

}  // namespace
}  // namespace fmsim::planner
