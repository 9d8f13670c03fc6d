// `fmsim plan-serve`'s flags resolved and its search run (see plan_serve.hpp).
#include "jobspec/plan_serve.hpp"

#include <algorithm>

#include "collectives/comm_cost.hpp"
#include "config/serving_calibration.hpp"
#include "config/words.hpp"
#include "core/error.hpp"
#include "jobspec/plan.hpp"
#include "serving/iteration_model.hpp"

namespace fmsim::jobspec {

ServingPlan plan_serving(const PlanServeFlags& o, const FlagGiven& given, const hardware::Catalog& catalog) {
  if (o.top < 1) throw core::InputError::flag("--top", "must be at least 1");
  if (o.probe_requests < 20 || o.probe_requests > 100000)
    throw core::InputError::flag("--probe-requests", "allowed 20 to 100,000");
  const auto families = split_comma_list(o.families);
  if (families.empty()) throw core::InputError::flag("--systems", "give at least one system");
  // plan-serve shares serve's flags but searches the systems of --systems: a --cluster was
  // ignored, and an unknown --precision word skipped every family as if it lacked FP8 (exit 0).
  if (given("--cluster"))
    throw core::InputError::flag("--cluster",
                                 "plan-serve searches --systems (e.g. --systems p5en.48xlarge); "
                                 "--cluster is serve's");
  (void)config::word_flag(serving::kServingFormatWords, o.serving.precision, "--precision");
  const bool fixed_tp = given("--tp");
  const bool fixed_ep = given("--ep");
  const bool fixed_dep = given("--dep");
  if (o.serving.rate > 0 && o.serving.concurrency > 0)
    throw core::InputError::flag("--concurrency", "plan-serve takes --rate (the fleet's load)");
  (void)config::load_serving_calibration(o.serving.calibration);  // a bad --calibration fails before the search

  ServingPlan plan;
  auto& req = plan.request;
  for (const auto& fam : families) {
    ServingFlags f = o.serving;
    f.cluster = fam;
    f.rate = 0;
    f.concurrency = 0;
    if (!fixed_tp) f.tp = 1;
    if (!fixed_ep) f.ep = 1;
    if (!fixed_dep) f.dep = false;
    ServingSetup s;
    try {
      s = make_serving_setup(f, catalog);
    } catch (const core::InputError& e) {
      // Only the family's own incompatibilities (no FP8 on the GPU, layout too wide) skip it; a
      // bad model, engine or length is the user's error.
      const std::string what = e.what();
      if (what.find("--precision") == std::string::npos && what.find("--tp") == std::string::npos) throw;
      plan.skipped.push_back(fam + ": " + what);
      continue;
    }
    req.workload = s.workload;
    req.slo = s.slo;
    req.target_rate = o.serving.rate;
    req.requests_per_probe = o.probe_requests;
    req.disaggregated = !o.no_disagg;
    const auto comm = collectives::make_comm_cost(s.deployment.cluster);
    auto layouts = planner::candidate_deployments(s.deployment);
    std::erase_if(layouts, [&](const serving::Deployment& d) {
      return (fixed_tp && d.tp != o.serving.tp) || (fixed_ep && d.ep != o.serving.ep) ||
             (fixed_dep && (d.attention_dp > 1) != o.serving.dep);
    });
    // The longest request any probe draws (one seed: a probe of fewer requests draws a prefix of
    // these): a layout whose whole KV cache cannot hold it would wait for it forever.
    serving::WorkloadSpec drawn = s.workload;
    drawn.num_requests = std::max({req.requests_per_probe, 2 * req.pareto_max_concurrency, 32, drawn.num_requests});
    const auto longest = serving::make_requests(drawn);
    check_output_tokens(longest, !o.serving.requests_file.empty());
    for (const auto& d : layouts) {
      const serving::IterationModel probe(d, comm);
      try {
        check_requests_fit(longest, probe, false);
      } catch (const core::InputError& e) {
        plan.skipped.push_back(fam + " " + planner::layout_label(d) + ": " + e.message());
        continue;
      }
      const planner::ServingCandidate c{d, s.price_per_gpu_hour};
      for (auto& r : planner::evaluate_serving(c, req, comm)) plan.results.push_back(std::move(r));
      if (probe.kv_capacity() > probe.kv_bytes(req.workload.input.mean + req.workload.output.mean)) {
        for (auto& p : planner::pareto_sweep(c, req, comm)) plan.points.push_back(std::move(p));
      }
    }
  }
  planner::rank_plans(plan.results, req);
  plan.front = planner::pareto_front(plan.points);
  return plan;
}

}  // namespace fmsim::jobspec
