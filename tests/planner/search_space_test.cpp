// Search space: the enumeration's divisibility rules agree with parallelism::why_invalid, the
// defaults, and the layout labels.
#include "planner/search_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner_fixtures.hpp"

namespace fmsim::planner {
namespace {

using testing::cluster;
using testing::small_model;
using testing::small_moe;

TEST(SearchSpace, EnumeratedShapesAreExactlyTheValidOnes) {
  // Fact: enumerate_shapes applies why_invalid's shape rules as integer tests. For every
  // (tp, cp, pp, vp, ep, etp in {1, tp}) in a grid wider than the defaults, a shape is enumerated
  // iff why_invalid accepts it, with the recipes' embedding/loss pipeline slots
  // (with_recipe_pipeline_split) and a global batch every dp divides (so only shape rules can fail).
  for (const auto& model : {small_model(), small_moe()}) {
    for (int gpus : {8, 16, 24}) {
      SearchSpace space;
      space.tp = {1, 2, 3, 4, 8, 16};
      space.pp = {1, 2, 3, 4, 8};
      space.vp = {1, 2, 3, 4};
      space.cp = {1, 2, 3, 4};
      space.ep = {1, 2, 4, 8, 16};
      space.max_tp = 16;
      const auto c = cluster("c", 80.0, 1.0, 3);
      const auto shapes = enumerate_shapes(model, gpus, 2048, space, c);
      for (int tp : space.tp)
        for (int cp : space.cp)
          for (int pp : space.pp)
            for (int vp : space.vp)
              for (int ep : space.ep)
                for (int etp : {1, tp}) {
                  parallelism::Layout l;
                  l.tp = tp;
                  l.cp = cp;
                  l.pp = pp;
                  l.vp = vp;
                  l.ep = ep;
                  l.etp = etp;
                  l.global_batch = 9 * 16 * 1024;  // divisible by every dp of these GPU counts
                  l = parallelism::with_recipe_pipeline_split(parallelism::with_dp(l, gpus), model.num_layers);
                  const bool valid = l.dp > 0 && !parallelism::why_invalid(model, l, gpus, 2048).has_value();
                  const Shape s{.tp = tp,
                                .pp = pp,
                                .vp = vp,
                                .cp = cp,
                                .ep = ep,
                                .etp = etp,
                                .dp = l.dp,
                                .pipeline_slots = l.embedding_slot};
                  const bool listed = std::find(shapes.begin(), shapes.end(), s) != shapes.end();
                  EXPECT_EQ(listed, valid) << model.name << " gpus " << gpus << " tp" << tp << " cp" << cp << " pp"
                                           << pp << " vp" << vp << " ep" << ep << " etp" << etp;
                  if (tp == 1) break;
                }
    }
  }
}

TEST(SearchSpace, DefaultCandidates) {
  // Defaults: tp powers of 2 up to the NVLink domain (8 here); pp at most the 8 layers; vp > 1 only
  // with pp > 1 and pp*vp dividing the layers, or the layers + 2 embedding/loss slots (pp 2 x vp 5
  // = 10 here, with the slots on); cp keeping >= 1024 tokens per rank (2048 -> cp 1,
  // 2); dense models ep 1.
  const auto c = cluster("c", 80.0, 1.0, 8);
  const auto shapes = enumerate_shapes(small_model(), 64, 2048, SearchSpace{}, c);
  ASSERT_FALSE(shapes.empty());
  for (const auto& s : shapes) {
    EXPECT_LE(s.tp, 8);
    EXPECT_LE(s.pp, 8);
    if (s.vp > 1) {
      EXPECT_TRUE(8 % (s.pp * s.vp) == 0 || (8 + 2) % (s.pp * s.vp) == 0) << s.pp << " x " << s.vp;
      EXPECT_EQ(s.pipeline_slots, 8 % (s.pp * s.vp) != 0);
    }
    if (s.pp == 1) {
      EXPECT_EQ(s.vp, 1);
    }
    EXPECT_LE(s.cp, 2);
    EXPECT_EQ(s.ep, 1);
    EXPECT_EQ(s.tp * s.pp * s.cp * s.dp, 64);
  }
  // A 72-GPU NVLink domain raises the default tp ceiling to 64 (16 heads cap it at 16 here).
  auto nvl = c;
  nvl.system.nvlink_domain_gpus = 72;
  const auto wide = enumerate_shapes(small_model(), 64, 2048, SearchSpace{}, nvl);
  EXPECT_TRUE(std::any_of(wide.begin(), wide.end(), [](const Shape& s) { return s.tp == 16; }));
}

TEST(SearchSpace, VariantsLeaveOutUnsupportedPrecisions) {
  // 4 ZeRO stages x 4 micro-batches x 3 recompute policies x 2 precisions = 96 by default; a GPU
  // without FP8 keeps only BF16 (48).
  auto g = testing::gpu(80.0);
  EXPECT_EQ(enumerate_variants(SearchSpace{}, g).size(), 96u);
  g.fp8 = core::FlopsPerSecond(0.0);
  const auto v = enumerate_variants(SearchSpace{}, g);
  EXPECT_EQ(v.size(), 48u);
  for (const auto& x : v) EXPECT_EQ(x.precision, core::Precision::BF16);
}

TEST(SearchSpace, MakeLayoutAndLabel) {
  // make_layout copies the shape and variant, turns sequence parallelism on with tp > 1, and TP
  // overlap only when tp > 1; the label lists vp/cp/ep only above 1.
  const Shape s{.tp = 8, .pp = 4, .vp = 5, .cp = 1, .ep = 1, .etp = 1, .dp = 16};
  const Variant v{.sharding = parallelism::Sharding::DistributedOptimizer,
                  .micro_batch = 1,
                  .recompute = parallelism::Recompute::Selective,
                  .precision = core::Precision::FP8};
  FrameworkSettings f;
  f.overlap_tp_comm = true;
  const auto l = make_layout(s, v, 1024, f);
  EXPECT_EQ(l.gpus(), 512);
  EXPECT_TRUE(l.sequence_parallel);
  EXPECT_TRUE(l.overlap_tp_comm);
  EXPECT_EQ(layout_label(l), "tp8 pp4 vp5 dp16 zero1 mbs1 sel fp8");
  const auto one = make_layout({.tp = 1, .pp = 1, .vp = 1, .cp = 2, .ep = 4, .etp = 1, .dp = 8}, v, 64, f);
  EXPECT_FALSE(one.sequence_parallel);
  EXPECT_FALSE(one.overlap_tp_comm);
  EXPECT_EQ(layout_label(one), "tp1 pp1 cp2 ep4 dp8 zero1 mbs1 sel fp8");
  EXPECT_TRUE(divides_batch(s, v, 1024));   // 1024 % (1 * 16) == 0
  EXPECT_FALSE(divides_batch(s, v, 1000));  // 1000 % 16 != 0
}

// Megatron-Bridge's MoE switches reach every candidate where they mean something: the all-to-all
// overlap only with ep > 1, FP8 attention only on FP8 candidates; the graph and the fused MLP always.
TEST(SearchSpace, MakeLayoutCopiesTheMoeRecipeSwitches) {
  FrameworkSettings f;
  f.recipe = {.full_iteration_graph = true, .overlap_ep_comm = true, .fused_grouped_mlp = true, .fp8_attention = true};
  Variant v{.sharding = parallelism::Sharding::DistributedOptimizer,
            .micro_batch = 1,
            .recompute = parallelism::Recompute::None,
            .precision = core::Precision::FP8};
  const auto moe = make_layout({.tp = 1, .pp = 1, .vp = 1, .cp = 1, .ep = 8, .etp = 1, .dp = 8}, v, 64, f);
  EXPECT_TRUE(moe.recipe.full_iteration_graph && moe.recipe.overlap_ep_comm && moe.recipe.fused_grouped_mlp &&
              moe.recipe.fp8_attention);
  v.precision = core::Precision::BF16;
  const auto dense = make_layout({.tp = 1, .pp = 1, .vp = 1, .cp = 1, .ep = 1, .etp = 1, .dp = 8}, v, 64, f);
  EXPECT_TRUE(dense.recipe.full_iteration_graph && dense.recipe.fused_grouped_mlp);
  EXPECT_FALSE(dense.recipe.overlap_ep_comm);
  EXPECT_FALSE(dense.recipe.fp8_attention);
}

}  // namespace
}  // namespace fmsim::planner
