// Response-length distributions of RL rollouts: a long-tailed law, capped at the maximum length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/vocabulary.hpp"

namespace fmsim::rl {

enum class LengthLaw {
  Fixed,      ///< every response has `mean` tokens
  Lognormal,  ///< ln(length) ~ N(mu, sigma^2), the long tail of reasoning traces
  Uniform,    ///< uniform on [0, 2 mean]
};

/// The words of a length law (--response-lengths LAW:mean=...,sigma=...).
inline constexpr core::Word<LengthLaw> kLengthLawWordList[] = {
    {LengthLaw::Lognormal, "lognormal"},
    {LengthLaw::Fixed, "fixed"},
    {LengthLaw::Uniform, "uniform"},
};
inline constexpr core::Vocabulary<LengthLaw> kLengthLawWords{"length law", kLengthLawWordList};

/// Response lengths before the cap, and the cap (max_response tokens, where generation stops).
/// `mean` is the mean AFTER the cap (what frameworks log as the mean response length); the law's
/// own location is solved so that the capped mean matches.
struct LengthDistribution {
  LengthLaw law = LengthLaw::Lognormal;
  double mean = 1024.0;
  double sigma = 0.8;       ///< lognormal shape; ignored by the other laws
  std::int64_t cap = 8192;  ///< maximum response length (tokens)
};

/// Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9).
double normal_quantile(double p);

/// The length at quantile p in (0, 1), capped, at least 1 token.
double length_quantile(const LengthDistribution& d, double p);

/// `n` response lengths at the quantiles (i + 0.5) / n (a deterministic stratified sample),
/// in an order shuffled by `seed` (the order requests reach the engine).
std::vector<std::int64_t> sample_lengths(const LengthDistribution& d, std::int64_t n, std::uint64_t seed = 1);

/// `n` independent draws of the length law (inverse CDF of uniforms from `seed`): one batch of a
/// run, whose total and longest response vary from batch to batch as real batches do.
std::vector<std::int64_t> draw_lengths(const LengthDistribution& d, std::int64_t n, std::uint64_t seed);

/// Mean of the capped law (numerically, 2000 strata).
double capped_mean(const LengthDistribution& d);

/// Fraction of responses that hit the cap.
double truncated_fraction(const LengthDistribution& d);

std::string to_string(LengthLaw law);

}  // namespace fmsim::rl
