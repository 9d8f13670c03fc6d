// Candidate values per dimension and the divisibility rules applied before any costing.
#include "planner/search_space.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fmsim::planner {
namespace {

using parallelism::Recompute;
using parallelism::Sharding;

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

std::vector<int> tp_candidates(const SearchSpace& space, const hardware::ClusterSpec& cluster, int gpus) {
  const int cap = space.max_tp > 0 ? space.max_tp : std::max(8, cluster.system.nvlink_domain_gpus);
  std::vector<int> base = space.tp.empty() ? powers_of_two_up_to(cap) : space.tp;
  std::erase_if(base, [&](int v) { return v < 1 || v > cap || v > gpus; });
  return base;
}

std::vector<int> pp_candidates(const SearchSpace& space, const workload::ModelSpec& model) {
  std::vector<int> out;
  if (space.pp.empty()) {
    // Uneven splits are allowed (the remainder goes to some stages); the GPU count filters pp further.
    for (int v = 1; v <= std::min(space.max_pp, model.num_layers); ++v) out.push_back(v);
  } else {
    for (int v : space.pp) {
      if (v >= 1 && v <= space.max_pp) out.push_back(v);
    }
  }
  return out;
}

std::vector<int> vp_candidates(const SearchSpace& space, const workload::ModelSpec& model, int pp) {
  if (!space.vp.empty()) return space.vp;
  // Interleaving only where pp*vp splits the layers evenly (Megatron's interleaved schedule), or
  // the layers with the embedding and the loss as two more slots (Megatron-Core's
  // account_for_embedding/loss_in_pipeline_split: Llama 3.1 405B's 126 + 2 over pp 16 x vp 8).
  std::vector<int> out{1};
  if (pp <= 1) return out;
  for (int v = 2; v <= kMaxVirtualStages && pp * v <= model.num_layers + 2; ++v) {
    if (model.num_layers % (pp * v) == 0 || (model.num_layers + 2) % (pp * v) == 0) out.push_back(v);
  }
  return out;
}

std::vector<int> cp_candidates(const SearchSpace& space, std::int64_t seq_len) {
  if (!space.cp.empty()) return space.cp;
  std::vector<int> out;
  for (int v = 1; v <= 32; v *= 2) {
    if (v == 1 || seq_len / v >= kMinCpChunk) out.push_back(v);
  }
  return out;
}

std::vector<int> ep_candidates(const SearchSpace& space, const workload::ModelSpec& model) {
  if (!space.ep.empty()) return space.ep;
  if (!model.is_moe()) return {1};
  return powers_of_two_up_to(model.moe.num_experts);
}

}  // namespace

std::vector<Shape> enumerate_shapes(const workload::ModelSpec& model, int gpus, std::int64_t seq_len,
                                    const SearchSpace& space, const hardware::ClusterSpec& cluster) {
  std::vector<Shape> out;
  if (gpus < 1) return out;
  const auto tps = tp_candidates(space, cluster, gpus);
  const auto cps = cp_candidates(space, seq_len);
  const auto pps = pp_candidates(space, model);
  const auto eps = ep_candidates(space, model);
  for (int tp : tps) {
    // The same rules as parallelism::why_invalid, as integer tests (no message formatting).
    if (model.num_heads % tp != 0) continue;
    if (model.num_kv_heads % tp != 0 && tp % model.num_kv_heads != 0) continue;
    for (int cp : cps) {
      if (cp < 1 || seq_len % cp != 0) continue;
      for (int pp : pps) {
        const long mp = static_cast<long>(tp) * pp * cp;
        if (mp > gpus || gpus % mp != 0) continue;
        const int dp = static_cast<int>(gpus / mp);
        for (int vp : vp_candidates(space, model, pp)) {
          if (vp < 1 || pp * vp > model.num_layers + 2) continue;
          if (pp * vp > model.num_layers && (model.num_layers + 2) % (pp * vp) != 0) continue;
          if (vp > 1 && pp == 1) continue;
          const bool slots = model.num_layers % (pp * vp) != 0 && (model.num_layers + 2) % (pp * vp) == 0;
          for (int ep : eps) {
            if (ep < 1) continue;
            if (!model.is_moe()) {
              if (ep > 1) continue;
              out.push_back(
                  Shape{.tp = tp, .pp = pp, .vp = vp, .cp = cp, .ep = 1, .etp = 1, .dp = dp, .pipeline_slots = slots});
              continue;
            }
            if (model.moe.num_experts % ep != 0) continue;
            // MoE parallel folding (Megatron-Core): expert layers fold etp x ep x expert-dp over the
            // tp x cp x dp ranks, so ep may exceed dp x cp; etp is searched at 1 and at tp.
            for (int etp : {1, tp}) {
              if (etp > 1 && model.moe.expert_ffn % etp != 0) continue;
              if ((tp * cp * dp) % (ep * etp) == 0) {
                out.push_back(Shape{
                    .tp = tp, .pp = pp, .vp = vp, .cp = cp, .ep = ep, .etp = etp, .dp = dp, .pipeline_slots = slots});
              }
              if (tp == 1) break;
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Variant> enumerate_variants(const SearchSpace& space, const hardware::GpuSpec& gpu) {
  const std::vector<Sharding> shardings =
      space.sharding.empty()
          ? std::vector<Sharding>{Sharding::None, Sharding::DistributedOptimizer, Sharding::Zero2, Sharding::Zero3}
          : space.sharding;
  const std::vector<int> mbs = space.micro_batch.empty() ? std::vector<int>{1, 2, 4, 8} : space.micro_batch;
  const std::vector<Recompute> recomputes =
      space.recompute.empty() ? std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full}
                              : space.recompute;
  std::vector<core::Precision> precisions =
      space.precision.empty() ? std::vector<core::Precision>{core::Precision::BF16, core::Precision::FP8}
                              : space.precision;
  // A precision without tensor-core support would silently run as another one: leave it out.
  std::erase_if(precisions, [&](core::Precision p) { return gpu.peak(p).value() <= 0.0; });
  std::vector<Variant> out;
  out.reserve(shardings.size() * mbs.size() * recomputes.size() * precisions.size());
  for (auto s : shardings) {
    for (int m : mbs) {
      if (m < 1) continue;
      for (auto r : recomputes) {
        for (auto p : precisions)
          out.push_back(Variant{.sharding = s, .micro_batch = m, .recompute = r, .precision = p});
      }
    }
  }
  return out;
}

parallelism::Layout make_layout(const Shape& shape, const Variant& variant, std::int64_t global_batch,
                                const FrameworkSettings& framework) {
  parallelism::Layout l;
  l.tp = shape.tp;
  l.pp = shape.pp;
  l.vp = shape.vp;
  l.cp = shape.cp;
  l.ep = shape.ep;
  l.etp = shape.etp;
  l.dp = shape.dp;
  l.embedding_slot = shape.pipeline_slots;
  l.loss_slot = shape.pipeline_slots;
  l.sequence_parallel = framework.sequence_parallel && shape.tp > 1;
  l.sharding = variant.sharding;
  l.micro_batch = variant.micro_batch;
  l.global_batch = global_batch;
  l.recompute = variant.recompute;
  l.precision = variant.precision;
  l.fp8_recipe = framework.fp8_recipe;
  l.overlap_tp_comm = framework.overlap_tp_comm && shape.tp > 1;
  l.overlap_dp_comm = framework.overlap_dp_comm;
  l.overlap_pp_comm = framework.overlap_pp_comm;
  l.fsdp_prefetch = framework.fsdp_prefetch;
  l.recipe = framework.recipe;
  l.recipe.overlap_ep_comm = l.recipe.overlap_ep_comm && shape.ep > 1;
  l.recipe.fp8_attention = l.recipe.fp8_attention && variant.precision == core::Precision::FP8;
  l.bf16_grad_reduce = framework.bf16_grad_reduce ||
                       (framework.fp16_grad_reduce_in_16_bits && variant.precision == core::Precision::FP16);
  return l;
}

std::string layout_label(const parallelism::Layout& l) {
  std::string out = fmt::format("tp{} pp{}", l.tp, l.pp);
  if (l.vp > 1) out += fmt::format(" vp{}", l.vp);
  if (l.cp > 1) out += fmt::format(" cp{}", l.cp);
  if (l.ep > 1) out += fmt::format(" ep{}", l.ep);
  if (l.etp > 1) out += fmt::format(" etp{}", l.etp);
  const std::string_view rc = l.recompute == Recompute::None        ? "norc"
                              : l.recompute == Recompute::Selective ? "sel"
                                                                    : "full";
  out += fmt::format(" dp{} {} mbs{} {} {}", l.dp, parallelism::to_string(l.sharding), l.micro_batch, rc,
                     core::precision_label(l.precision, l.fp8_recipe));
  return out;
}

}  // namespace fmsim::planner
