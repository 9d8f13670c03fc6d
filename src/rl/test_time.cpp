#include "rl/test_time.hpp"

#include <algorithm>

namespace fmsim::rl {

std::string to_string(TtcMethod m) { return std::string(kTtcMethodWords.name(m)); }

TtcResult estimate_test_time(const TtcJob& job, const RlCalibration& cal, const RolloutEngine& engine) {
  TtcResult r;
  const int n = job.method == TtcMethod::Single ? 1 : std::max(1, job.n);
  RolloutRequest req;
  req.prompts = job.queries;
  req.samples_per_prompt = n;
  req.prompt_len = job.prompt_len;
  req.lengths = sample_lengths(job.lengths, job.queries * n, 7);
  r.rollout = engine.generate(job.generator, req, cal);
  if (!r.rollout.feasible) {
    r.reason = r.rollout.reason;
    return r;
  }
  const double generated = r.rollout.generated_tokens / static_cast<double>(job.queries);
  // Verifier work, in prefill tokens of a same-size scorer: best-of-n scores every full response;
  // search scores every beam after every step (its prefix is cached, so only the new step).
  double verifier_tokens = 0.0;
  if (job.method == TtcMethod::BestOfN) verifier_tokens = generated + static_cast<double>(n * job.prompt_len);
  if (job.method == TtcMethod::VerifierSearch)
    verifier_tokens = generated + static_cast<double>(n * job.search_steps * job.verifier_tokens_per_step);
  r.tokens_per_query = generated + verifier_tokens;
  const int gpus = job.generator.tp * job.generator.replicas;
  // The verifier reads its tokens as prefill on the same pool (a scorer of the policy's size).
  const double verifier_s =
      verifier_tokens * static_cast<double>(job.queries) / std::max(1.0, r.rollout.prefill_tokens_per_s);
  r.latency = r.rollout.makespan + core::Seconds(verifier_s);
  r.gpu_seconds_per_query = r.latency.value() * gpus / static_cast<double>(job.queries);
  r.usd_per_query = r.gpu_seconds_per_query * job.price_per_gpu_hour / 3600.0;
  r.feasible = true;
  return r;
}

}  // namespace fmsim::rl
