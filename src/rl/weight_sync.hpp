// Weight synchronisation from the trainer to the generators after each policy update.
#pragma once

#include <cstdint>
#include <string>

#include "collectives/comm_cost.hpp"
#include "core/precision.hpp"
#include "core/units.hpp"
#include "core/vocabulary.hpp"
#include "hardware/specs.hpp"
#include "parallelism/layout.hpp"
#include "rl/calibration.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::rl {

enum class SyncMethod {
  NcclPerTensor,  ///< one NCCL broadcast of each full tensor to every generator GPU (verl default)
  NcclBucketed,   ///< full tensors packed into buckets and broadcast (checkpoint-engine, verl + checkpoint-engine,
                  ///< slime)
  P2pRdma,        ///< each generator GPU receives only its own shard, point to point (NeMo-RL refit, Mooncake, NIXL)
  Storage,        ///< trainer writes a checkpoint, generators read it (shared file system)
};

/// The words of --sync-method.
inline constexpr core::Word<SyncMethod> kSyncMethodWordList[] = {
    {SyncMethod::NcclBucketed, "nccl-bucketed"},
    {SyncMethod::NcclPerTensor, "nccl-per-tensor"},
    {SyncMethod::P2pRdma, "p2p-rdma"},
    {SyncMethod::Storage, "storage"},
};
inline constexpr core::Vocabulary<SyncMethod> kSyncMethodWords{"weight-sync method", kSyncMethodWordList};

std::string to_string(SyncMethod m);

struct WeightSyncJob {
  workload::ModelSpec model;
  hardware::ClusterSpec cluster;
  core::Precision generator_precision = core::Precision::BF16;  ///< weights in the engine
  /// Precision of the tensors the trainer exports (BF16 master weights, even under FP8 training;
  /// FP8 for a natively FP8 checkpoint such as DeepSeek-V3.1 or Kimi-K2 held by a parameter
  /// server). Narrower generator weights are quantised on receive: the wire carries this precision.
  core::Precision trainer_precision = core::Precision::BF16;
  parallelism::Layout train_layout;  ///< tp/pp/ep/dp and sharding of the trainer (what must be gathered)
  int trainer_gpus = 8;
  int generator_gpus = 8;
  int generator_tp = 1;
  bool colocated = false;   ///< trainer and generators on the same GPUs (CUDA IPC)
  bool engine_load = true;  ///< false: receive only (a transfer benchmark without load_weights)
  bool from_host = false;   ///< weights staged in host memory (checkpoint-engine ParameterServer): H2D first
  SyncMethod method = SyncMethod::NcclBucketed;
  core::BytesPerSecond storage_bandwidth = core::gb_per_s(10.0);  ///< Storage method: aggregate file-system throughput
};

struct WeightSyncResult {
  core::Seconds total{};
  core::Seconds gather{};      ///< trainer: gather sharded parameters into full tensors ("parameter generation")
  core::Seconds transfer{};    ///< bytes to the generators (bandwidth-bound), pipelined with the engine's load
  core::Seconds load{};        ///< the engine's load_weights over the bytes one GPU receives (pipelined with transfer)
  core::Seconds per_tensor{};  ///< per-tensor calls and engine load_weights
  core::Seconds requantize{};  ///< quantising received tensors to the generator precision (part of `load`)
  core::Seconds fixed{};
  core::Bytes bytes{};       ///< full model in the generator precision
  std::int64_t tensors = 0;  ///< named tensors of the HF checkpoint
  std::string path;          ///< "CUDA IPC", "NVLink", "EFA", "InfiniBand", "storage"
};

/// Named tensors of the model's Hugging Face checkpoint (per layer: q, k, v, o, 2 norms, q/k norms,
/// dense FFN 3, or routed experts x 3 + router + shared expert 3; plus embedding, head, final norm).
std::int64_t checkpoint_tensors(const workload::ModelSpec& model);

/// Time of one weight update: fixed + gather + max(transfer, load) + tensors x per-tensor cost.
/// Broadcast methods deliver the full tensors to every generator GPU (vLLM's load_weights takes
/// whole HF tensors and keeps its slice); P2P delivers each GPU only its 1/generator_tp shard.
/// When the generator's weights are narrower than the trainer's, the wire carries the trainer's
/// precision and each generator GPU quantises what it keeps: tensors x requant_per_tensor plus
/// one HBM pass (read wide, write narrow) over its shard, inside `load`.
WeightSyncResult estimate_weight_sync(const WeightSyncJob& job, const RlCalibration& cal,
                                      const collectives::CommCostFn& comm);

}  // namespace fmsim::rl
