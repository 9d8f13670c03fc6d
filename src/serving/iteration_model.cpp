// Per-iteration cost of one model replica: roofline of every GEMM group, attention and
// communication; memory left for the KV cache.
#include "serving/iteration_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "workload/parameter_count.hpp"

namespace fmsim::serving {
namespace {

// The constants of the model that are not calibration data, each with where it comes from.

// Forward workspace per token, in 16-bit elements, at the token budget (vLLM sizes it by
// profiling one forward of max_num_batched_tokens, gpu_model_runner.profile_run): the attention
// side's live tensors counted from the Hugging Face Llama forward (hidden states, residual, norm
// output, Q, K, V, rotated Q/K, attention output, o_proj output: 8-10 x hidden) doubled for the
// residual stream held across the layer boundary and allocator rounding, and the MLP's gate, up,
// activated and down-input tensors (4 x its local width). An estimate of the profiled peak, not a
// measurement.
constexpr double kWorkspaceHiddenElems = 16.0;
constexpr double kWorkspaceFfnElems = 4.0;
// Logits of the sampled rows are held in FP32 (vLLM's sampler upcasts logits to float32 before
// sampling), one row per running sequence.
constexpr double kLogitBytes = 4.0;
// Unfused elementwise traffic per token per layer, in 16-bit elements read plus written: two
// RMSNorms (read and write hidden: 4 x hidden), two residual adds (read two, write one: 6 x
// hidden), RoPE on Q and K (about 2 x hidden) = 12 x hidden; SiLU-and-mul reads gate and up and
// writes one (3 x the local FFN width).
constexpr double kElementwiseHiddenElems = 12.0;
constexpr double kElementwiseFfnElems = 3.0;
// Elementwise kernels reach 80% of HBM bandwidth: the training calibration's memory_efficiency
// (data/calibration/training.yaml: H100 ~2.6-2.9 of 3.35 TB/s, Luo et al. 2024,
// arXiv:2402.13499; B200 ~6.2-6.5 of 8 TB/s).
constexpr double kElementwiseBandwidthShare = 0.8;
// MTP/EAGLE drafting: host work per draft token as a share of one engine iteration's
// (iteration_overhead): the draft head runs inside the same scheduler step (vLLM's EAGLE
// proposer schedules nothing new and samples top-1 only). An estimate, not a measurement.
constexpr double kDraftHostShare = 0.2;

double head_dim_of(const workload::ModelSpec& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / std::max(1, m.num_heads);
}

// Roofline of one group of kernels: the slower of its compute and its memory traffic.
double roofline(double flops, double peak, double bytes, double bandwidth) {
  return std::max(peak > 0 ? flops / peak : 0.0, bandwidth > 0 ? bytes / bandwidth : 0.0);
}

}  // namespace

double Speculation::tokens_per_step() const {
  if (kind == SpeculativeKind::None || draft_tokens <= 0) return 1.0;
  const double a = std::clamp(acceptance_rate, 0.0, 0.999999);
  return (1.0 - std::pow(a, draft_tokens + 1)) / (1.0 - a);
}

double stored_bytes(core::Precision p) {
  if (p == core::Precision::FP4) return 0.5 + 1.0 / 16.0;  // NVFP4: one FP8 scale per 16 values
  return core::bytes_per_value(p);
}

const GpuServingCalibration& ServingCalibration::gpu(hardware::Architecture a) const {
  if (auto it = gpus.find(a); it != gpus.end()) return it->second;
  // Nearest calibrated architecture: Blackwell Ultra falls back to Blackwell, Ampere to Hopper.
  for (auto fb : {hardware::Architecture::Blackwell, hardware::Architecture::Hopper}) {
    if (auto it = gpus.find(fb); it != gpus.end()) return it->second;
  }
  static const GpuServingCalibration fallback;
  return fallback;
}

const EngineProfile* ServingCalibration::engine(const std::string& name) const {
  auto it = engines.find(name);
  return it == engines.end() ? nullptr : &it->second;
}

std::vector<std::string> ServingCalibration::engine_names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : engines) out.push_back(k);
  return out;
}

std::string why_invalid(const Deployment& d) {
  const auto& m = d.model;
  if (d.tp < 1 || d.pp < 1 || d.ep < 1 || d.attention_dp < 1) return "tp, pp, ep and attention-dp must be at least 1";
  if (d.gpus() > d.cluster.gpus()) {
    return fmt::format("tp x pp = {} GPUs but the cluster has {}", d.gpus(), d.cluster.gpus());
  }
  if (d.tp > d.cluster.nvlink_domain_gpus()) {
    return fmt::format("tp {} spans more than one NVLink domain ({} GPUs)", d.tp, d.cluster.nvlink_domain_gpus());
  }
  if (d.pp > m.num_layers) return fmt::format("pp {} exceeds the {} layers", d.pp, m.num_layers);
  if (d.tp % d.ep != 0) return fmt::format("ep {} must divide tp {} (expert TP = tp / ep)", d.ep, d.tp);
  if (d.ep > 1 && !m.is_moe()) return "ep > 1 needs a mixture-of-experts model";
  if (m.is_moe() && m.moe.num_experts % d.ep != 0) {
    return fmt::format("ep {} must divide the {} experts", d.ep, m.moe.num_experts);
  }
  if (d.attention_dp != 1 && d.attention_dp != d.tp) return "attention-dp must be 1 or equal to tp (DEP)";
  if (d.attention_dp == 1 && m.num_heads % d.tp != 0) {
    return fmt::format("tp {} must divide the {} attention heads", d.tp, m.num_heads);
  }
  if (d.speculation.kind != SpeculativeKind::None &&
      (d.speculation.draft_tokens < 1 || d.speculation.acceptance_rate < 0 || d.speculation.acceptance_rate >= 1)) {
    return "speculative decoding needs draft tokens >= 1 and an acceptance rate in [0, 1)";
  }
  return {};
}

IterationModel::IterationModel(const Deployment& d, const collectives::CommCostFn& comm) : d_(d), comm_(comm) {
  const auto& m = d.model;
  const auto pc = workload::count_parameters(m);
  const double L = m.num_layers;
  const double pp = d.pp, tp = d.tp;
  const bool adp = d.attention_dp > 1;
  layers_ = L / pp;
  moe_layers_ = pc.moe_layers / pp;
  // Every layer's mixer: attention, and the Mamba / gated DeltaNet mixers of hybrid models.
  const double attention = static_cast<double>(pc.attention + pc.ssm + pc.linear_attention) / pp;
  const double dense_mlp = static_cast<double>(pc.dense_mlp_per_layer) * pc.dense_layers / pp;
  const double shared = static_cast<double>(pc.shared_expert_per_layer + pc.router_per_layer) * moe_layers_;
  if (adp) {
    dense_weights_rep_ = attention + dense_mlp + shared;
  } else {
    dense_weights_tp_ = (attention + dense_mlp + shared) / tp;
  }
  if (m.is_moe()) {
    experts_local_ = static_cast<double>(m.moe.num_experts) / d.ep;
    expert_params_one_ = static_cast<double>(pc.expert) / (tp / d.ep);
    expert_weights_ = expert_params_one_ * experts_local_ * moe_layers_;
  }
  lm_head_ = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / tp;
  bytes_per_weight_ = stored_bytes(d.weights);
  max_normal_ep_ = expected_max_standard_normal(d.ep);
  bytes_per_kv_ = stored_bytes(d.kv);

  const auto& gpu = d.cluster.gpu;
  const double clock = gpu.power_clock_factor();
  core::Precision compute = d.activations.value_or(d.weights);
  // No FP4 tensor cores (Hopper): FP4 weights are dequantised into BF16 GEMMs (W4A16; TensorRT-LLM's
  // Hopper MoE backend for MXFP4 runs BF16 activations, deployment guide for GPT-OSS).
  if (d.weights == core::Precision::FP4 && gpu.peak(core::Precision::FP4).value() <= 0) compute = core::Precision::BF16;
  if (gpu.peak(compute).value() <= 0) compute = core::Precision::BF16;
  peak_gemm_ = gpu.peak(compute).value() * clock * d.gpu_cal.gemm_efficiency(compute);
  half_dim_ = d.gpu_cal.gemm_half_dim;
  peak_attn_ = gpu.bf16.value() * clock * d.gpu_cal.attention_efficiency;
  hbm_ = gpu.hbm_bandwidth.value();

  // Attention FLOPs per (query, key) pair per layer and KV elements per token per layer.
  const double hd = head_dim_of(m);
  double kv_elems_layer;
  if (m.mla) {
    const auto& a = *m.mla;
    attn_flops_per_pair_ = 2.0 * m.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim);
    // Decode with the absorbed projections: scores over the 576-element latent, values over 512.
    decode_attn_flops_per_ctx_ = 2.0 * m.num_heads * (2.0 * a.kv_lora_rank + a.qk_rope_head_dim);
    kv_elems_layer = a.kv_lora_rank + a.qk_rope_head_dim;
    kv_shard_ = adp ? 1 : 1;  // the latent is shared by all heads: every TP rank holds all of it
  } else {
    attn_flops_per_pair_ = 4.0 * m.num_heads * hd;
    decode_attn_flops_per_ctx_ = attn_flops_per_pair_;
    kv_elems_layer = 2.0 * m.num_kv_heads * hd;
    kv_shard_ = adp ? 1 : std::min(d.tp, std::max(1, m.num_kv_heads));
  }
  // Attention FLOPs are charged per layer: scale by the share of layers that attend (hybrids).
  const double attention_share = static_cast<double>(pc.attention_layers) / L;
  attn_flops_per_pair_ *= attention_share;
  decode_attn_flops_per_ctx_ *= attention_share;
  int sliding = 0;
  for (int i = 0; i < m.num_layers; ++i) sliding += m.is_sliding_layer(i) ? 1 : 0;
  window_ = m.sliding_window;
  // Only attention layers keep a KV cache (a hybrid's Mamba / DeltaNet layers keep a fixed-size
  // state per sequence instead, not modelled here).
  const double attention_layers = pc.attention_layers;
  kv_elems_full_ = kv_elems_layer * (attention_layers - sliding) / pp / kv_shard_;
  kv_elems_window_ = kv_elems_layer * sliding / pp / kv_shard_;

  // Memory of one GPU.
  const auto& e = d.engine;
  memory_.weights = core::Bytes((dense_weights_tp_ + dense_weights_rep_ + expert_weights_) * bytes_per_weight_ +
                                (lm_head_ + (m.tied_embeddings ? 0.0 : lm_head_)) * 2.0);
  const double ffn_local = std::max<double>(m.ffn_hidden / tp, m.is_moe() ? m.moe.expert_ffn * m.moe.top_k / tp : 0.0);
  memory_.activations =
      core::Bytes(e.max_num_batched_tokens * (kWorkspaceHiddenElems * m.hidden + kWorkspaceFfnElems * ffn_local) * 2.0 +
                  static_cast<double>(e.max_num_seqs) * m.vocab / tp * kLogitBytes);
  memory_.graphs = d.cuda_graphs ? e.graph_memory : core::Bytes(0.0);
  if (e.memory_fraction_of == MemoryFractionOf::Free) {
    memory_.usable = gpu.hbm_usable;
    memory_.kv_cache =
        (memory_.usable - memory_.weights - memory_.activations - memory_.graphs) * e.gpu_memory_utilization;
  } else {
    memory_.usable = gpu.hbm_usable * e.gpu_memory_utilization;
    memory_.kv_cache = memory_.usable - memory_.weights - memory_.activations - memory_.graphs;
  }
  memory_.kv_bytes_per_token = core::Bytes((kv_elems_full_ + kv_elems_window_) * bytes_per_kv_);
  memory_.kv_bytes_per_token_window = core::Bytes(kv_elems_window_ * bytes_per_kv_);
  // A hybrid's recurrent layers keep a fixed state per sequence instead of a KV cache: the SSM
  // state (heads x head_dim x state, fp32: Nemotron-H's mamba_ssm_cache_dtype) and the conv
  // window (K - 1 inputs, 16-bit), split over TP; the engine reserves one per running sequence.
  {
    double per_seq = 0.0;
    if (m.ssm) {
      const auto& s = *m.ssm;
      const double conv = (s.version == 2 ? s.inner + 2.0 * s.groups * s.state : static_cast<double>(s.inner)) *
                          (s.conv_kernel - 1) * 2.0;
      const double state = static_cast<double>(s.inner) * s.state * 4.0;
      per_seq += pc.ssm_layers * (conv + state);
    }
    if (m.linear) {
      const auto& a = *m.linear;
      const double conv = (2.0 * a.key_heads * a.key_head_dim + static_cast<double>(a.value_heads) * a.value_head_dim) *
                          (a.conv_kernel - 1) * 2.0;
      const double state = static_cast<double>(a.value_heads) * a.key_head_dim * a.value_head_dim * 4.0;
      per_seq += pc.linear_attention_layers * (conv + state);
    }
    ssm_state_bytes_ = per_seq / pp / tp;
    memory_.kv_cache -= core::Bytes(static_cast<double>(e.max_num_seqs) * ssm_state_bytes_);
  }
  kv_capacity_ = std::max(0.0, memory_.kv_cache.value()) * (adp ? d.attention_dp : 1);
  memory_.token_capacity =
      memory_.kv_bytes_per_token.value() > 0 ? kv_capacity_ / memory_.kv_bytes_per_token.value() : 0.0;

  // Communication tables: time at 2^i tokens.
  for (std::size_t i = 0; i < ar_table_.size(); ++i) {
    const double tokens = std::ldexp(1.0, static_cast<int>(i));
    const double act = tokens * m.hidden * 2.0;
    if (d.tp > 1 && !adp) {
      // The engine picks the fastest of its custom kernels and NCCL for the size: one-shot (every
      // rank reads the other tp-1 buffers whole: one latency, (tp-1) x bytes in), two-shot
      // (reduce-scatter then all-gather through peer memory: two latencies, 2 (tp-1)/tp x bytes,
      // as a ring) and the NCCL collectives model.
      ar_table_[i] = comm_(collectives::Op::AllReduce, {d.tp, 1}, core::Bytes(act)).value();
      if (e.allreduce_latency.value() > 0) {
        const double link = gpu.nvlink_per_direction().value();
        const double latency = e.allreduce_latency.value();
        const double one_shot = latency + act * (tp - 1) / link;
        const double two_shot = 2 * latency + 2 * act * (tp - 1) / tp / link;
        ar_table_[i] = std::min({ar_table_[i], one_shot, two_shot});
      }
    }
    if (adp && m.is_moe() && d.ep > 1) {
      // Dispatch (FP8 activations) and combine (BF16) of each rank's tokens, top-k copies each.
      const double send = tokens * m.moe.top_k * m.hidden;
      a2a_table_[i] = comm_(collectives::Op::AllToAll, {d.ep, 1}, core::Bytes(send * 1.0)).value() +
                      comm_(collectives::Op::AllToAll, {d.ep, 1}, core::Bytes(send * 2.0)).value();
    }
  }
}

namespace {
double interpolate(const std::array<double, 18>& table, double tokens) {
  if (tokens <= 0) return 0.0;
  if (tokens <= 1) return table[0];
  const double l = std::log2(tokens);
  const auto i = static_cast<std::size_t>(std::min<double>(std::floor(l), table.size() - 2));
  const double lo = std::ldexp(1.0, static_cast<int>(i)), hi = 2 * lo;
  if (tokens >= std::ldexp(1.0, static_cast<int>(table.size() - 1))) {
    return table.back() * tokens / std::ldexp(1.0, static_cast<int>(table.size() - 1));
  }
  return table[i] + (table[i + 1] - table[i]) * (tokens - lo) / (hi - lo);
}
}  // namespace

int IterationModel::graph_batch(int batch) const {
  const auto& sizes = d_.engine.cuda_graph_batch_sizes;
  if (!sizes.empty()) {
    const auto it = std::lower_bound(sizes.begin(), sizes.end(), batch);
    return it == sizes.end() ? batch : *it;
  }
  if (batch <= 1) return 1;
  if (batch <= 2) return 2;
  if (batch <= 4) return 4;
  return (batch + 7) / 8 * 8;
}

double IterationModel::kv_bytes(double ctx) const {
  const double bs = d_.engine.block_size;
  const double full = std::ceil(ctx / bs) * bs * kv_elems_full_;
  const double win = kv_elems_window_ > 0 ? std::ceil(std::min(ctx, window_ + bs) / bs) * bs * kv_elems_window_ : 0.0;
  return (full + win) * bytes_per_kv_;
}

double IterationModel::ep_imbalance(double tokens) const {
  if (d_.ep <= 1 || !d_.model.is_moe() || tokens <= 0) return 0.0;
  const double ep = d_.ep, k = d_.model.moe.top_k, E = d_.model.moe.num_experts;
  const double mean = tokens * k / ep;  // routed (token, expert) pairs per EP rank
  // Two sources of spread of one rank's load: multinomial sampling of the routing, variance
  // mean (1 - 1/ep), and the unequal popularity of experts: with a per-expert load CV c, a rank
  // holding E/ep experts carries a relative spread c / sqrt(E/ep).
  const double pop = d_.moe_cal.expert_load_cv / std::sqrt(E / ep);
  const double var = mean * (1.0 - 1.0 / ep) + mean * mean * pop * pop;
  const double excess = max_normal_ep_ * std::sqrt(var) / mean;
  // The busiest rank cannot take more than every token's copies bound for it: min(k, E/ep) per token.
  return std::min(excess, std::min(k, E / ep) * ep / k - 1.0);
}

core::Seconds IterationModel::attention_time(const LocalWork& lw, double heads_share) const {
  // Prefill is compute-bound flash attention; decode streams the KV cache.
  const double full_frac =
      kv_elems_full_ + kv_elems_window_ > 0 ? kv_elems_full_ / (kv_elems_full_ + kv_elems_window_) : 1.0;
  const double win_frac = 1.0 - full_frac;
  const double prefill_pairs = lw.prefill_attn_full * full_frac + lw.prefill_attn_window * win_frac;
  const double prefill_flops = attn_flops_per_pair_ * prefill_pairs * layers_ / heads_share;
  const double decode_kv = lw.decode_ctx_full * kv_elems_full_ + lw.decode_ctx_window * kv_elems_window_;
  const double decode_ctx = lw.decode_ctx_full * full_frac + lw.decode_ctx_window * win_frac;
  const double decode_flops = decode_attn_flops_per_ctx_ * decode_ctx * lw.per_seq * layers_ / heads_share;
  return core::Seconds(prefill_flops / peak_attn_ + roofline(decode_flops, peak_attn_, decode_kv * bytes_per_kv_,
                                                             hbm_ * d_.gpu_cal.kv_read_efficiency));
}

core::Seconds IterationModel::decode_attention(double ctx_full, double ctx_window) const {
  const double per_seq = d_.speculation.kind == SpeculativeKind::None ? 1.0 : 1.0 + d_.speculation.draft_tokens;
  core::Seconds a = attention_time({0.0, ctx_full, ctx_window, 0.0, 0.0, per_seq}, d_.tp);
  if (d_.pp > 1) {
    const double scale = d_.pp;  // as iteration() scales it: a token crosses every stage in turn
    a *= scale;
  }
  return a;
}

IterationModel::LocalCost IterationModel::local_cost(const LocalWork& lw, double heads_share) const {
  LocalCost c;
  const auto& m = d_.model;
  const auto& cal = d_.gpu_cal;
  const double weight_bw = hbm_ * cal.weight_read_efficiency;
  const double bpw = bytes_per_weight_;
  auto g = [&](double rows) { return rows / (rows + half_dim_); };
  const double t = lw.tokens;
  // Dense GEMMs: every GPU multiplies its tp slice by all tokens, or (attention DP) its full
  // weights by its own rank's tokens. A GEMM of m token rows runs at g(m) = m / (m + gemm_half_dim)
  // of its large-shape rate.
  c.linear =
      core::Seconds(roofline(2.0 * t * dense_weights_tp_, peak_gemm_ * g(t), dense_weights_tp_ * bpw, weight_bw) +
                    roofline(2.0 * t * dense_weights_rep_, peak_gemm_ * g(t), dense_weights_rep_ * bpw, weight_bw));
  c.attention = attention_time(lw, heads_share);
  // Elementwise work: norms, residuals, activation function, RoPE (16-bit, read + write).
  const double ffn_local = m.is_moe() ? m.moe.expert_ffn * m.moe.top_k / static_cast<double>(d_.tp)
                                      : m.ffn_hidden / static_cast<double>(d_.tp);
  c.other = core::Seconds(t * layers_ * (kElementwiseHiddenElems * m.hidden + kElementwiseFfnElems * ffn_local) * 2.0 /
                          (hbm_ * kElementwiseBandwidthShare));
  return c;
}

IterationCost IterationModel::iteration(const BatchWork& w, std::span<const BatchWork> ranks) const {
  IterationCost c;
  const auto& m = d_.model;
  const auto& e = d_.engine;
  const auto& cal = d_.gpu_cal;
  const double per_seq = d_.speculation.kind == SpeculativeKind::None ? 1.0 : 1.0 + d_.speculation.draft_tokens;
  const int decode_tokens = static_cast<int>(w.decode_seqs * per_seq);
  const bool decode_only = w.prefill_tokens == 0;
  const double adp = d_.attention_dp;
  const bool per_rank = adp > 1 && static_cast<double>(ranks.size()) == adp;
  // Attention DP: every rank replays the same captured graph size, the one of the busiest rank.
  int max_rank_decode = 0;
  if (per_rank) {
    for (const auto& r : ranks) max_rank_decode = std::max(max_rank_decode, r.decode_seqs);
  }
  const bool graph =
      d_.cuda_graphs && decode_only && (per_rank ? max_rank_decode : w.decode_seqs) <= e.cuda_graph_max_batch;
  double tokens = (graph ? graph_batch(decode_tokens) : decode_tokens) + static_cast<double>(w.prefill_tokens);
  if (tokens <= 0) return c;
  const double weight_bw = hbm_ * cal.weight_read_efficiency;
  const double bpw = bytes_per_weight_;
  auto g = [&](double rows) { return rows / (rows + half_dim_); };

  // Rank-local work (dense layers, attention, elementwise). Attention DP: the ranks meet at every
  // MoE layer's dispatch, so the busiest rank sets the pace. Without the per-rank split, the
  // work is taken as evenly spread.
  double busiest_tokens = tokens / adp;
  LocalCost local;
  if (per_rank) {
    const int padded = graph ? graph_batch(static_cast<int>(max_rank_decode * per_seq)) : 0;
    tokens = 0;
    core::Seconds worst(-1);
    for (const auto& r : ranks) {
      LocalWork lw{(graph ? padded : r.decode_seqs * per_seq) + static_cast<double>(r.prefill_tokens),
                   r.decode_ctx_full,
                   r.decode_ctx_window,
                   r.prefill_attn_full,
                   r.prefill_attn_window,
                   per_seq};
      tokens += lw.tokens;
      const LocalCost lc = local_cost(lw, 1.0);
      if (lc.total() > worst) {
        worst = lc.total();
        local = lc;
      }
      busiest_tokens = std::max(busiest_tokens, lw.tokens);
    }
  } else if (adp > 1) {
    local = local_cost({tokens / adp, w.decode_ctx_full / adp, w.decode_ctx_window / adp, w.prefill_attn_full / adp,
                        w.prefill_attn_window / adp, per_seq},
                       1.0);
  } else {
    local = local_cost(
        {tokens, w.decode_ctx_full, w.decode_ctx_window, w.prefill_attn_full, w.prefill_attn_window, per_seq}, d_.tp);
  }
  c.linear = local.linear;
  c.attention = local.attention;
  c.other = local.other;
  // Recurrent state: each decode step reads and writes it, each prefill chunk writes it.
  if (ssm_state_bytes_ > 0) {
    const double seqs = (2.0 * w.decode_seqs + w.prefill_seqs) / std::max(1.0, adp);
    c.other += core::Seconds(seqs * ssm_state_bytes_ / (hbm_ * cal.weight_read_efficiency));
  }
  // LM head (BF16) for the tokens that are sampled.
  const double sampled = std::max(1.0, w.sampled * per_seq);
  const double peak16 = d_.cluster.gpu.bf16.value() * d_.cluster.gpu.power_clock_factor() * cal.gemm_efficiency_bf16;
  c.linear += core::Seconds(roofline(2.0 * sampled * lm_head_, peak16 * g(sampled), lm_head_ * 2.0, weight_bw) / d_.pp);
  // Routed experts: tokens x top_k (token, expert) pairs; only experts that receive at least one
  // token are read: E_local (1 - (1 - k/E)^T). The busiest EP rank sets the pace: it carries
  // (1 + imbalance) times the mean load (ep_imbalance).
  const double imbalance = ep_imbalance(tokens);
  if (expert_weights_ > 0) {
    const double k = m.moe.top_k, E = m.moe.num_experts;
    const double active = 1.0 - std::pow(1.0 - k / E, tokens);
    // The FLOPs are tokens x k / E rows for every local expert (on the busiest rank); the grouped
    // GEMM runs only the experts that receive a token, each with tokens x k / (E x active) rows,
    // and it is those rows that fill or under-fill the MMA tiles.
    const double rows = tokens * k / E * (1.0 + imbalance);
    const double rows_per_active = rows / std::max(active, 1e-12);
    // The grouped GEMM tiles the token rows by the MoE kernels' tile (small at decode-sized steps).
    const auto& mc = d_.moe_cal;
    const double tile = tokens <= E ? mc.grouped_gemm_small_tile : mc.grouped_gemm_tile;
    const double fill = tile > 0 ? rows_per_active / (rows_per_active + tile) : g(rows_per_active);
    c.experts = core::Seconds(
        roofline(2.0 * rows * expert_weights_, peak_gemm_ * fill, expert_weights_ * active * bpw, weight_bw));
  }
  // Communication. The dispatch/combine of the busiest EP rank (it receives (1 + imbalance) times
  // the mean) after the busiest attention rank has sent its tokens.
  c.tp_comm = core::Seconds(2.0 * layers_ * interpolate(ar_table_, tokens));
  c.ep_comm =
      core::Seconds(moe_layers_ * interpolate(a2a_table_, std::max(busiest_tokens, tokens / adp * (1.0 + imbalance))));
  double stage = c.total().value();
  if (d_.pp > 1) {
    c.pp_comm = (d_.pp - 1.0) * comm_(collectives::Op::SendRecv, {2, d_.tp}, core::Bytes(tokens * m.hidden * 2.0));
    // Without micro-batch pipelining a token crosses every stage in turn.
    const double scale = d_.pp;
    c.linear *= scale;
    c.experts *= scale;
    c.attention *= scale;
    c.other *= scale;
    c.tp_comm *= scale;
    c.ep_comm *= scale;
    stage *= scale;
  }
  const double layers_total = m.num_layers;
  // Host time: the step's fixed cost, its per-sequence cost (scheduling, sampling and output
  // processing of every sequence in the batch; attention-DP ranks do theirs in parallel), and the
  // kernel gaps of every layer.
  const double seqs_per_rank = (w.decode_seqs + w.prefill_seqs) / std::max(1.0, adp);
  c.overhead = e.iteration_overhead + e.sequence_overhead * seqs_per_rank +
               layers_total * (graph ? e.graph_layer_overhead : e.eager_layer_overhead);
  // Drafting: MTP/EAGLE run one extra layer (+ LM head) per draft token; a draft model costs a
  // fraction of the target's decode step.
  if (d_.speculation.kind != SpeculativeKind::None) {
    const double k = d_.speculation.draft_tokens;
    if (d_.speculation.kind == SpeculativeKind::DraftModel) {
      c.draft = core::Seconds(k * d_.speculation.draft_cost_fraction * stage);
    } else {
      c.draft = core::Seconds(k * (stage / layers_total + e.iteration_overhead.value() * kDraftHostShare));
    }
  }
  return c;
}

core::Seconds IterationModel::prefill_time(int tokens) const {
  BatchWork w;
  w.prefill_tokens = tokens;
  w.prefill_seqs = 1;
  const double pairs = tokens * (tokens / 2.0);
  w.prefill_attn_full = pairs;
  w.prefill_attn_window = window_ > 0 ? tokens * std::min(tokens / 2.0, window_) : pairs;
  w.sampled = 1;
  return iteration(w).total();
}

core::Seconds IterationModel::decode_step_time(int batch, double mean_context) const {
  BatchWork w;
  w.decode_seqs = batch;
  w.decode_ctx_full = batch * mean_context;
  w.decode_ctx_window = batch * (window_ > 0 ? std::min(mean_context, window_) : mean_context);
  w.sampled = batch;
  return iteration(w).total();
}

}  // namespace fmsim::serving
