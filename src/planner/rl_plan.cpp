// The RL placement search: placements, generation TP and training layouts of one RL job, each
// step predicted by rl::estimate_rl_step and ranked by step time (planner/ranking.hpp).
#include "planner/rl_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace fmsim::planner {
namespace {

/// Within one search the responses are the same for every candidate, so a rollout depends only
/// on the generator pool (TP, replicas) and the batch's lengths: each is simulated once.
class MemoEngine final : public rl::RolloutEngine {
 public:
  explicit MemoEngine(const RolloutEngine& inner) : inner_(inner) {}
  [[nodiscard]] rl::RolloutResult generate(const rl::GeneratorConfig& gen, const rl::RolloutRequest& req,
                                           const rl::RlCalibration& cal) const override {
    // The lengths are part of the key: an off-policy step simulates several batches.
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the response lengths
    for (const auto l : req.lengths) h = (h ^ static_cast<std::uint64_t>(l)) * 1099511628211ULL;
    h = (h ^ static_cast<std::uint64_t>(req.max_in_flight)) * 1099511628211ULL;
    const auto key = std::make_tuple(gen.tp, gen.replicas, h);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    return memo_.emplace(key, inner_.generate(gen, req, cal)).first->second;
  }
  [[nodiscard]] std::string name() const override { return inner_.name(); }

 private:
  const rl::RolloutEngine& inner_;
  mutable std::map<std::tuple<int, int, std::uint64_t>, rl::RolloutResult> memo_;
};

}  // namespace

RankKey rank_key(const RlPlanCandidate& candidate) {
  return {.feasible = candidate.result.feasible && candidate.result.train.fits_memory,
          .key = candidate.result.step_time.value()};
}

std::vector<RlPlanCandidate> plan_rl(const rl::RlJob& base, const training::Calibration& calibration,
                                     const rl::RlCalibration& cal, const rl::RolloutEngine& inner, std::size_t keep) {
  std::vector<RlPlanCandidate> out;
  const MemoEngine engine(inner);
  const int gpus = base.job_gpus();
  const int node = std::max(1, base.cluster.gpus_per_node());
  std::vector<std::pair<rl::Placement, int>> placements{{rl::Placement::Colocated, 0}};
  for (int quarter = 1; quarter <= 3; ++quarter) {
    int g = gpus * quarter / 4 / node * node;
    if (gpus < 4 * node) g = gpus * quarter / 4;
    if (g >= 1 && g < gpus) placements.emplace_back(rl::Placement::Disaggregated, g);
  }
  const int domain = base.cluster.nvlink_domain_gpus();
  for (const auto& [placement, gen_gpus] : placements) {
    for (int gtp = 1; gtp <= std::min(domain, 8); gtp *= 2) {
      for (int ttp = 1; ttp <= std::min(domain, 8); ttp *= 2) {
        for (int pp : {1, 2, 4}) {
          rl::RlJob j = base;
          j.placement = placement;
          j.generator_gpus = gen_gpus;
          // The user's synchrony is kept: time-shared GPUs cannot overlap generation and training.
          if (placement == rl::Placement::Colocated && base.synchrony != rl::Synchrony::OnPolicy) continue;
          j.generator_tp = gtp;
          j.train_layout.tp = ttp;
          j.train_layout.pp = pp;
          j.train_layout.vp = 1;
          auto res = rl::estimate_rl_step(j, calibration, cal, engine);
          if (!res.feasible || !res.train.fits_memory) continue;
          out.push_back({std::move(j), std::move(res)});
        }
      }
    }
  }
  rank(out, [](const RlPlanCandidate& c) { return rank_key(c); });
  if (out.size() > keep) out.resize(keep);
  return out;
}

}  // namespace fmsim::planner
