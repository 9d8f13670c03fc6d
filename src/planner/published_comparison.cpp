// The planner against published layouts (see published_comparison.hpp).
#include "planner/published_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/precision.hpp"
#include "core/strings.hpp"
#include "parallelism/stack.hpp"
#include "planner/planner.hpp"
#include "planner/search_space.hpp"

namespace fmsim::planner {
namespace {

/// Why a published layout is not among the candidates the planner enumerates (empty when it is).
std::string outside_search_space(const PlanRequest& r, const hardware::ClusterSpec& cluster, int gpus,
                                 const parallelism::Layout& l) {
  const auto sized = sized_cluster(cluster, gpus);
  const auto shapes = enumerate_shapes(r.model, gpus, r.seq_len, r.space, sized);
  const auto variants = enumerate_variants(r.space, sized.gpu);
  std::vector<std::string> why;
  if (l.shard_group > 0) why.push_back(fmt::format("hybrid FSDP shard group {} is not searched", l.shard_group));
  if (l.greedy_split)
    why.push_back("DeepSpeed's pipeline split by layer type is not searched (Megatron's even split is)");
  if (l.balanced_head_layers > 0.0) why.push_back("nanotron's compute-balanced pipeline split is not searched");
  if (l.etp > 1 && l.etp != l.tp) {
    why.push_back(fmt::format("expert tensor parallelism etp {} (other than 1 or tp) is not searched", l.etp));
  }
  const Shape shape{.tp = l.tp,
                    .pp = l.pp,
                    .vp = l.vp,
                    .cp = l.cp,
                    .ep = l.ep,
                    .etp = l.etp,
                    .dp = l.dp,
                    .pipeline_slots = l.embedding_slot && l.loss_slot};
  if ((l.etp == 1 || l.etp == l.tp) && std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) {
    why.push_back(fmt::format("shape tp{} pp{} vp{} cp{} ep{} etp{} is not among the default candidates", l.tp, l.pp,
                              l.vp, l.cp, l.ep, l.etp));
  }
  const bool mbs_searched =
      std::any_of(variants.begin(), variants.end(), [&](const Variant& v) { return v.micro_batch == l.micro_batch; });
  if (!mbs_searched) why.push_back(fmt::format("micro-batch {} is not searched (1, 2, 4, 8)", l.micro_batch));
  return core::join(why, "; ");
}

struct Group {
  std::string model, system;
  int gpus = 0;
  std::vector<const PublishedRun*> runs;
};

}  // namespace

bool PublishedComparison::planner_at_least_as_fast() const {
  return std::isfinite(planner_step_s) && planner_step_s <= published_step_s * (1 + 1e-9);
}

std::vector<PublishedComparison> compare_with_published(const std::vector<PublishedRun>& runs,
                                                        const training::Calibration& calibration,
                                                        const ComparisonOptions& options) {
  // Group runs by everything the planner holds fixed.
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const auto& run : runs) {
    const auto& j = run.job;
    const std::string key =
        fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", run.model, run.system, run.gpus, j.seq_len, j.layout.global_batch,
                    core::to_string(j.layout.precision), static_cast<int>(j.task), j.stack);
    auto [it, inserted] = groups.try_emplace(key, Group{run.model, run.system, run.gpus, {}});
    if (inserted) order.push_back(key);
    it->second.runs.push_back(&run);
  }
  std::vector<PublishedComparison> lines;
  std::size_t done = 0;
  for (const auto& key : order) {
    const auto& g = groups.at(key);
    const auto& job0 = g.runs.front()->job;
    PlanRequest r;
    r.model = job0.model;
    r.systems = {job0.cluster};
    r.gpu_counts = {g.gpus};
    r.seq_len = job0.seq_len;
    r.document_tokens = job0.document_tokens;
    r.global_batch = job0.layout.global_batch;
    r.tokens = 1e12;
    r.task = job0.task;
    r.stack = job0.stack;
    r.top = 1;
    r.threads = options.threads;
    r.space.precision = {job0.layout.precision};
    r.space.max_pp = options.max_pp;
    r.framework.overlap_tp_comm =
        job0.layout.overlap_tp_comm || parallelism::stack_conventions(job0.stack).tp_comm_overlap;
    r.framework.bf16_grad_reduce = job0.layout.bf16_grad_reduce;
    r.framework.fp8_recipe = job0.layout.fp8_recipe;
    r.framework.recipe = job0.layout.recipe;

    PublishedComparison line;
    line.model = g.model;
    line.system = g.system;
    line.precision = std::string(core::to_string(job0.layout.precision));
    line.gpus = g.gpus;
    line.seq_len = r.seq_len;
    line.global_batch = r.global_batch;
    // Best published layout as the simulator predicts it (a group may publish several layouts).
    std::optional<PlannedLayout> published;
    const PublishedRun* published_run = nullptr;
    for (const auto* run : g.runs) {
      auto p = evaluate_layout(r, calibration, run->job.cluster, g.gpus, run->job.layout);
      if (!p.step.feasible) continue;
      if (!published || p.step.step_time.value() < published->step.step_time.value()) {
        published = std::move(p);
        published_run = run;
      }
    }
    if (!published) continue;
    line.published_layout = layout_label(published->layout);
    line.published_step_s = published->step.step_time.value();
    line.published_fits = published->step.fits_memory;
    line.measured_step_s = published_run->measured_step_s.value_or(std::nan(""));
    const auto plan = planner::plan(r, calibration);
    if (options.progress) options.progress(++done, order.size());
    if (plan.systems.front().top.empty()) {
      line.planner_layout = "-";
      line.planner_step_s = std::nan("");
      line.verdict = "planner finds nothing that fits: " + plan.systems.front().empty_reason;
    } else {
      const auto& best = plan.systems.front().top.front();
      line.planner_layout = best.label();
      line.planner_step_s = best.step.step_time.value();
      const double ratio = line.planner_step_s / line.published_step_s;
      if (best.layout.tp == published->layout.tp && best.layout.pp == published->layout.pp &&
          best.layout.cp == published->layout.cp && best.layout.ep == published->layout.ep &&
          best.layout.vp == published->layout.vp && ratio <= 1.0 + 1e-9) {
        line.verdict = "agrees (same tp/pp/vp/cp/ep)";
        if (published->layout.greedy_split || published->layout.balanced_head_layers > 0.0)
          line.verdict += "; the planner splits the pipeline evenly, the published run did not";
      } else if (ratio <= 1.0 + 1e-9) {
        line.verdict = fmt::format("planner {:.0f}% faster", 100.0 * (1.0 / ratio - 1.0));
      } else if (!line.published_fits) {
        line.verdict = "published layout exceeds the memory model; planner keeps to what fits";
      } else {
        const auto why = outside_search_space(r, published_run->job.cluster, g.gpus, published->layout);
        line.verdict =
            "planner slower: " + (why.empty() ? std::string("published layout is outside the search space") : why);
      }
      if (!line.published_fits && ratio <= 1.0 + 1e-9) line.verdict += " (published layout exceeds the memory model)";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace fmsim::planner
