// Named parameters of the RL step model, each with the measurement behind it (docs/models/rl.md).
#pragma once

#include "core/units.hpp"

namespace fmsim::rl {

struct RlCalibration {
  // ---- rollout engine: the serving model (data/calibration/serving.yaml) with RL settings
  /// vLLM's gpu_memory_utilization default for RL frameworks (verl rollout default 0.5-0.7,
  /// NeMo-RL 0.6); the KV cache gets what remains of this share after the weights.
  double gpu_memory_utilization = 0.6;
  /// On a separate generator pool nothing else lives on the GPUs: vLLM's own default, 0.9.
  double gpu_memory_utilization_disaggregated = 0.9;
  /// Sequences one engine runs at once: verl's rollout config sets max_num_seqs 1024 (vLLM's own
  /// default is 256); NeMo-RL leaves vLLM's scheduler to the KV cache.
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
  core::BytesPerSecond engine_load_bandwidth = core::gb_per_s(80.0);
  /// Fixed cost of one update: barrier, metadata gather, engine cache reset.
  core::Seconds sync_fixed = core::ms(10.0);
  /// Quantising on receive (BF16 trainer -> FP8/FP4 rollout): the engine's load_weights casts
  /// each tensor to block-scaled FP8 on the fly (NeMo-RL docs, "FP8 Quantization": "a custom
  /// load_weights function performs on-the-fly quantization of model weights"), a few kernel
  /// launches and Python calls per tensor on top of the HBM pass. NeMo-RL refit of Qwen3-30B-A3B
  /// on H100, same transport: 3.45 s with FP8 generation vs 0.87 s with BF16 (validation/rl.csv
  /// R096 vs R095), over its 18.9k tensors = 0.14 ms per tensor.
  core::Seconds requant_per_tensor = core::ms(0.14);

  // ---- colocated switch (offload/reload of training state, engine sleep/wake)
  /// Bytes per second per GPU at which a colocated step moves the trainer's gradients and
  /// optimizer states and the engine's weights to host memory and back. Fitted on the NeMo-RL
  /// v0.5 dense colocated rows (R061, R070, R074, R082: residual after the other phases over the
  /// bytes moved = 4.5, 1.6, 3.1, 2.8 GB/s, median 3.0), on H100 (PCIe Gen5) and GB200 (C2C)
  /// alike: a pageable, CPU-bound copy, not the host link. Held out: v0.4 rows R084, R092.
  core::BytesPerSecond offload_bandwidth = core::gb_per_s(2.7);
  /// The same copies on a Grace host (GB200: the CPU joined to its GPUs by NVLink-C2C, its
  /// LPDDR5X shared by 2 GPUs instead of 8 GPUs per x86 host). Fitted the same way as
  /// offload_bandwidth, on the NeMo-RL v0.5 GB200 colocated rows (R074, R076, R078, R080, R082):
  /// the residual after the other phases (with vllm_blackwell_iteration_factor) over the bytes
  /// moved = 28, 4.7, 10.4, 4.7, 320 GB/s, median 10.4. In-sample for those rows.
  core::BytesPerSecond offload_bandwidth_grace = core::gb_per_s(10.4);

  // ---- the rollout engine on Blackwell
  /// vLLM's iteration time on Blackwell GPUs in RL rollouts over what the serving model predicts
  /// from its Blackwell kernel efficiencies (data/calibration/serving.yaml, taken from
  /// TensorRT-LLM and cuBLAS figures: no vLLM-on-Blackwell measurement is in the serving data).
  /// NeMo-RL v0.5 on GB200 with separate generator pools (R077, R079, R081, R083) needs
  /// generation 2.2-2.7x (median 2.4) the predicted for its steps, where training cannot make up
  /// the difference (R079's update is 47 s of a 268 s step, R077's 7 s of 64.5 s); the colocated
  /// GB200 rows bound it from above: beyond 2.0 the dense ones (R074, R082) leave no time for
  /// their offload. 2.0, the largest value the colocated rows allow. No such factor on Hopper:
  /// the H100 generation-bound rows (R067, R089, R064, R087) fit without one.
  double vllm_blackwell_iteration_factor = 2.0;

  // ---- MoE training on a released router
  /// Per-expert routed-load coefficient of variation of a released MoE model's router on new
  /// data, without a load balancer: the serving calibration's moe.expert_load_cv (TensorRT-LLM
  /// tech blog 4: DeepSeek-R1 on 32 GB200, per-rank load std/mean 0.48 and (max - mean)/mean
  /// 1.564 over EP 32), which the commands copy from data/calibration/serving.yaml. RL keeps the
  /// router as released (NeMo-RL: freeze_moe_router, moe_router_load_balancing_type none; in
  /// verl, RL's learning rates of 1e-6 hardly move it whatever its auxiliary loss), so dropless
  /// training waits for the busiest EP rank as inference does.
  double expert_load_cv = 2.14;

  // ---- framework
  /// Per RL step: Ray/controller round trips, data collation, advantage computation, logging.
  core::Seconds step_overhead = core::Seconds(5.0);
  /// Rule-based verifier (math answer check) CPU time per sample, on `reward_workers` processes.
  core::Seconds rule_reward_per_sample = core::ms(20.0);
  int reward_workers = 64;
};

}  // namespace fmsim::rl
