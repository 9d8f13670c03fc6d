// Request generation: lengths, arrival times, shared prefixes.
#include "serving/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace fmsim::serving {
namespace {

std::int64_t draw(const LengthDistribution& d, std::mt19937_64& rng) {
  double v = d.mean;
  switch (d.kind) {
    case LengthKind::Fixed: break;
    case LengthKind::Uniform:
      v = std::uniform_real_distribution<double>(d.mean * (1 - d.spread), d.mean * (1 + d.spread))(rng);
      break;
    case LengthKind::Normal: v = std::normal_distribution<double>(d.mean, d.spread * d.mean)(rng); break;
    case LengthKind::LogNormal: v = std::lognormal_distribution<double>(std::log(d.mean), d.spread)(rng); break;
    case LengthKind::Exponential: v = std::exponential_distribution<double>(1.0 / d.mean)(rng); break;
  }
  auto n = static_cast<std::int64_t>(std::llround(v));
  n = std::max<std::int64_t>(1, n);
  if (d.max > 0) n = std::min(n, d.max);
  return n;
}

std::string dist_text(const LengthDistribution& d) {
  switch (d.kind) {
    case LengthKind::Fixed: return fmt::format("{:.0f} fixed", d.mean);
    case LengthKind::Uniform: return fmt::format("{:.0f} uniform +-{:.0f}%", d.mean, 100 * d.spread);
    case LengthKind::Normal: return fmt::format("{:.0f} normal cv {:.2f}", d.mean, d.spread);
    case LengthKind::LogNormal: return fmt::format("{:.0f} lognormal sigma {:.2f}", d.mean, d.spread);
    case LengthKind::Exponential: return fmt::format("{:.0f} exponential", d.mean);
  }
  return "";
}

}  // namespace

std::vector<Request> make_requests(const WorkloadSpec& spec) {
  std::vector<Request> out;
  if (spec.arrival == ArrivalKind::Trace) {
    std::map<std::string, int> groups;
    for (std::size_t i = 0; i < spec.trace.size(); ++i) {
      const auto& t = spec.trace[i];
      Request r;
      r.id = static_cast<int>(i);
      r.arrival_s = t.arrival_s;
      r.input_tokens = t.input_tokens;
      r.output_tokens.assign(std::max(1, spec.samples_per_prompt), t.output_tokens);
      if (!t.prefix_id.empty()) {
        r.prefix_group = groups.emplace(t.prefix_id, static_cast<int>(groups.size())).first->second;
        r.prefix_tokens = t.prefix_tokens > 0 ? std::min(t.prefix_tokens, t.input_tokens) : t.input_tokens;
      }
      out.push_back(std::move(r));
    }
    return out;
  }
  std::mt19937_64 rng(spec.seed);
  std::exponential_distribution<double> gap(spec.rate > 0 ? spec.rate : 1.0);
  double t = 0;
  for (int i = 0; i < spec.num_requests; ++i) {
    Request r;
    r.id = i;
    if (spec.arrival == ArrivalKind::Poisson) {
      t += gap(rng);
      r.arrival_s = t;
    }
    r.input_tokens = draw(spec.input, rng);
    for (int s = 0; s < std::max(1, spec.samples_per_prompt); ++s) r.output_tokens.push_back(draw(spec.output, rng));
    if (spec.shared_prefix_tokens > 0) {
      r.prefix_group = 0;
      r.prefix_tokens = std::min(spec.shared_prefix_tokens, r.input_tokens);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string describe(const WorkloadSpec& spec) {
  std::string arrival;
  switch (spec.arrival) {
    case ArrivalKind::Offline: arrival = fmt::format("offline (all at t=0), {} requests", spec.num_requests); break;
    case ArrivalKind::Poisson:
      arrival = fmt::format("Poisson {:g} req/s, {} requests", spec.rate, spec.num_requests);
      break;
    case ArrivalKind::ClosedLoop:
      arrival = fmt::format("closed loop, concurrency {}, {} requests", spec.concurrency, spec.num_requests);
      break;
    case ArrivalKind::Trace:
      return fmt::format("trace, {} requests{}", spec.trace.size(),
                         spec.samples_per_prompt > 1 ? fmt::format(", n={}", spec.samples_per_prompt) : "");
  }
  return fmt::format(
      "{}, ISL {}, OSL {}{}{}", arrival, dist_text(spec.input), dist_text(spec.output),
      spec.samples_per_prompt > 1 ? fmt::format(", n={} samples per prompt", spec.samples_per_prompt) : "",
      spec.shared_prefix_tokens > 0 ? fmt::format(", {}-token shared prefix", spec.shared_prefix_tokens) : "");
}

}  // namespace fmsim::serving
