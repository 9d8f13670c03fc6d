// Named parameters of the RL step model, each with the measurement behind it (docs/models/rl.md).
#pragma once

#include "core/units.hpp"

namespace fmsim::rl {

struct RlCalibration {
  // ---- rollout engine (vLLM / SGLang continuous batching)
  /// Fraction of HBM bandwidth that decode reaches streaming weights and KV cache. vLLM decode
  /// kernels reach 70-80% of HBM bandwidth on H100 at large batch (the training model's
  /// memory_efficiency is 0.80 for elementwise kernels); paged attention loses a little more.
  double decode_memory_efficiency = 0.70;
  /// Fraction of the dense BF16 peak reached by prefill GEMMs (large, compute bound).
  double prefill_efficiency = 0.55;
  /// Per decode iteration: scheduler, sampling, detokenisation, kernel launches not hidden by
  /// CUDA graphs. vLLM V1 reports a few ms of CPU time per step at large batch.
  core::Seconds decode_step_overhead = core::ms(4.0);
  /// Per sequence per decode iteration (sampling, logits processors, output handling).
  core::Seconds decode_per_sequence_overhead = core::us(12.0);
  /// vLLM's gpu_memory_utilization default for RL frameworks (verl rollout default 0.5-0.7,
  /// NeMo-RL 0.6); the KV cache gets what remains of this share after the weights.
  double gpu_memory_utilization = 0.6;
  /// vLLM max_num_seqs default (V1: 256 on most GPUs; RL recipes raise it to 1024).
  int max_num_seqs = 1024;

  // ---- weight synchronisation trainer -> generators
  /// Per tensor per update: an NCCL call or IPC handle, plus the engine's load_weights for it
  /// (verl fully_async per-tensor sync: 15.8 s for Qwen3-30B-A3B's 18.9k tensors on H20,
  /// 58.6 s for Qwen3-235B-A22B's 36.2k: about 0.8 ms per tensor with bytes taken out).
  core::Seconds per_tensor_overhead = core::ms(0.8);
  /// Bucketed transfer (checkpoint-engine, NeMo-RL refit, slime): tensors packed into buckets of
  /// hundreds of MiB, so the per-tensor cost drops to the engine's load (verl with
  /// checkpoint-engine: 4.38 s vs 15.76 s; 23.7 s vs 58.6 s).
  core::Seconds per_tensor_overhead_bucketed = core::ms(0.03);
  /// Fraction of link bandwidth a point-to-point shard transfer reaches (NeMo-RL refit, RDMA).
  double sync_bandwidth_efficiency = 0.7;
  /// Bytes per second one inference GPU ingests in load_weights (receive buffer -> named
  /// parameter, slicing and layout changes), per byte it receives. checkpoint-engine's broadcast
  /// update of Qwen3-235B-A22B (BF16, 470 GB) on 8 H800 in one NVLink domain: 6.22 s, of which
  /// 0.33 s metadata; the NVLink broadcast itself takes under 3 s, so load_weights bounds the
  /// pipeline at 470 GB / 5.9 s = 80 GB/s (validation/rl.csv R143).
  double engine_load_bandwidth = 80e9;
  /// Fixed cost of one update: barrier, metadata gather, engine cache reset.
  core::Seconds sync_fixed = core::ms(10.0);

  // ---- host link (colocated offload/reload of training state, engine sleep/wake)
  /// Pinned host<->device copy per GPU (PCIe Gen5 x16 reaches ~50 GB/s, Gen4 ~25 GB/s; pinned
  /// copies measure 70-80% of that).
  double host_link_efficiency = 0.75;

  // ---- framework
  /// Per RL step: Ray/controller round trips, data collation, advantage computation, logging.
  core::Seconds step_overhead = core::Seconds(5.0);
  /// Rule-based verifier (math answer check) CPU time per sample, on `reward_workers` processes.
  core::Seconds rule_reward_per_sample = core::ms(20.0);
  int reward_workers = 64;
};

}  // namespace fmsim::rl
