#include "rl/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "workload/parameter_count.hpp"

namespace fmsim::rl {

core::Bytes kv_bytes_per_token_per_gpu(const workload::ModelSpec& model, int tp, core::Precision p) {
  const double bpv = core::bytes_per_value(p);
  if (model.mla) {
    // MLA caches the compressed latent and the rope key once per layer, replicated on TP ranks.
    return core::Bytes(model.num_layers * static_cast<double>(model.mla->kv_lora_rank + model.mla->qk_rope_head_dim) * bpv);
  }
  const int shards = std::max(1, std::min(tp, model.num_kv_heads));
  return core::Bytes(model.num_layers * 2.0 * model.num_kv_heads * model.head_dim * bpv / shards);
}

namespace {

/// Costs of one decode iteration on one replica, as functions of batch B and summed context C.
struct IterationModel {
  double dense_bytes = 0.0;        // per GPU, read every iteration (non-expert weights)
  double expert_bytes = 0.0;       // per GPU, one routed expert of every MoE layer
  int experts = 0, top_k = 0, moe_layers = 0;
  double kv_bytes_per_ctx = 0.0;   // per GPU per context token
  double hbm = 1.0;                // effective bytes/s
  double flops_per_token = 0.0;    // per GPU (linear layers)
  double flops_per_ctx = 0.0;      // per GPU per context token (attention scores and values)
  double peak = 1.0;               // effective FLOP/s
  double fixed = 0.0, per_seq = 0.0;

  [[nodiscard]] double weights_touched(double batch) const {
    if (experts <= 0) return dense_bytes;
    const double touched = experts * (1.0 - std::pow(1.0 - static_cast<double>(top_k) / experts, batch));
    return dense_bytes + moe_layers * touched * expert_bytes;
  }
  /// Time of `steps` iterations at batch B starting from context C0 (C grows by B per iteration).
  [[nodiscard]] double span(double batch, double c0, double steps) const {
    const double ctx_sum = steps * c0 + batch * steps * (steps - 1.0) / 2.0;
    const double mem = (steps * weights_touched(batch) + kv_bytes_per_ctx * ctx_sum) / hbm;
    const double comp = (steps * batch * flops_per_token + flops_per_ctx * ctx_sum) / peak;
    return std::max(mem, comp) + steps * (fixed + per_seq * batch);
  }
};

}  // namespace

RolloutResult ContinuousBatchingEngine::generate(const GeneratorConfig& gen, const RolloutRequest& req,
                                                 const RlCalibration& cal) const {
  RolloutResult r;
  const auto& m = gen.model;
  const auto params = workload::count_parameters(m);
  const double bpv = core::bytes_per_value(gen.precision);
  const int tp = std::max(1, gen.tp);
  const int replicas = std::max(1, gen.replicas);

  IterationModel it;
  const double expert_total = static_cast<double>(params.routed_experts);
  it.dense_bytes = (static_cast<double>(params.total) - expert_total) * bpv / tp;
  if (m.is_moe() && params.moe_layers > 0) {
    it.experts = m.moe.num_experts;
    it.top_k = m.moe.top_k;
    it.moe_layers = params.moe_layers;
    it.expert_bytes = static_cast<double>(params.expert) * bpv / tp;
  }
  it.kv_bytes_per_ctx = kv_bytes_per_token_per_gpu(m, tp, gen.precision).value();
  it.hbm = gen.gpu.hbm_bandwidth.value() * cal.decode_memory_efficiency;
  it.flops_per_token = 2.0 * static_cast<double>(params.active) / tp;
  const double qk_v_dim = m.mla ? static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim + m.mla->v_head_dim)
                                : 2.0 * m.head_dim;
  it.flops_per_ctx = 2.0 * m.num_layers * m.num_heads * qk_v_dim / tp;
  const auto peak_p = gen.gpu.peak(gen.precision).value() > 0 ? gen.precision : core::Precision::BF16;
  it.peak = gen.gpu.peak(peak_p).value() * cal.prefill_efficiency;
  it.fixed = cal.decode_step_overhead.value() + (tp > 1 ? 2.0 * m.num_layers * gen.tp_allreduce.value() : 0.0);
  it.per_seq = cal.decode_per_sequence_overhead.value();

  const double weights_per_gpu = static_cast<double>(params.total) * bpv / tp;
  r.weights_per_gpu = core::Bytes(weights_per_gpu);
  const double budget = gen.gpu.hbm_usable.value() * cal.gpu_memory_utilization - weights_per_gpu -
                        core::gib(1.0).value();  // activations and CUDA graphs
  const std::size_t n = req.lengths.size();
  double mean_len = 0.0;
  for (auto l : req.lengths) mean_len += static_cast<double>(l);
  mean_len = n ? mean_len / static_cast<double>(n) : 0.0;
  if (budget <= 0.0) {
    r.reason = "the weights (" + std::to_string(weights_per_gpu / 1e9).substr(0, 5) +
               " GB per GPU) leave no KV cache within gpu_memory_utilization; raise the generation TP";
    return r;
  }
  const double per_seq_tokens = static_cast<double>(req.prompt_len) + mean_len;
  const double kv_tokens = budget / it.kv_bytes_per_ctx;
  const int limit = static_cast<int>(std::min<double>(cal.max_num_seqs, std::floor(kv_tokens / std::max(1.0, per_seq_tokens))));
  if (limit < 1) {
    r.reason = "the KV cache cannot hold one sequence of prompt + mean response; raise the generation TP";
    return r;
  }
  r.concurrency = limit;
  r.feasible = true;

  const double prefill_per_seq = static_cast<double>(req.prompt_len) / std::max(1, req.samples_per_prompt);
  const double prefill_time_per_seq = prefill_per_seq * it.flops_per_token / it.peak;
  // Sustained rate with every slot busy: each running sequence is on average halfway through.
  {
    const double c = limit * (static_cast<double>(req.prompt_len) + mean_len / 2.0);
    const double t = it.span(limit, c, 1.0) + limit * prefill_time_per_seq / std::max(1.0, mean_len);
    r.full_rate_tokens_per_s = replicas * limit / t;
  }

  double longest = -1.0, busy_sum = 0.0, time_sum = 0.0, peak_ctx = 0.0;
  std::size_t longest_replica = 0;
  std::vector<std::vector<BatchSegment>> segs(static_cast<std::size_t>(std::min<std::size_t>(replicas, n ? n : 1)));
  std::vector<double> finish(segs.size(), 0.0);
  for (std::size_t rep = 0; rep < segs.size(); ++rep) {
    std::vector<std::int64_t> mine;
    for (std::size_t i = rep; i < n; i += static_cast<std::size_t>(replicas)) mine.push_back(req.lengths[i]);
    // Min-heap of (finishing iteration, length).
    std::priority_queue<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>,
                        std::greater<>> running;
    std::size_t next = 0;
    std::int64_t step = 0;
    double t = 0.0, ctx = 0.0, busy = 0.0;
    while (next < mine.size() || !running.empty()) {
      while (next < mine.size() && static_cast<int>(running.size()) < limit) {
        running.emplace(step + mine[next], mine[next]);
        ctx += static_cast<double>(req.prompt_len);
        t += prefill_time_per_seq;
        ++next;
      }
      const auto batch = static_cast<double>(running.size());
      const std::int64_t until = running.top().first;
      const double steps = static_cast<double>(until - step);
      const double dt = it.span(batch, ctx, steps);
      segs[rep].push_back({t, t + dt, static_cast<int>(batch)});
      busy += batch / limit * dt;
      t += dt;
      ctx += batch * steps;
      peak_ctx = std::max(peak_ctx, ctx);
      step = until;
      while (!running.empty() && running.top().first == step) {
        ctx -= static_cast<double>(req.prompt_len + running.top().second);
        running.pop();
        ++r.events;
      }
      r.generated_tokens += batch * steps;
    }
    finish[rep] = t;
    busy_sum += busy;
    time_sum += t;
    if (t > longest) {
      longest = t;
      longest_replica = rep;
    }
  }
  r.makespan = core::Seconds(std::max(0.0, longest));
  r.mean_replica_time = core::Seconds(segs.empty() ? 0.0 : time_sum / static_cast<double>(segs.size()));
  // Replicas beyond the requests (more replicas than responses) idle the whole time.
  r.busy_fraction = longest > 0.0 ? busy_sum / (static_cast<double>(replicas) * longest) : 0.0;
  r.prefill_tokens = static_cast<double>(req.prompts) * static_cast<double>(req.prompt_len);
  r.peak_kv_per_gpu = core::Bytes(peak_ctx * it.kv_bytes_per_ctx);
  if (!segs.empty()) r.segments = std::move(segs[longest_replica]);
  return r;
}

}  // namespace fmsim::rl
