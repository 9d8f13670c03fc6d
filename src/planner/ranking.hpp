// The one ranking of planner/'s searches (training layouts, serving plans, RL placements): what
// "best" means (Objective, the words of --objective) and the order of candidates (RankKey):
// feasible before infeasible, then the lower objective key, then the lower tie-break key, and
// candidates equal on all three in the order the search found them.
//
//   search         objective   key (lower is better)                          tie-break
//   plan           --objective training seconds | USD | -tokens per dollar     step seconds
//   plan-serve     Cost        USD per hour at --rate (else per 1M tokens)     USD per 1M output tokens
//   rl --plan      Time        step seconds                                   (none)
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/vocabulary.hpp"

namespace fmsim::planner {

/// What "best" means. For a fixed system and GPU count all three give the same order (cost and
/// tokens per dollar are the training time times a constant price); they differ across systems
/// and GPU counts. Cost and tokens per dollar always agree with each other (one is the token
/// budget divided by the other).
enum class Objective { Time, Cost, TokensPerDollar };

/// The words of --objective.
inline constexpr core::Word<Objective> kObjectiveWordList[] = {
    {Objective::Time, "time"},
    {Objective::Cost, "cost"},
    {Objective::TokensPerDollar, "tokens-per-dollar"},
};
inline constexpr core::Vocabulary<Objective> kObjectiveWords{"objective", kObjectiveWordList};

constexpr std::string_view to_string(Objective o) { return kObjectiveWords.name(o); }

/// Where a candidate stands: its feasibility, its objective key and a tie-break key, each key in
/// the objective's unit with lower better (seconds, USD, minus tokens per dollar).
struct RankKey {
  bool feasible = true;
  double key = 0.0;
  double tie = 0.0;
};

/// Feasible first, then the lower key, then the lower tie-break key.
constexpr bool ranks_before(const RankKey& a, const RankKey& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.key != b.key) return a.key < b.key;
  return a.tie < b.tie;
}

/// Sorts `candidates` best first by `key_of(candidate)` (a RankKey); stable, so candidates whose
/// keys are equal keep the search's order and the ranking does not depend on the sort.
template <class T, class KeyOf>
void rank(std::vector<T>& candidates, KeyOf key_of) {
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const T& a, const T& b) { return ranks_before(key_of(a), key_of(b)); });
}

}  // namespace fmsim::planner
