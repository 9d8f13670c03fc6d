#include "rl/lengths.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace fmsim::rl {
namespace {

/// Location mu of the uncapped lognormal whose capped mean is d.mean (bisection on mu; the capped
/// mean grows monotonically with mu).
double lognormal_mu(const LengthDistribution& d) {
  auto capped_mean_at = [&](double mu) {
    constexpr int kStrata = 400;
    double sum = 0.0;
    for (int i = 0; i < kStrata; ++i) {
      const double p = (i + 0.5) / kStrata;
      sum += std::min(static_cast<double>(d.cap), std::exp(mu + d.sigma * normal_quantile(p)));
    }
    return sum / kStrata;
  };
  const double target = std::min(d.mean, 0.999 * static_cast<double>(d.cap));
  double lo = std::log(std::max(1.0, target)) - 4.0 - d.sigma * d.sigma;
  double hi = std::log(static_cast<double>(d.cap)) + 6.0 * d.sigma + 1.0;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (capped_mean_at(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double normal_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double e[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  p = std::clamp(p, 1e-12, 1.0 - 1e-12);
  constexpr double lo = 0.02425, hi = 1.0 - lo;
  if (p < lo) {
    const double q = std::sqrt(-2.0 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((e[0] * q + e[1]) * q + e[2]) * q + e[3]) * q + 1.0);
  }
  if (p > hi) return -normal_quantile(1.0 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

namespace {
double quantile_with_mu(const LengthDistribution& d, double mu, double p) {
  double v = d.mean;
  switch (d.law) {
    case LengthLaw::Fixed: v = d.mean; break;
    case LengthLaw::Uniform: v = 2.0 * d.mean * p; break;
    case LengthLaw::Lognormal: v = std::exp(mu + d.sigma * normal_quantile(p)); break;
  }
  return std::clamp(v, 1.0, static_cast<double>(d.cap));
}
}  // namespace

double length_quantile(const LengthDistribution& d, double p) {
  const double mu = d.law == LengthLaw::Lognormal ? lognormal_mu(d) : 0.0;
  return quantile_with_mu(d, mu, p);
}

std::vector<std::int64_t> sample_lengths(const LengthDistribution& d, std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  const double mu = d.law == LengthLaw::Lognormal ? lognormal_mu(d) : 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double p = (static_cast<double>(i) + 0.5) / static_cast<double>(out.size());
    out[i] = std::llround(quantile_with_mu(d, mu, p));
  }
  std::mt19937_64 rng(seed);
  for (std::size_t i = out.size(); i > 1; --i) {
    std::swap(out[i - 1], out[static_cast<std::size_t>(rng() % i)]);
  }
  return out;
}

std::vector<std::int64_t> draw_lengths(const LengthDistribution& d, std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  const double mu = d.law == LengthLaw::Lognormal ? lognormal_mu(d) : 0.0;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (auto& l : out) {
    const double p = std::clamp(uniform(rng), 1e-12, 1.0 - 1e-12);
    l = std::llround(quantile_with_mu(d, mu, p));
  }
  return out;
}

double capped_mean(const LengthDistribution& d) {
  const double mu = d.law == LengthLaw::Lognormal ? lognormal_mu(d) : 0.0;
  constexpr int kStrata = 2000;
  double sum = 0.0;
  for (int i = 0; i < kStrata; ++i) sum += quantile_with_mu(d, mu, (i + 0.5) / kStrata);
  return sum / kStrata;
}

double truncated_fraction(const LengthDistribution& d) {
  const double mu = d.law == LengthLaw::Lognormal ? lognormal_mu(d) : 0.0;
  switch (d.law) {
    case LengthLaw::Fixed: return d.mean >= static_cast<double>(d.cap) ? 1.0 : 0.0;
    case LengthLaw::Uniform: return std::max(0.0, 1.0 - static_cast<double>(d.cap) / (2.0 * d.mean));
    case LengthLaw::Lognormal: {
      const double z = (std::log(static_cast<double>(d.cap)) - mu) / d.sigma;
      return 0.5 * std::erfc(z / std::sqrt(2.0));
    }
  }
  return 0.0;
}

std::string to_string(LengthLaw law) {
  switch (law) {
    case LengthLaw::Fixed: return "fixed";
    case LengthLaw::Uniform: return "uniform";
    case LengthLaw::Lognormal: return "lognormal";
  }
  return "?";
}

}  // namespace fmsim::rl
