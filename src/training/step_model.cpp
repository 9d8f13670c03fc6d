// Training-step costing: per-layer operator times, communication exposure, pipeline schedule.
#include "training/step_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "engine/task_graph.hpp"
#include "parallelism/pipeline_schedule.hpp"
#include "parallelism/stack.hpp"
#include "workload/model_flops.hpp"
#include "workload/operators.hpp"

namespace fmsim::training {

double gemm_seconds(const hardware::GpuSpec& gpu, const GpuCalibration& gc, double stack_efficiency, core::Precision p,
                    core::Fp8Recipe recipe, double m, double n, double k, double groups, double flops) {
  // NVIDIA reprinted Blackwell Ultra's FP4 peak for its new FP4 units (15 against 10 PFLOP/s) but
  // not its BF16 and FP8 peaks: the sustained-rate factor corrects only the unchanged ones.
  const double rate = p == core::Precision::FP4 ? 1.0 : gc.sustained_rate_factor;
  const double peak =
      (gpu.peak(p).value() > 0 ? gpu.peak(p).value() : gpu.bf16.value()) * gpu.power_clock_factor() * rate;
  const double recipe_factor = p == core::Precision::FP8 ? gc.fp8_recipe_factor(recipe) : 1.0;
  const double eff = gc.gemm_efficiency(p) * recipe_factor * stack_efficiency * gc.tile_factor(m) * gc.tile_factor(n) *
                     gc.tile_factor(k);
  // Roofline: a GEMM also reads its inputs (m x k activations, k x n weights, in the GEMM's
  // precision) and writes its 16-bit output, once per group. A grouped expert GEMM with few
  // tokens per expert reads each expert's whole weight for a handful of rows and is bound by
  // HBM, not by the tensor cores (the regime of fine-grained experts at small micro-batches).
  const double b = core::bytes_per_value(p);
  const double bytes = groups * (m * k * b + k * n * b + m * n * core::bytes_per_value(core::Precision::BF16));
  const double t_bytes = bytes / (gpu.hbm_bandwidth.value() * gc.memory_efficiency);
  return std::max(flops / (peak * eff), t_bytes) + gc.kernel_overhead.value() * groups;
}

namespace {

// FlashAttention's backward runs five matmuls of the forward's size (S = QK^T recomputed, dV = P^T dO,
// dP = dO V^T, dQ = dS K, dK = dS^T Q) where the forward runs two (QK^T, PV): 2.5x the forward's
// FLOPs, the count FlashAttention's own benchmarks use (github.com/Dao-AILab/flash-attention,
// benchmarks/benchmark_flash_attention.py: flops(mode="bwd") = 2.5 x flops(mode="fwd")).
constexpr double kAttentionBackwardFlopRatio = 2.5;

// A state-space scan's backward (mamba_ssm ssd_combined.py, _mamba_chunk_scan_combined_bwd)
// recomputes the forward's chunk states (chunk_state, state_passing: two of its five kernels), then
// runs gradient kernels for x, B, C, dt and the states, each pass about the forward's size: taken
// as 2.5 times the forward, the ratio FlashAttention's backward has for the same recompute-then-
// differentiate structure.
constexpr double kScanBackwardRatio = 2.5;

// An FP8 cast reads the 16-bit tensor (2 bytes per element) and writes its 8-bit copy (1 byte):
// 3 bytes of HBM traffic per element, at the memory roofline (Transformer Engine's cast kernels are
// bandwidth-bound elementwise passes).
constexpr double kFp8CastBytesPerElement = 2.0 + 1.0;

// HBM traffic per element of the 16-bit s x s score matrix in Megatron-LM's pre-FlashAttention
// attention core (megatron/model/transformer.py ParallelAttention, 2019-2022), beyond what its two
// batched GEMMs read and write. Forward: FusedScaleMaskSoftmax reads the scores and writes the
// probabilities (2 + 2 bytes), attention dropout reads them and writes its output and a 1-byte mask
// (2 + 2 + 1): 9. Backward: dropout's backward reads the gradient and the mask and writes (2 + 1 +
// 2), the fused softmax backward reads the probabilities and their gradient and writes the score
// gradient (2 + 2 + 2): 11. The same tensors are the 5 a s^2 b / t bytes per layer that Korthikanti
// et al. 2022 (arXiv:2205.05198, Sec. 4.1) count as the attention core's activations.
constexpr double kUnfusedSoftmaxBytesFwd = 9.0;
constexpr double kUnfusedSoftmaxBytesBwd = 11.0;

using core::Seconds;
using parallelism::Recompute;
using parallelism::Sharding;
using workload::OpKind;

// Bytes per element of a 16-bit (BF16/FP16) tensor: working weights, gathered FSDP weights,
// activations and parameters exchanged in 16 bits.
constexpr double kBytes16 = 2.0;

// The weight-gradient and input-gradient GEMMs of backward (wgrad, dgrad) each cost the forward
// GEMM: backward = 2x forward (Narayanan et al. 2021, "Efficient Large-Scale Language Model
// Training on GPU Clusters", 6 = 2 + 4 FLOPs per parameter and token).
constexpr double kGemmBackwardRatio = 2.0;

// An elementwise op's backward reads the output gradient and the saved input and writes the
// input gradient: twice the forward's traffic (one read, one write).
constexpr double kElementwiseBackwardRatio = 2.0;

// Adam per parameter (fp32 master weights): reads the master weight, m, v and the fp32 gradient
// (4 x 4 bytes) and writes the master weight, m, v (3 x 4) and the 16-bit working copy (2).
constexpr double kAdamBytesPerParam = 4 * 4.0 + 3 * 4.0 + kBytes16;

// Kernel launches of one optimizer step beyond the Adam pass (multi-tensor scale, grad-norm,
// zeroing, copy to the working weights): an estimate, charged at the kernel overhead each.
constexpr double kOptimizerKernels = 10.0;

// Per-layer host/framework overhead (StackCalibration::layer_overhead_us) splits as a layer's GEMM
// work does: of three parts, one forward and two backward (kGemmBackwardRatio).
constexpr double kLayerWorkParts = 1.0 + kGemmBackwardRatio;

// LoRA adapters are trainable parameters with full mixed-precision state: a 16-bit weight and
// gradient and Adam's fp32 master weight, m and v (2 + 2 + 12 bytes per parameter).
constexpr double kAdapterStateBytes = 2.0 + 2.0 + 12.0;

// The LoRA target group of a GEMM operator (workload/operators.cpp names); 0 for the output head
// and the router, which never carry adapters.
unsigned lora_module_of(std::string_view op) {
  using M = LoraModules;
  auto bits = [](M m) { return static_cast<unsigned>(m); };
  for (std::string_view q : {"qkv_proj", "q_proj", "q_down", "q_up", "kv_down", "kv_up"})
    if (op == q) return bits(M::Qkv);
  if (op == "o_proj") return bits(M::Proj);
  for (std::string_view f : {"fc1", "expert_fc1", "shared_fc1"})
    if (op == f) return bits(M::Fc1);
  for (std::string_view f : {"fc2", "expert_fc2", "shared_fc2"})
    if (op == f) return bits(M::Fc2);
  for (std::string_view f : {"ssm_in_proj", "ssm_x_proj", "ssm_dt_proj", "gdn_in_proj"})
    if (op == f) return bits(M::MixerIn);
  if (op == "ssm_out_proj" || op == "gdn_out_proj") return bits(M::MixerOut);
  return 0;
}

// The Megatron-Core recompute_modules entry whose repetition repeats an operator's forward (the
// block the operator was built in); -1 for none. Layer norms are a third of the norms/residuals
// traffic (two norms of six passes).
int recompute_module_of(workload::OpBlock block) {
  using M = parallelism::RecomputeModule;
  using B = workload::OpBlock;
  switch (block) {
    case B::Other: return -1;
    case B::MlaUpProj: return static_cast<int>(M::MlaUpProj);
    case B::Mlp: return static_cast<int>(M::Mlp);
    case B::MoeAct: return static_cast<int>(M::MoeAct);
    case B::SharedExperts: return static_cast<int>(M::SharedExperts);
    case B::Moe: return static_cast<int>(M::Moe);
    case B::Norms: return static_cast<int>(M::Layernorm);
  }
  return -1;
}
constexpr double kLayernormShareOfNormsResiduals = 1.0 / 3.0;
using ModuleTimes = std::array<double, 7>;  // forward time per RecomputeModule

void add_module_time(ModuleTimes& times, workload::OpBlock block, double t) {
  const int m = recompute_module_of(block);
  if (m < 0) return;
  times[static_cast<std::size_t>(m)] +=
      m == static_cast<int>(parallelism::RecomputeModule::Layernorm) ? t * kLayernormShareOfNormsResiduals : t;
}

// Per micro-batch times of one layer on one GPU.
struct LayerCost {
  Seconds fwd{};               // forward kernels
  Seconds bwd{};               // backward kernels
  Seconds recompute{};         // forward work repeated in backward by the recompute policy
  Seconds tp_fwd{}, tp_bwd{};  // exposed TP communication
  Seconds ep_fwd{}, ep_bwd{};  // exposed all-to-all
  Seconds cp_fwd{}, cp_bwd{};  // exposed context-parallel exchange
  core::Bytes weight_bytes{};  // 16-bit weights of the layer on this GPU (FSDP gathers)
  double dense_params = 0, expert_params = 0;
  double adapter_params = 0;                       // LoRA: trainable adapter parameters on this GPU
  core::Bytes tp_bytes{}, ep_bytes{}, cp_bytes{};  // sent per micro-batch (fwd+bwd)

  [[nodiscard]] Seconds forward_total() const { return fwd + tp_fwd + ep_fwd + cp_fwd; }
  [[nodiscard]] Seconds backward_total() const { return bwd + recompute + tp_bwd + ep_bwd + cp_bwd; }
};

// Per micro-batch costs of one pipeline stage (all its chunks together) and per chunk.
struct StageCost {
  LayerCost sum;                              // summed over the stage's layers, plus embedding/head
  std::vector<Seconds> chunk_fwd, chunk_bwd;  // per virtual chunk, totals including exposed comm
  double dense_params = 0, expert_params = 0;
  /// Tied embeddings under pipeline parallelism: the word-embedding parameters this (first or last)
  /// stage keeps in step with its twin on the other end of the pipeline.
  double tied_embedding_params = 0;
  core::Bytes largest_layer_bytes{};
  int layers = 0;
};

class Costing {
 public:
  Costing(const TrainingJob& job, const Calibration& cal, const collectives::CommCostFn& comm)
      : job_(job),
        l_(job.layout),
        gpu_(job.cluster.gpu),
        gc_(cal.gpu(job.cluster.gpu.architecture)),
        sc_(cal.stack(job.stack)),
        comm_(comm),
        ctx_{l_.micro_batch, job.seq_len, l_.tp, l_.cp, l_.ep, l_.etp, l_.sequence_parallel, job.document_tokens},
        groups_(groups_of(l_)),
        ep_dedup_(job.moe_dispatcher.value_or(sc_.moe_dispatcher) == MoeDispatcher::Deduplicated
                      ? dedup_ratio(job.model.moe.num_experts, job.model.moe.top_k,
                                    domains_spanned(groups_.ep, job.cluster.nvlink_domain_gpus()))
                      : 1.0) {}

  double comm_time(collectives::Op op, collectives::CommGroup g, double bytes) const {
    if (g.size <= 1 || bytes <= 0) return 0.0;
    return comm_(op, g, core::Bytes(bytes)).value();
  }

  collectives::CommGroup tp_group() const { return groups_.tp; }
  collectives::CommGroup cp_group() const { return groups_.cp; }
  collectives::CommGroup dp_group() const { return groups_.dp; }
  collectives::CommGroup fsdp_group() const { return groups_.fsdp; }
  collectives::CommGroup ep_group() const { return groups_.ep; }
  collectives::CommGroup edp_group() const { return groups_.expert_dp; }
  collectives::CommGroup pp_group() const { return groups_.pp; }

  double gemm_time(const workload::Operator& op, core::Precision p) const {
    return gemm_seconds(gpu_, gc_, sc_.compute_efficiency, p, l_.fp8_recipe, op.m, op.n, op.k, op.groups, op.flops);
  }

  // One batched GEMM of `batch` products (m x k) x (k x n) in 16 bits: a single kernel, at the
  // architecture's GEMM efficiency and tile-shape factors, never faster than its HBM traffic.
  double batched_gemm_time(double batch, double m, double n, double k) const {
    const double peak = gpu_.bf16.value() * gpu_.power_clock_factor();
    const double eff = gc_.gemm_efficiency(core::Precision::BF16) * sc_.compute_efficiency * gc_.tile_factor(m) *
                       gc_.tile_factor(n) * gc_.tile_factor(k);
    const double bytes = batch * (m * k + k * n + m * n) * kBytes16;
    const double t_bytes = bytes / (gpu_.hbm_bandwidth.value() * gc_.memory_efficiency);
    return std::max(2.0 * batch * m * n * k / (peak * eff), t_bytes) + gc_.kernel_overhead.value();
  }

  // Megatron-LM's unfused attention core for one micro-batch (AttentionKernel::Unfused): every
  // query against every key of the sequence (the causal mask is applied to the full score matrix,
  // no work is skipped), QK^T and PV as batched GEMMs over micro-batch x local heads, the fused
  // softmax and the dropout as HBM passes over the scores. Backward: four batched GEMMs of the
  // forward's shapes (dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q), twice the forward's two,
  // and the dropout and softmax backward passes.
  std::pair<double, double> unfused_attention_time(const workload::Operator& op) const {
    const double queries = static_cast<double>(job_.seq_len) / l_.cp;
    const double keys = static_cast<double>(job_.seq_len);
    const double heads = static_cast<double>(job_.model.num_heads) / l_.tp;
    const double batch = static_cast<double>(l_.micro_batch) * heads;
    const double v_dim = std::max(1.0, op.flops / (2.0 * op.m * op.n * heads) - op.k);
    const double gemms = batched_gemm_time(batch, queries, keys, op.k) + batched_gemm_time(batch, queries, v_dim, keys);
    const double scores = batch * queries * keys;
    const double fwd = gemms + memory_time(kUnfusedSoftmaxBytesFwd * scores);
    const double bwd = kGemmBackwardRatio * gemms + memory_time(kUnfusedSoftmaxBytesBwd * scores);
    return {fwd, bwd};
  }

  double memory_time(double bytes) const {
    return bytes * sc_.elementwise_factor / (gpu_.hbm_bandwidth.value() * gc_.memory_efficiency) +
           gc_.kernel_overhead.value();
  }

  // Costs one layer (or the embedding/head op list when layer < 0).
  LayerCost cost_ops(const std::vector<workload::Operator>& ops, int layer) const {
    LayerCost c;
    const bool lora = job_.task == Task::Lora;
    const core::Precision p = l_.precision;
    const bool low_precision = p == core::Precision::FP8 || p == core::Precision::FP4;
    double recomputable = 0.0;  // forward time of ops that selective recompute repeats
    double attention_fwd = 0.0, attention_bwd = 0.0;
    ModuleTimes module_fwd{};  // forward time of the ops each recompute_modules entry repeats
    for (const auto& op : ops) {
      switch (op.kind) {
        case OpKind::Gemm:
        case OpKind::GroupedGemm: {
          // The output head and the router stay in 16-bit in FP8 recipes (Transformer Engine).
          const bool keep16 = op.name == "lm_head" || op.name == "router";
          const core::Precision gp = keep16 ? core::Precision::BF16 : p;
          const double t = gemm_time(op, gp) * (op.expert ? job_.expert_load_factor : 1.0);
          c.fwd += Seconds(t);
          add_module_time(module_fwd, op.block, t);
          c.bwd += Seconds(lora ? t : kGemmBackwardRatio * t);  // dgrad + wgrad; LoRA: frozen weights, dgrad only
          if (lora && !keep16) {
            // A frozen base stored narrower than the GEMM's inputs is dequantised for the forward
            // GEMM and again for the backward's input-gradient GEMM: read the stored weight, write
            // its 16-bit copy (bitsandbytes' NF4 path; an FP8 base feeds FP8 GEMMs directly).
            const LoraBase base = job_.lora_base;
            if (base == LoraBase::Nf4 || (base == LoraBase::Fp8 && gp != core::Precision::FP8)) {
              const double dequant = memory_time(op.weights * (lora_base_bytes(base) + kBytes16));
              c.fwd += Seconds(dequant);
              c.bwd += Seconds(dequant);
            }
          }
          if (lora && !keep16 && (job_.lora_targets & lora_module_of(op.name)) != 0) {
            // Adapters A (k x r) and B (r x n) beside the frozen weight: r (k + n) / (k n) of its
            // FLOPs forward, twice that backward (input and weight gradients), two small GEMMs each way.
            const double r = std::max(1, job_.lora_rank);
            const double frac = r * (op.k + op.n) / std::max(1.0, op.k * op.n);
            c.fwd += Seconds(t * frac + 2.0 * gc_.kernel_overhead.value());
            c.bwd += Seconds(2.0 * t * frac + 4.0 * gc_.kernel_overhead.value());
            c.adapter_params += op.groups * r * (op.k + op.n);
          }
          if (low_precision && !keep16 && !(op.expert && l_.recipe.fused_grouped_mlp)) {
            // Cast the GEMM's activation input (m x k) forward and its output gradient (m x n)
            // backward to 8 bits: kFp8CastBytesPerElement of HBM traffic per element (a fused
            // grouped MLP quantises inside its kernels).
            c.fwd += Seconds(memory_time(kFp8CastBytesPerElement * op.m * op.k));
            c.bwd += Seconds(memory_time(kFp8CastBytesPerElement * op.m * op.n));
          }
          (op.expert ? c.expert_params : c.dense_params) += op.weights;
          c.weight_bytes += core::Bytes(op.weights * (lora && !keep16 ? lora_base_bytes(job_.lora_base) : kBytes16));
          break;
        }
        case OpKind::Attention: {
          if (sc_.attention_kernel == AttentionKernel::Unfused) {
            std::tie(attention_fwd, attention_bwd) = unfused_attention_time(op);
            module_fwd[static_cast<std::size_t>(parallelism::RecomputeModule::CoreAttn)] += attention_fwd;
            c.fwd += Seconds(attention_fwd);
            c.bwd += Seconds(attention_bwd);
            break;
          }
          const double peak = gpu_.bf16.value() * gpu_.power_clock_factor();
          const double g = gc_.tile_factor(op.n) * sc_.compute_efficiency *
                           attention_head_dim_factor(gc_, sc_.attention_kernel, op.k);
          const auto [eff_fwd, eff_bwd] = attention_efficiency(gc_, sc_.attention_kernel);
          const double fp8_gain = fp8_attention_gain();
          attention_fwd = op.flops / (peak * eff_fwd * g * fp8_gain) + gc_.kernel_overhead.value();
          module_fwd[static_cast<std::size_t>(parallelism::RecomputeModule::CoreAttn)] += attention_fwd;
          attention_bwd =
              kAttentionBackwardFlopRatio * op.flops / (peak * eff_bwd * g * fp8_gain) + gc_.kernel_overhead.value();
          c.fwd += Seconds(attention_fwd);
          c.bwd += Seconds(attention_bwd);
          break;
        }
        case OpKind::Scan: {
          // Roofline of the chunked scan: its matmul FLOPs at ssm_scan_efficiency of the BF16 peak
          // or its bytes at the elementwise HBM rate, whichever is slower.
          const double peak = gpu_.bf16.value() * gpu_.power_clock_factor();
          const double t =
              std::max(op.flops / (peak * gc_.ssm_scan_efficiency * sc_.compute_efficiency), memory_time(op.bytes));
          c.fwd += Seconds(t);
          c.bwd += Seconds(kScanBackwardRatio * t);
          c.dense_params += op.weights;
          c.weight_bytes += core::Bytes(op.weights * kBytes16);
          break;
        }
        case OpKind::Memory: {
          // A fused grouped MLP applies the experts' gated activation, its clamp and FC2's bias
          // inside its GEMM kernels.
          if (op.expert && l_.recipe.fused_grouped_mlp) break;
          // A pass of several kernels pays the launch and tail of each.
          const double kernels = std::max(1, op.groups);
          const double t = (memory_time(op.bytes) + (kernels - 1.0) * gc_.kernel_overhead.value()) *
                           (op.expert ? job_.expert_load_factor : 1.0);
          c.fwd += Seconds(t);
          c.bwd += Seconds(kElementwiseBackwardRatio * t);
          // The FFN activations (the memory ops of the MLP, routed and shared expert blocks).
          if (op.block == workload::OpBlock::Mlp || op.block == workload::OpBlock::MoeAct ||
              op.block == workload::OpBlock::SharedExperts)
            recomputable += t;
          add_module_time(module_fwd, op.block, t);
          c.dense_params += op.weights;
          c.weight_bytes += core::Bytes(op.weights * kBytes16);
          break;
        }
        case OpKind::AllToAll: {
          // Dispatch or combine: forward once, backward once. A deduplicating dispatcher sends a
          // token once per remote NVLink domain instead of once per expert there; the ratio is
          // applied to the whole exchange, whose time the inter-domain part dominates (the NVLink
          // fan-out inside the destination domain is left out).
          const double bytes = op.bytes * ep_dedup_;
          const double t = comm_time(collectives::Op::AllToAll, ep_group(), bytes) * job_.expert_load_factor;
          module_fwd[static_cast<std::size_t>(parallelism::RecomputeModule::Moe)] += t;  // repeated with the MoE block
          c.ep_fwd += Seconds(t);
          c.ep_bwd += Seconds(t);
          c.ep_bytes += core::Bytes(2.0 * bytes * (l_.ep - 1.0) / l_.ep);
          break;
        }
      }
    }
    if (layer >= 0) {
      // Tensor parallelism: with SP, an all-gather before and a reduce-scatter after attention and
      // the MLP (2 + 2 per layer); without SP, two all-reduces. MoE layers with etp == 1 replace the
      // MLP's pair by the all-to-all. Same volume again in backward.
      const double tokens = static_cast<double>(l_.micro_batch) * static_cast<double>(job_.seq_len) / l_.cp;
      const double act_bytes = tokens * static_cast<double>(job_.model.hidden) * kBytes16;
      if (l_.tp > 1) {
        // One all-gather/reduce-scatter pair per TP-split block: the mixer, and a dense FFN or an
        // MoE FFN with etp > 1 (FFN-only and mixer-only hybrid layers have one block).
        const auto& m = job_.model;
        const workload::FfnKind ffn = m.ffn(layer);
        const double pairs =
            (m.mixer(layer) != workload::MixerKind::None ? 1.0 : 0.0) +
            (ffn == workload::FfnKind::Dense || (ffn == workload::FfnKind::Moe && l_.etp > 1) ? 1.0 : 0.0);
        double t_tp;
        if (l_.sequence_parallel) {
          t_tp = pairs * (comm_time(collectives::Op::AllGather, tp_group(), act_bytes) +
                          comm_time(collectives::Op::ReduceScatter, tp_group(), act_bytes));
        } else {
          t_tp = pairs * comm_time(collectives::Op::AllReduce, tp_group(), act_bytes);
        }
        const double exposed = l_.overlap_tp_comm ? (1.0 - sc_.tp_overlap) : 1.0;
        c.tp_fwd = Seconds(t_tp * exposed);
        c.tp_bwd = Seconds(t_tp * exposed);
        c.tp_bytes = core::Bytes(2.0 * pairs * 2.0 * act_bytes * (l_.tp - 1.0) / l_.tp);
      }
      if (l_.cp > 1 && job_.model.mixer(layer) == workload::MixerKind::Attention) {
        // Ring attention: cp-1 exchanges of this rank's K and V, overlapped with attention blocks.
        const auto& m = job_.model;
        const double hd = m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.num_heads;
        // K and V (2 tensors) of kv_heads x head_dim in 16 bits per token, this TP rank's share.
        const double kv_bytes = tokens * 2.0 * std::max(1, m.num_kv_heads) * hd * kBytes16 / l_.tp;
        const double t_cp = (l_.cp - 1.0) * comm_time(collectives::Op::SendRecv, cp_group(), kv_bytes);
        // Backward passes K/V around the ring again and returns their gradients: twice forward's
        // exchange, so three K/V volumes per micro-batch in all.
        c.cp_fwd = Seconds(std::max(0.0, t_cp - attention_fwd * (l_.cp - 1.0) / l_.cp));
        c.cp_bwd = Seconds(std::max(0.0, 2.0 * t_cp - attention_bwd * (l_.cp - 1.0) / l_.cp));
        c.cp_bytes = core::Bytes(3.0 * (l_.cp - 1.0) * kv_bytes);
      }
      if (l_.recipe.overlap_ep_comm) hide_ep_comm(c);
      switch (l_.recompute) {
        case Recompute::None: break;
        case Recompute::Selective:
          // Megatron-LM's selective recompute before Megatron-Core (Korthikanti et al. 2022,
          // checkpoint_core_attention) repeats the unfused attention core.
          c.recompute = Seconds(l_.recompute_modules != 0 ? modules_recompute(module_fwd)
                                : sc_.attention_kernel == AttentionKernel::Unfused
                                    ? module_fwd[static_cast<std::size_t>(parallelism::RecomputeModule::CoreAttn)]
                                    : recomputable);
          break;
        case Recompute::Full: c.recompute = c.fwd + c.tp_fwd + c.ep_fwd + c.cp_fwd; break;
      }
      // Host launches and syncs per layer; none inside a full-iteration CUDA graph.
      const double per_layer =
          l_.recipe.full_iteration_graph
              ? 0.0
              : 1e-6 * (sc_.layer_overhead_us + (job_.model.is_moe_layer(layer) ? sc_.moe_layer_overhead_us : 0.0));
      c.fwd += Seconds(per_layer / kLayerWorkParts);
      c.bwd += Seconds(per_layer * kGemmBackwardRatio / kLayerWorkParts);
    }
    return c;
  }

  // Speed-up of fused attention in FP8 over BF16 (RecipeSwitches::fp8_attention with an FP8 or FP4
  // recipe): fp8_attention_factor of the FP8-over-BF16 peak ratio, never below 1.
  double fp8_attention_gain() const {
    const bool low = l_.precision == core::Precision::FP8 || l_.precision == core::Precision::FP4;
    if (!l_.recipe.fp8_attention || !low || gpu_.fp8.value() <= 0.0 || gpu_.bf16.value() <= 0.0) return 1.0;
    return std::max(1.0, gc_.fp8_attention_factor * gpu_.fp8.value() / gpu_.bf16.value());
  }

  // MoE all-to-all overlapped with another micro-batch's computation (RecipeSwitches::overlap_ep_comm):
  // Megatron-Core merges one micro-batch's forward with another's backward layer by layer, so a
  // layer's dispatch and combine (forward and backward) hide behind up to that layer's forward and
  // backward kernels. The hidden part still costs ep_overlap_cost of its time (the SMs the
  // dispatcher holds); what exceeds the kernels stays exposed.
  void hide_ep_comm(LayerCost& c) const {
    const double t = (c.ep_fwd + c.ep_bwd).value();
    if (t <= 0.0) return;
    const double hidden = std::min(t, (c.fwd + c.bwd).value());
    const double scale = (t - hidden + hidden * sc_.ep_overlap_cost) / t;
    c.ep_fwd = Seconds(c.ep_fwd.value() * scale);
    c.ep_bwd = Seconds(c.ep_bwd.value() * scale);
  }

  // Forward time repeated under explicit recompute_modules ("moe" covers moe_act and shared_experts).
  double modules_recompute(const ModuleTimes& f) const {
    using M = parallelism::RecomputeModule;
    const auto at = [&](M m) { return f[static_cast<std::size_t>(m)]; };
    double t = 0.0;
    for (M m : {M::CoreAttn, M::Layernorm, M::MlaUpProj, M::Mlp}) {
      if (l_.recomputes(m)) t += at(m);
    }
    if (l_.recomputes(M::Moe)) return t + at(M::Moe) + at(M::MoeAct) + at(M::SharedExperts);
    if (l_.recomputes(M::MoeAct)) t += at(M::MoeAct);
    if (l_.recomputes(M::SharedExperts)) t += at(M::SharedExperts);
    return t;
  }

  // into += n x c (n layers of one kind).
  static void accumulate(LayerCost& into, const LayerCost& c, double n = 1.0) {
    into.fwd += c.fwd * n;
    into.bwd += c.bwd * n;
    into.recompute += c.recompute * n;
    into.tp_fwd += c.tp_fwd * n;
    into.tp_bwd += c.tp_bwd * n;
    into.ep_fwd += c.ep_fwd * n;
    into.ep_bwd += c.ep_bwd * n;
    into.cp_fwd += c.cp_fwd * n;
    into.cp_bwd += c.cp_bwd * n;
    into.weight_bytes += c.weight_bytes * n;
    into.dense_params += c.dense_params * n;
    into.expert_params += c.expert_params * n;
    into.adapter_params += c.adapter_params * n;
    into.tp_bytes += c.tp_bytes * n;
    into.ep_bytes += c.ep_bytes * n;
    into.cp_bytes += c.cp_bytes * n;
  }

  // Stage costs. Layers are costed once per distinct kind (mixer x FFN x full/sliding). With
  // per_chunk false (the closed-form path, which reads stage sums only) the per-chunk times are left
  // empty and a model of one layer kind costs each stage as one layer times its layer count.
  std::vector<StageCost> stages(bool per_chunk = true) const {
    const auto& m = job_.model;
    const bool uniform = m.uniform_layers();
    std::array<std::optional<LayerCost>, workload::ModelSpec::kLayerKinds> cache;
    auto layer_cost = [&](int i) -> const LayerCost& {
      auto& slot = cache[static_cast<std::size_t>(m.layer_kind(i))];
      if (!slot) slot = cost_ops(workload::layer_operators(m, i, ctx_), i);
      return *slot;
    };
    const LayerCost embed = cost_ops(workload::embedding_operators(m, ctx_), -1);
    const LayerCost head = cost_ops(workload::head_operators(m, ctx_), -1);
    // Multi-token prediction: per module one more block of the last layer's kind and its own
    // projection, head and loss, after the main head on the last stage.
    LayerCost mtp;
    for (int k = 0; job_.train_mtp && k < m.mtp_layers; ++k) {
      accumulate(mtp, layer_cost(m.num_layers - 1));
      accumulate(mtp, cost_ops(workload::mtp_operators(m, ctx_), -1));
    }

    std::vector<StageCost> out(static_cast<std::size_t>(l_.pp));
    for (int s = 0; s < l_.pp; ++s) {
      StageCost& sc = out[static_cast<std::size_t>(s)];
      if (!per_chunk && uniform && m.num_layers > 0) {
        for (int c = 0; c < l_.vp; ++c) {
          const parallelism::LayerRange range = parallelism::chunk_layers(m.num_layers, l_, s, c);
          sc.layers += range.last - range.first;
        }
        if (sc.layers > 0) {
          const LayerCost& lc = layer_cost(0);
          accumulate(sc.sum, lc, sc.layers);
          sc.largest_layer_bytes = lc.weight_bytes;
        }
        if (s == 0) accumulate(sc.sum, embed);
        if (s == l_.pp - 1) {
          accumulate(sc.sum, head);
          accumulate(sc.sum, mtp);
        }
        add_tied_embedding(s, sc);
        continue;
      }
      sc.chunk_fwd.assign(static_cast<std::size_t>(l_.vp), Seconds{});
      sc.chunk_bwd.assign(static_cast<std::size_t>(l_.vp), Seconds{});
      for (int c = 0; c < l_.vp; ++c) {
        LayerCost chunk;
        // Chunk k = c*pp + s: its layers by parallelism::chunk_layers (embedding/loss slots, first/last stage counts).
        const parallelism::LayerRange range = parallelism::chunk_layers(m.num_layers, l_, s, c);
        // A model of one layer kind: the chunk is one layer's cost times its layer count.
        const int step = uniform ? std::max(1, range.last - range.first) : 1;
        for (int i = range.first; i < range.last; i += step) {
          const LayerCost& lc = layer_cost(i);
          accumulate(chunk, lc, step);
          sc.largest_layer_bytes = std::max(sc.largest_layer_bytes, lc.weight_bytes);
          sc.layers += step;
        }
        if (s == 0 && c == 0) accumulate(chunk, embed);
        if (s == l_.pp - 1 && c == l_.vp - 1) accumulate(chunk, head);
        if (s == l_.pp - 1 && c == l_.vp - 1) accumulate(chunk, mtp);
        sc.chunk_fwd[static_cast<std::size_t>(c)] = chunk.forward_total();
        sc.chunk_bwd[static_cast<std::size_t>(c)] = chunk.backward_total();
        accumulate(sc.sum, chunk);
      }
      add_tied_embedding(s, sc);
    }
    return out;
  }

  // Tied embeddings under pipeline parallelism: both ends keep them in step, and the last stage's
  // copy for the output layer (the head operators carry no weights when tied) has its own gradients
  // and optimizer states. Then the stage's parameter totals.
  void add_tied_embedding(int s, StageCost& sc) const {
    if (s == 0 || s == l_.pp - 1) {
      sc.tied_embedding_params = parallelism::tied_embedding_copy(job_.model, l_);
      if (s == l_.pp - 1) {
        sc.sum.dense_params += sc.tied_embedding_params;
        sc.sum.weight_bytes += core::Bytes(sc.tied_embedding_params * kBytes16);
      }
    }
    sc.dense_params = sc.sum.dense_params;
    sc.expert_params = sc.sum.expert_params;
  }

  double p2p_time() const {
    if (l_.pp <= 1) return 0.0;
    const double tokens = static_cast<double>(l_.micro_batch) * static_cast<double>(job_.seq_len) / l_.cp;
    const double bytes =
        tokens * static_cast<double>(job_.model.hidden) * kBytes16 / (l_.sequence_parallel ? l_.tp : 1);
    return comm_time(collectives::Op::SendRecv, pp_group(), bytes);
  }

  double p2p_bytes() const {
    if (l_.pp <= 1) return 0.0;
    const double tokens = static_cast<double>(l_.micro_batch) * static_cast<double>(job_.seq_len) / l_.cp;
    return tokens * static_cast<double>(job_.model.hidden) * kBytes16 / (l_.sequence_parallel ? l_.tp : 1);
  }

  // Data-parallel communication of one stage per step and how much of it stays exposed.
  struct DpCost {
    double exposed = 0;      // on the critical path after the pipeline drains
    double per_mb_fsdp = 0;  // FSDP: exposed per micro-batch (gathers not hidden by layer compute)
    double bytes = 0;
  };
  DpCost dp_cost(const StageCost& st) const {
    DpCost d;
    const double grad_b = l_.bf16_grad_reduce ? kBytes16 : 4.0;  // gradients reduced in 16 bits or fp32
    if (l_.dp <= 1 && l_.expert_dp() <= 1) {
      if (job_.task != Task::Lora) add_tied_embedding_sync(st, grad_b, d);
      return d;
    }
    const double bucket_params = 40e6;  // Megatron DDP default bucket size (parameters)
    // Overlap windows (Megatron-Core DDP overlap_grad_reduce / overlap_param_gather): a model
    // chunk's gradients are reduce-scattered once its last micro-batch's backward has run, its
    // parameters all-gathered before its first forward. Without interleaving that is the one
    // pass of the last (first) micro-batch. With vp chunks the interleaved schedule runs the
    // chunks in groups of pp micro-batches, so chunk c's reduction has the last backward of c
    // and the c x pp chunk passes after it to hide in (and symmetrically the gathers before the
    // first forwards); the last chunk's own reduction stays exposed beyond its own pass.
    const double vp = std::max(1, l_.vp);
    const double pp = std::max(1, l_.pp);
    const double chunk_b = sc_.dp_overlap * (st.sum.bwd + st.sum.recompute).value() / vp;
    const double chunk_f = sc_.dp_overlap * st.sum.fwd.value() / vp;
    auto exposed_after = [&](double t, double params, double chunk_pass) {
      if (!l_.overlap_dp_comm) return t;
      const double last_bucket = t * std::min(1.0, bucket_params / std::max(1.0, params));
      const double first_chunk = t / vp - chunk_pass;
      const double all_chunks = t - chunk_pass * (1.0 + (vp - 1.0) * pp);
      return std::max({last_bucket, first_chunk, all_chunks});
    };
    const bool lora = job_.task == Task::Lora;
    if (lora && l_.sharding != Sharding::Zero3) {
      // LoRA: only the adapters' gradients cross the network (all-reduced, or reduce-scattered and
      // their updated shards gathered under the distributed optimizer); the frozen base is not synchronised.
      const double adapters = st.sum.adapter_params;
      const double t = l_.sharding == Sharding::None
                           ? comm_time(collectives::Op::AllReduce, dp_group(), adapters * grad_b)
                           : comm_time(collectives::Op::ReduceScatter, dp_group(), adapters * grad_b) +
                                 comm_time(collectives::Op::AllGather, dp_group(), adapters * kBytes16);
      d.exposed = exposed_after(t, adapters, chunk_b);
      d.bytes = adapters * (grad_b + (l_.sharding == Sharding::None ? 0.0 : kBytes16));
      return d;
    }
    if (l_.sharding == Sharding::Zero3) {
      // FSDP: gather each layer's weights in forward and again in backward, reduce-scatter its
      // gradients in backward; prefetch hides them behind the layer's compute. LoRA: the frozen
      // weights are still gathered; only the adapters' gradients are reduce-scattered.
      const collectives::CommGroup g = fsdp_group();
      const double layers = std::max(1, st.layers);
      const double layer_bytes = st.sum.weight_bytes.value() / layers;
      const double ag = comm_time(collectives::Op::AllGather, g, layer_bytes);
      const double grad_params = lora ? st.sum.adapter_params / layers : layer_bytes / kBytes16;
      const double rs = comm_time(collectives::Op::ReduceScatter, g, grad_params * grad_b);
      const double f_layer = st.sum.fwd.value() / layers;
      const double b_layer = (st.sum.bwd + st.sum.recompute).value() / layers;
      const double hide = l_.fsdp_prefetch ? sc_.dp_overlap : 0.0;
      const double fwd_exposed = std::max(0.0, ag - hide * f_layer);
      const double bwd_exposed = std::max(0.0, ag + rs - hide * b_layer);
      if (l_.pp > 1 && parallelism::stack_conventions(job_.stack).fsdp_gather_once_with_pp) {
        // Weights gathered once, in the first micro-batch's forward, and kept through the step;
        // gradients accumulate unsharded and are reduce-scattered once, in the last backward.
        d.exposed = layers * (fwd_exposed + std::max(0.0, rs - hide * b_layer)) + ag;
        d.bytes = st.sum.weight_bytes.value() + grad_params * layers * grad_b;
      } else {
        d.per_mb_fsdp = layers * (fwd_exposed + bwd_exposed) + ag;  // the first gather is never hidden
        d.bytes = (2.0 * st.sum.weight_bytes.value() + grad_params * layers * grad_b) *
                  static_cast<double>(std::max<std::int64_t>(1, l_.micro_batches()));
      }
      if (l_.fsdp_shard_size() < l_.dp) {
        // Hybrid sharding: all-reduce gradient shards across the replica groups once per step.
        const collectives::CommGroup rep{l_.dp / l_.fsdp_shard_size(), l_.tp * l_.cp * l_.fsdp_shard_size()};
        d.exposed += comm_time(collectives::Op::AllReduce, rep, grad_params * layers * grad_b / l_.fsdp_shard_size());
      }
      return d;
    }
    const double dense_grad_bytes = st.dense_params * grad_b;
    const double expert_grad_bytes = st.expert_params * grad_b;
    double t_grad = 0, t_param = 0;
    if (l_.sharding == Sharding::None) {
      t_grad = comm_time(collectives::Op::AllReduce, dp_group(), dense_grad_bytes) +
               comm_time(collectives::Op::AllReduce, edp_group(), expert_grad_bytes);
    } else {
      t_grad = comm_time(collectives::Op::ReduceScatter, dp_group(), dense_grad_bytes) +
               comm_time(collectives::Op::ReduceScatter, edp_group(), expert_grad_bytes);
      t_param = comm_time(collectives::Op::AllGather, dp_group(), st.dense_params * kBytes16) +
                comm_time(collectives::Op::AllGather, edp_group(), st.expert_params * kBytes16);
    }
    const double params = st.dense_params + st.expert_params;
    d.exposed = exposed_after(t_grad, params, chunk_b) + exposed_after(t_param, params, chunk_f);
    d.bytes = dense_grad_bytes + expert_grad_bytes + (t_param > 0 ? kBytes16 * params : 0.0);
    add_tied_embedding_sync(st, grad_b, d);
    return d;
  }

  // Tied embeddings under pipeline parallelism: the first and the last stage all-reduce their word
  // embeddings' gradients once per step, after the data-parallel reduction and before the optimizer
  // (Megatron-Core finalize_model_grads -> _allreduce_word_embedding_grads over the embedding group;
  // DeepSpeed's ReduceTiedGrads), exposed: a group of two ranks pp - 1 stages apart.
  void add_tied_embedding_sync(const StageCost& st, double grad_b, DpCost& d) const {
    if (st.tied_embedding_params <= 0.0) return;
    const collectives::CommGroup ends{2, (l_.pp - 1) * groups_.pp.stride};
    d.exposed += comm_time(collectives::Op::AllReduce, ends, st.tied_embedding_params * grad_b);
    d.bytes += st.tied_embedding_params * grad_b;
  }

  double optimizer_time(const StageCost& st) const {
    // LoRA: Adam over the adapters only (replicated: they are a fraction of a percent of the weights).
    if (job_.task == Task::Lora) {
      return memory_time(st.sum.adapter_params * kAdamBytesPerParam) + kOptimizerKernels * gc_.kernel_overhead.value();
    }
    const double dp = std::max(1, l_.dp);
    const double edp = std::max(1, l_.expert_dp());
    const bool sharded = l_.sharding != Sharding::None;
    const double local = sharded ? st.dense_params / (l_.sharding == Sharding::Zero3 ? l_.fsdp_shard_size() : dp) +
                                       st.expert_params / edp
                                 : st.dense_params + st.expert_params;
    return memory_time(local * kAdamBytesPerParam) + kOptimizerKernels * gc_.kernel_overhead.value();
  }

  const TrainingJob& job_;
  const parallelism::Layout& l_;
  const hardware::GpuSpec& gpu_;
  const GpuCalibration& gc_;
  const StackCalibration& sc_;
  const collectives::CommCostFn& comm_;
  workload::ShardContext ctx_;
  CommGroups groups_;
  double ep_dedup_;  ///< inter-domain all-to-all bytes relative to a plain all-to-all
};

// The job's memory with `l` in place of its layout (job_memory; the micro-batch search varies it).
parallelism::MemoryBreakdown memory_with_layout(const TrainingJob& job, const parallelism::Layout& l) {
  auto options = memory_options(job.stack, job.task, l, job.lora_base);
  if (job.train_mtp) options.mtp_layers = job.model.mtp_layers;
  return parallelism::estimate_memory(job.model, l, job.seq_len, options);
}

// Validity and memory: shared by both paths. Returns false (with result.reason) when invalid.
bool prepare(const TrainingJob& job, StepResult& r, const parallelism::MemoryBreakdown* known_memory = nullptr) {
  const auto& l = job.layout;
  if (auto why = parallelism::why_invalid(job.model, l, job.job_gpus(), job.seq_len)) {
    r.feasible = false;
    r.reason = *why;
    return false;
  }
  if (job.job_gpus() > job.cluster.gpus()) {
    r.reason = fmt::format("the job needs {} GPUs but the cluster has {}", job.job_gpus(), job.cluster.gpus());
    return false;
  }
  r.feasible = true;
  r.micro_batches = l.micro_batches();
  r.memory = known_memory ? *known_memory : job_memory(job);
  r.memory_capacity =
      job.cluster.gpu.hbm_usable.value() > 0 ? job.cluster.gpu.hbm_usable : job.cluster.gpu.hbm_capacity;
  r.fits_memory = r.memory.total() <= r.memory_capacity;
  return true;
}

// LoRA adapters of the peak stage: weights, gradients and optimizer states (replicated over DP).
void add_adapter_memory(const TrainingJob& job, const std::vector<StageCost>& stages, StepResult& r) {
  if (job.task != Task::Lora || stages.empty()) return;
  const auto stage =
      static_cast<std::size_t>(std::clamp<int>(r.memory.peak_stage, 0, static_cast<int>(stages.size()) - 1));
  const double adapters = stages[stage].sum.adapter_params;
  r.memory.weights += core::Bytes(adapters * kBytes16);
  r.memory.gradients += core::Bytes(adapters * kBytes16);
  r.memory.optimizer += core::Bytes(adapters * (kAdapterStateBytes - 2.0 * kBytes16));
  r.fits_memory = r.memory.total() <= r.memory_capacity;
}

void finish(const TrainingJob& job, StepResult& r) {
  const auto& l = job.layout;
  r.step_time = r.breakdown.total();
  const double tokens = static_cast<double>(l.global_batch) * static_cast<double>(job.seq_len);
  const int gpus = job.job_gpus();
  r.tokens_per_s_per_gpu = tokens / (r.step_time.value() * gpus);
  workload::FlopOptions flops;
  flops.include_mtp = job.train_mtp;  // Megatron-Bridge counts the MTP modules it trains
  r.model_flops_per_step = workload::model_flops_per_step(job.model, l.global_batch, job.seq_len, flops).value();
  r.model_tflops_per_gpu = r.model_flops_per_step / (r.step_time.value() * gpus) / 1e12;
  const double peak = job.cluster.gpu.peak(l.precision).value() > 0 ? job.cluster.gpu.peak(l.precision).value()
                                                                    : job.cluster.gpu.bf16.value();
  r.mfu = r.model_tflops_per_gpu * 1e12 / peak;
}

// Activation offloading, per micro-batch: the offloaded layers' activations go to the host during
// their forward and come back during their backward, each copy overlapping that share of the
// compute (Megatron-Core's offload handler copies on a side stream); what a copy takes beyond the
// compute it overlaps is exposed.
double offload_exposed(const parallelism::MemoryBreakdown& mem, const StageCost& st, double host_bandwidth) {
  if (mem.offload_bytes_per_mb <= 0.0 || host_bandwidth <= 0.0) return 0.0;
  const double copy = mem.offload_bytes_per_mb / host_bandwidth;
  const double fwd = mem.offload_share * st.sum.fwd.value();
  const double bwd = mem.offload_share * (st.sum.bwd + st.sum.recompute).value();
  return std::max(0.0, copy - fwd) + std::max(0.0, copy - bwd);
}

// Optimizer offload (Layout::optimizer_offload_fraction f; Megatron-Core's HybridDeviceOptimizer,
// DeepSpeed ZeRO-Offload): after the last backward, the offloaded share of the rank's fp32 gradient
// shard goes to the host and the updated fp32 parameters come back over the host link, 4 + 4 bytes
// per parameter, exposed (the step waits for them). The CPU's own Adam update is not costed.
double optimizer_offload_seconds(const parallelism::Layout& l, const StageCost& st, double host_bandwidth) {
  const double f = std::clamp(l.optimizer_offload_fraction, 0.0, 1.0);
  if (f <= 0.0 || host_bandwidth <= 0.0) return 0.0;
  const bool sharded = l.sharding != Sharding::None;
  const double dense_shard = l.sharding == Sharding::Zero3 ? l.fsdp_shard_size() : std::max(1, l.dp);
  const double local = sharded ? st.dense_params / dense_shard + st.expert_params / std::max(1, l.expert_dp())
                               : st.dense_params + st.expert_params;
  return f * local * (4.0 + 4.0) / host_bandwidth;
}

// Closed-form pipeline: m micro-batches through pp stages with vp chunks each (Narayanan et al. 2021):
// time = m * max_stage(F+B) + (pp-1)/vp * mean_stage(F+B), plus the exposed p2p on the fill/drain path.
void analytical(const TrainingJob& job, const Costing& costing, const std::vector<StageCost>& stages, StepResult& r) {
  const auto& l = job.layout;
  const double m = static_cast<double>(std::max<std::int64_t>(1, l.micro_batches()));
  std::size_t slowest = 0;
  double slowest_t = -1, mean_t = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const double t = (stages[s].sum.forward_total() + stages[s].sum.backward_total()).value();
    mean_t += t / static_cast<double>(stages.size());
    if (t > slowest_t) {
      slowest_t = t;
      slowest = s;
    }
  }
  const StageCost& st = stages[slowest];
  const double p2p = costing.p2p_time();
  const double fill = (l.pp - 1.0) / l.vp * mean_t;
  const double p2p_exposed = l.pp > 1 ? (l.overlap_pp_comm ? 2.0 * (l.pp * l.vp - 1.0) * p2p / l.vp
                                                           : 2.0 * (l.pp * l.vp - 1.0 + m * l.vp) * p2p)
                                      : 0.0;
  auto dp = costing.dp_cost(st);

  StepBreakdown& b = r.breakdown;
  b.compute = m * (st.sum.fwd + st.sum.bwd + st.sum.recompute);
  b.tp_comm = m * (st.sum.tp_fwd + st.sum.tp_bwd);
  b.ep_comm = m * (st.sum.ep_fwd + st.sum.ep_bwd);
  b.cp_comm = m * (st.sum.cp_fwd + st.sum.cp_bwd);
  b.bubble = Seconds(fill);
  b.pp_comm = Seconds(p2p_exposed);
  b.dp_comm = Seconds(dp.exposed + m * dp.per_mb_fsdp);
  b.optimizer = Seconds(costing.optimizer_time(st));
  b.offload = Seconds(m * offload_exposed(r.memory, st, job.cluster.gpu.host_link_bandwidth.value()));
  if (l.optimizer_offload_fraction > 0.0) {
    // The CPU steps the offloaded share; the GPU the rest.
    b.optimizer = b.optimizer * (1.0 - std::clamp(l.optimizer_offload_fraction, 0.0, 1.0));
    b.offload += Seconds(optimizer_offload_seconds(l, st, job.cluster.gpu.host_link_bandwidth.value()));
  }
  b.other = costing.sc_.step_overhead;
  r.comm.tp = m * st.sum.tp_bytes;
  r.comm.ep = m * st.sum.ep_bytes;
  r.comm.cp = m * st.sum.cp_bytes;
  r.comm.pp = core::Bytes(l.pp > 1 ? 2.0 * m * l.vp * costing.p2p_bytes() : 0.0);
  r.comm.dp = core::Bytes(dp.bytes);
}

}  // namespace

const GpuCalibration& Calibration::gpu(hardware::Architecture a) const {
  auto it = gpus.find(a);
  FMSIM_CHECK(it != gpus.end(), "no calibration for this GPU architecture");
  return it->second;
}

const StackCalibration& Calibration::stack(const std::string& name) const {
  auto it = stacks.find(name);
  FMSIM_CHECK(it != stacks.end(), "no calibration for software stack '" + name + "'");
  return it->second;
}

parallelism::MemoryOptions memory_options(const std::string& stack, Task task, const parallelism::Layout& layout,
                                          LoraBase lora_base) {
  auto o = parallelism::stack_memory_options(stack);
  if (layout.recipe.compiled_loss) parallelism::apply_compiled_loss(o);
  if (layout.bf16_grad_reduce && o.state.gradients > 2.0) {
    // 16-bit gradient reduction: the optimizer then keeps its own fp32 copy of its shard.
    o.state.gradients = 2.0;
    o.state.optimizer += 4.0;
  }
  if (task == Task::Lora) {
    // Frozen base weights: no gradients, optimizer states or master weights for them.
    o.state.gradients = 0.0;
    o.state.optimizer = 0.0;
    // The frozen weights in their stored form; an FP8 or NF4 base needs no separate FP8 cache.
    o.state.weights = std::min(o.state.weights, lora_base_bytes(lora_base));
    if (lora_base != LoraBase::Bf16) o.state.fp8_extra = 0.0;
  }
  return o;
}

int largest_fitting_micro_batch(const TrainingJob& job, int limit) {
  const core::Bytes capacity =
      job.cluster.gpu.hbm_usable.value() > 0 ? job.cluster.gpu.hbm_usable : job.cluster.gpu.hbm_capacity;
  const auto fits = [&](int mbs) {
    parallelism::Layout l = job.layout;
    l.micro_batch = mbs;
    return memory_with_layout(job, l).total() <= capacity;
  };
  if (limit < 1 || !fits(1)) return 0;
  int lo = 1, hi = 2;  // fits(lo); hi unknown
  while (hi <= limit && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  hi = std::min(hi, limit + 1);  // !fits(hi) or beyond the limit
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::string memory_peak_phase(const TrainingJob& job, const parallelism::MemoryBreakdown& m) {
  const auto& l = job.layout;
  const int last = std::max(1, l.pp) - 1;
  if (m.optimizer_step_peak && m.reduce_copy > m.step_grad)
    return "gradient all-reduce after the last backward (16-bit copy of the fp32 gradients)";
  if (m.optimizer_step_peak && m.step_grad.value() <= 0.0 && m.reduce_copy.value() <= 0.0)
    return "end of backward (every gradient allocated)";
  if (m.optimizer_step_peak) return "optimizer step (fp32 copy of the gradient shard)";
  if (m.embedding_grad.value() > 0.0) {
    return fmt::format("input-embedding backward (its fresh gradient), {:.3g} other micro-batches held", m.in_flight);
  }
  if (m.lazy_gradients_pending) return "start of backward, before it allocates the gradients (the LM head's first)";
  if (m.peak_stage == last && last > 0) return "loss and LM-head backward (logits live)";
  const std::string held = m.in_flight > 1.0 ? fmt::format("{:.3g} micro-batches in flight", m.in_flight)
                                             : std::string("one micro-batch in flight");
  return fmt::format("{}, first backward{}", held,
                     l.recompute == Recompute::Full ? " (one layer recomputed in full)" : "");
}

StepResult estimate_step(const TrainingJob& job, const Calibration& calibration, const collectives::CommCostFn& comm) {
  StepResult r;
  if (!prepare(job, r)) return r;
  Costing costing(job, calibration, comm);
  const auto stages = costing.stages(false);
  add_adapter_memory(job, stages, r);
  analytical(job, costing, stages, r);
  finish(job, r);
  return r;
}

StepResult estimate_step_time(const TrainingJob& job, const Calibration& calibration,
                              const collectives::CommCostFn& comm, const parallelism::MemoryBreakdown& memory) {
  StepResult r;
  if (!prepare(job, r, &memory)) return r;
  Costing costing(job, calibration, comm);
  const auto stages = costing.stages(false);
  add_adapter_memory(job, stages, r);
  analytical(job, costing, stages, r);
  r.step_time = r.breakdown.total();
  return r;
}

parallelism::MemoryBreakdown job_memory(const TrainingJob& job) { return memory_with_layout(job, job.layout); }

// The longest step simulate_step plays on the event engine: 10^9 s (31.7 years), a ninth of the
// engine clock's 292-year range; a longer one is the closed form's.
constexpr double kMaxPlayedStepSeconds = 1e9;

StepResult simulate_step(const TrainingJob& job, const Calibration& calibration, const collectives::CommCostFn& comm,
                         engine::TraceSink* trace) {
  StepResult r;
  if (!prepare(job, r)) return r;
  Costing costing(job, calibration, comm);
  const auto stages = costing.stages();
  add_adapter_memory(job, stages, r);
  // The analytical pass fills the breakdown's per-component figures; the event simulation
  // replaces the pipeline part (compute + exposed comm + bubble) by the played schedule.
  analytical(job, costing, stages, r);
  // The played schedule times its tasks on the engine's integer clock (2^63 ns, 292 years). A step
  // the closed form puts past kMaxPlayedStepSeconds (a model or GPU far outside any real one, such
  // as a hidden size of 10^9) keeps the closed form's answer (simulated_tasks stays 0) rather than
  // overflow that clock.
  if (!(r.breakdown.total().value() < kMaxPlayedStepSeconds)) {
    r.step_time = r.breakdown.total();
    return r;
  }

  const auto& l = job.layout;
  const int pp = l.pp;
  const int vp = l.vp;
  const int m = static_cast<int>(std::max<std::int64_t>(1, l.micro_batches()));
  const double p2p = costing.p2p_time();
  auto ns = [](double s) { return core::SimTime::from_seconds(Seconds(s)); };

  engine::TaskGraph g;
  std::vector<engine::StreamId> compute(static_cast<std::size_t>(pp)), send(static_cast<std::size_t>(pp)),
      dp_stream(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    const std::string proc = fmt::format("pp stage {} (rank {})", s, s * l.tp * l.cp * l.dp);
    compute[static_cast<std::size_t>(s)] = g.add_stream(proc, "compute");
    send[static_cast<std::size_t>(s)] = g.add_stream(proc, "pp");
    dp_stream[static_cast<std::size_t>(s)] = g.add_stream(proc, "dp");
  }
  // Task ids of forward/backward of (stage, chunk, micro-batch) and of the send that follows it.
  const auto idx = [&](int s, int c, int mb) {
    return (static_cast<std::size_t>(s) * static_cast<std::size_t>(vp) + static_cast<std::size_t>(c)) *
               static_cast<std::size_t>(m) +
           static_cast<std::size_t>(mb);
  };
  const std::size_t total = static_cast<std::size_t>(pp) * static_cast<std::size_t>(vp) * static_cast<std::size_t>(m);
  std::vector<engine::TaskId> fwd_done(total, -1), bwd_done(total, -1);

  // Per-stage issue order (Megatron): 1F1B, or the interleaved order with vp chunks per stage.
  std::vector<std::vector<parallelism::PipelineItem>> order(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) order[static_cast<std::size_t>(s)] = parallelism::pipeline_issue_order(pp, vp, m, s);
  // Tasks must be added after their dependencies: iterate stages round-robin, adding an item
  // once its cross-stage dependency exists.
  std::vector<std::size_t> cursor(static_cast<std::size_t>(pp), 0);
  std::vector<engine::TaskId> send_fwd(total, -1), send_bwd(total, -1);
  std::size_t remaining = 0;
  for (const auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < pp; ++s) {
      auto& cur = cursor[static_cast<std::size_t>(s)];
      const auto& o = order[static_cast<std::size_t>(s)];
      while (cur < o.size()) {
        const parallelism::PipelineItem it = o[cur];
        std::vector<engine::TaskId> deps;
        if (it.forward) {
          if (s > 0) {
            const auto prev = send_fwd[idx(s - 1, it.chunk, it.micro_batch)];
            if (prev < 0) break;
            deps.push_back(prev);
          } else if (it.chunk > 0) {
            const auto prev = send_fwd[idx(pp - 1, it.chunk - 1, it.micro_batch)];
            if (prev < 0) break;
            deps.push_back(prev);
          }
        } else {
          if (s < pp - 1) {
            const auto next = send_bwd[idx(s + 1, it.chunk, it.micro_batch)];
            if (next < 0) break;
            deps.push_back(next);
          } else if (it.chunk < vp - 1) {
            const auto next = send_bwd[idx(0, it.chunk + 1, it.micro_batch)];
            if (next < 0) break;
            deps.push_back(next);
          }
          const auto own = fwd_done[idx(s, it.chunk, it.micro_batch)];
          if (own < 0) break;
          deps.push_back(own);
        }
        const StageCost& st = stages[static_cast<std::size_t>(s)];
        const double dur = (it.forward ? st.chunk_fwd[static_cast<std::size_t>(it.chunk)]
                                       : st.chunk_bwd[static_cast<std::size_t>(it.chunk)])
                               .value();
        // Task names are for the trace only: formatting them costs more than playing the graph.
        const auto task =
            g.add_task(compute[static_cast<std::size_t>(s)], ns(dur), std::move(deps),
                       trace ? fmt::format("{} mb{} chunk{}", it.forward ? "fwd" : "bwd", it.micro_batch, it.chunk)
                             : std::string{},
                       "compute");
        const auto i = idx(s, it.chunk, it.micro_batch);
        (it.forward ? fwd_done : bwd_done)[i] = task;
        // Hand the activation (or its gradient) to the neighbouring stage.
        const bool has_next = it.forward ? !(s == pp - 1 && it.chunk == vp - 1) : !(s == 0 && it.chunk == 0);
        const double link = has_next && pp > 1 ? p2p : 0.0;
        const auto sent = g.add_task(
            l.overlap_pp_comm ? send[static_cast<std::size_t>(s)] : compute[static_cast<std::size_t>(s)], ns(link),
            {task}, trace ? fmt::format("send {} mb{}", it.forward ? "act" : "grad", it.micro_batch) : std::string{},
            "comm");
        (it.forward ? send_fwd : send_bwd)[i] = sent;
        ++cur;
        --remaining;
        progressed = true;
      }
    }
    FMSIM_CHECK(progressed, "pipeline schedule deadlocked");
  }
  // Gradient synchronisation after each stage's last backward, then the optimizer step.
  std::vector<double> stage_dp(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    const auto& st = stages[static_cast<std::size_t>(s)];
    const auto dp = costing.dp_cost(st);
    const auto last = bwd_done[idx(s, 0, m - 1)];
    const auto sync = g.add_task(dp_stream[static_cast<std::size_t>(s)], ns(dp.exposed + m * dp.per_mb_fsdp), {last},
                                 "gradient sync", "comm");
    g.add_task(compute[static_cast<std::size_t>(s)], ns(costing.optimizer_time(st)), {sync}, "optimizer", "optimizer");
  }
  const auto played = g.run(trace);
  r.simulated_tasks = g.task_count();

  // Attribute: the slowest stage's busy compute stays "compute + exposed comm"; the rest of the
  // makespan before its optimizer is bubble (and p2p waits).
  const double makespan = played.makespan.to_seconds().value();
  StepBreakdown& b = r.breakdown;
  const double accounted = (b.compute + b.tp_comm + b.ep_comm + b.cp_comm + b.dp_comm + b.optimizer).value();
  const double rest = std::max(0.0, makespan - accounted);
  const double analytic_rest = (b.bubble + b.pp_comm).value();
  if (analytic_rest > 0) {
    b.bubble = Seconds(rest * b.bubble.value() / analytic_rest);
    b.pp_comm = Seconds(rest - b.bubble.value());
  } else {
    b.bubble = Seconds(rest);
  }
  finish(job, r);
  return r;
}

}  // namespace fmsim::training
