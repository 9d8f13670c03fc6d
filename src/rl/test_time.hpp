// Test-time compute: the cost per query of best-of-n, self-consistency, verifier-guided search and
// long thinking, through the same rollout engine.
#pragma once

#include <string>

#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"
#include "rl/calibration.hpp"
#include "rl/lengths.hpp"
#include "rl/rollout.hpp"

namespace fmsim::rl {

enum class TtcMethod {
  Single,           ///< one response (long thinking: set the length distribution)
  BestOfN,          ///< n samples, each scored by a verifier / reward-model forward, best one kept
  SelfConsistency,  ///< n samples, majority vote (no extra model)
  VerifierSearch,   ///< beam search over reasoning steps: n beams x steps, a process-reward forward per step
};

/// The words of --test-time.
inline constexpr core::Word<TtcMethod> kTtcMethodWordList[] = {
    {TtcMethod::Single, "single"},
    {TtcMethod::BestOfN, "best-of-n"},
    {TtcMethod::SelfConsistency, "self-consistency"},
    {TtcMethod::VerifierSearch, "verifier-search"},
};
inline constexpr core::Vocabulary<TtcMethod> kTtcMethodWords{"test-time method", kTtcMethodWordList};

std::string to_string(TtcMethod m);

struct TtcJob {
  GeneratorConfig generator;  ///< model, GPU, TP, replicas (the serving pool)
  TtcMethod method = TtcMethod::SelfConsistency;
  int n = 8;             ///< samples or beams
  int search_steps = 8;  ///< VerifierSearch: reasoning steps per beam
  /// VerifierSearch: tokens the process-reward model reads per beam per step on top of the step's
  /// own text (the step separator and the scoring template around it). A setting of the search
  /// model, not a measured constant: no row of validation/rl.csv publishes a verifier's token
  /// count or time, so it stays a round assumption of a few template tokens.
  int verifier_tokens_per_step = 16;
  std::int64_t prompt_len = 512;
  LengthDistribution lengths;
  std::int64_t queries = 256;  ///< queries served concurrently (the batch the pool sees)
  double price_per_gpu_hour = 0.0;
};

struct TtcResult {
  bool feasible = false;
  std::string reason;
  double tokens_per_query = 0.0;  ///< generated + verifier tokens
  double gpu_seconds_per_query = 0.0;
  double usd_per_query = 0.0;
  core::Seconds latency{};  ///< wall time of the batch (the slowest sample finishes it)
  RolloutResult rollout;
};

TtcResult estimate_test_time(const TtcJob& job, const RlCalibration& cal, const RolloutEngine& engine);

}  // namespace fmsim::rl
