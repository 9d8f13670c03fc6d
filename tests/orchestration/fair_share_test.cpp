// Fair-share as priority/multifactor computes it: Fair Tree (slurm.schedmd.com/fair_tree.html) and
// the classic formula (slurm.schedmd.com/classic_fair_share.html), on trees small enough to work
// out by hand; the sacctmgr dump reader; and the effect on job order in the scheduler twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "orchestration/fair_share.hpp"
#include "orchestration/slurm_simulator.hpp"
#include "sim_fixtures.hpp"

namespace fmsim::orchestration {
namespace {

// Level Fairshare LF = S / U among siblings: accounts A and B with one share each; A has used 30,
// B 10: LF_A = 0.5 / 0.75 = 2/3, LF_B = 0.5 / 0.25 = 2. Users are ranked depth first in descending
// LF, FairShare = rank / user count: B's user 2/2 = 1.0, A's user 1/2 = 0.5.
TEST(FairTree, LevelFairshareIsSharesOverUsageAmongSiblings) {
  FairShareTree t;
  t.add_account("A", "root");
  t.add_account("B", "root");
  const int a = t.user_association("A", "alice");
  const int b = t.user_association("B", "bob");
  t.add_usage(a, 30);
  t.add_usage(b, 10);
  t.recompute(true);
  EXPECT_NEAR(t.associations()[static_cast<std::size_t>(t.find_account("A"))].level_fs, 0.5 / 0.75, 1e-12);
  EXPECT_NEAR(t.associations()[static_cast<std::size_t>(t.find_account("B"))].level_fs, 0.5 / 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(t.fairshare(b), 1.0);
  EXPECT_DOUBLE_EQ(t.fairshare(a), 0.5);
}

// "If accounts A and B are siblings and A has a higher fairshare factor than B, all children of A
// will have higher fairshare factors than all children of B": an idle user (LF infinite) of an
// account that has used more than its share still ranks below every user of the other account.
TEST(FairTree, EveryUserOfAHigherAccountRanksAboveEveryUserOfALowerOne) {
  FairShareTree t;
  const int a1 = t.user_association("A", "a1");
  const int a2 = t.user_association("A", "a2");  // no usage at all
  const int b1 = t.user_association("B", "b1");
  t.add_usage(a1, 90);
  t.add_usage(b1, 10);
  t.recompute(true);
  EXPECT_DOUBLE_EQ(t.fairshare(b1), 3.0 / 3);
  EXPECT_DOUBLE_EQ(t.fairshare(a2), 2.0 / 3);
  EXPECT_DOUBLE_EQ(t.fairshare(a1), 1.0 / 3);
}

// Ties: users of equal LF share a rank, and tied accounts have their children ranked together.
// A and B (one share each) have used 10 each: tied at LF 1. Merged: b1 (S 0.5, U 0.2: 2.5),
// a1 (S 1, U 1: 1), b2 (S 0.5, U 0.8: 0.625) -> ranks 3, 2, 1 of 3. With no usage anywhere every
// LF is infinite and every user gets the top rank (1.0).
TEST(FairTree, TiedAccountsMergeTheirChildrenAndTiedUsersShareARank) {
  FairShareTree t;
  const int a1 = t.user_association("A", "a1");
  const int b1 = t.user_association("B", "b1");
  const int b2 = t.user_association("B", "b2");
  t.recompute(true);
  EXPECT_DOUBLE_EQ(t.fairshare(a1), 1.0);
  EXPECT_DOUBLE_EQ(t.fairshare(b1), 1.0);
  EXPECT_DOUBLE_EQ(t.fairshare(b2), 1.0);
  t.add_usage(a1, 10);
  t.add_usage(b1, 2);
  t.add_usage(b2, 8);
  t.recompute(true);
  EXPECT_DOUBLE_EQ(t.fairshare(b1), 1.0);
  EXPECT_DOUBLE_EQ(t.fairshare(a1), 2.0 / 3);
  EXPECT_DOUBLE_EQ(t.fairshare(b2), 1.0 / 3);
}

// Classic (PriorityFlags=NO_FAIR_TREE): F = 2^(-U/S). A has 1 share, B 3; each has used half of
// the cluster: F_A = 2^(-0.5/0.25) = 0.25, F_B = 2^(-0.5/0.75). One user per account: the user's
// effective usage equals its account's (Ueff = U + (Ueff_parent - U) x 1).
TEST(FairShareClassic, FactorIsTwoToTheMinusUsageOverShares) {
  FairShareTree t;
  t.add_account("A", "root", 1);
  t.add_account("B", "root", 3);
  const int a = t.user_association("A", "alice");
  const int b = t.user_association("B", "bob");
  t.add_usage(a, 50);
  t.add_usage(b, 50);
  t.recompute(false);
  EXPECT_NEAR(t.fairshare(a), 0.25, 1e-12);
  EXPECT_NEAR(t.fairshare(b), std::pow(2.0, -0.5 / 0.75), 1e-12);
}

// Usage decays: one PriorityDecayHalfLife halves it, for users and the accounts above them.
TEST(FairShareTree, DecayScalesEveryUsage) {
  FairShareTree t;
  const int a = t.user_association("A", "alice");
  t.add_usage(a, 80);
  t.decay(std::pow(0.5, 1.0));
  EXPECT_DOUBLE_EQ(t.associations()[static_cast<std::size_t>(a)].raw_usage, 40);
  EXPECT_DOUBLE_EQ(t.associations()[static_cast<std::size_t>(t.find_account("A"))].raw_usage, 40);
  EXPECT_DOUBLE_EQ(t.associations()[0].raw_usage, 40);
}

// In the twin: account A ran a 1-node job for 1000 s; then A and B each submit one job to the
// single node, A's first. With PriorityWeightFairshare, B's user ranks above A's (LF infinite vs
// finite), so B's job starts first; without the weight, submission order decides.
TEST(FairTree, UsageReordersTheQueueInTheTwin) {
  auto c = testing::fast_backfill();
  c.multifactor = true;
  c.weight_fairshare = 1000;
  c.calc_period_s = 60;
  auto job = [](int id, double submit, double run, const std::string& account) {
    auto j = testing::job(id, submit, 1, run, 3600);
    j.account = account;
    j.user = account + "-user";
    return j;
  };
  const std::vector<JobSpec> jobs{job(1, 0, 1000, "A"), job(2, 1100, 100, "B"), job(3, 1200, 100, "A"),
                                  job(4, 1201, 100, "B")};
  // Job 2 (B) holds the node at 1100-1200 only if nothing else runs: make it long enough that
  // jobs 3 and 4 both wait for it.
  auto specs = jobs;
  specs[1].run_s = 300;  // 1100-1400
  auto r = simulate_slurm(flat_layout(1), c, specs);
  // Job 2 was charged 1100-1400, A 0-1000: decayed over 7 days both stay near their raw values,
  // and A used more: B's user ranks first, so job 4 starts before job 3.
  EXPECT_LT(r.jobs[3].start_s, r.jobs[2].start_s);
  c.weight_fairshare = 0;
  r = simulate_slurm(flat_layout(1), c, specs);
  EXPECT_LT(r.jobs[2].start_s, r.jobs[3].start_s);
}

}  // namespace
}  // namespace fmsim::orchestration
