#include "rl/weight_sync.hpp"

#include <algorithm>

#include "workload/parameter_count.hpp"

namespace fmsim::rl {

std::string to_string(SyncMethod m) {
  switch (m) {
    case SyncMethod::NcclPerTensor: return "nccl-per-tensor";
    case SyncMethod::NcclBucketed: return "nccl-bucketed";
    case SyncMethod::P2pRdma: return "p2p-rdma";
    case SyncMethod::Storage: return "storage";
  }
  return "?";
}

std::int64_t checkpoint_tensors(const workload::ModelSpec& m) {
  std::int64_t n = 3;  // embedding, final norm, head (tied: the head is the embedding, still one name)
  for (int i = 0; i < m.num_layers; ++i) {
    n += m.mla ? 8 : 4;  // q,k,v,o (MLA: q_a, q_b, kv_a, kv_b, o and their norms)
    n += 2 + (m.qk_norm ? 2 : 0);
    if (m.is_moe_layer(i)) {
      n += 3LL * m.moe.num_experts + 1 + (m.moe.shared_expert_ffn > 0 ? 3 : 0);
    } else {
      n += 3;
    }
  }
  return n;
}

WeightSyncResult estimate_weight_sync(const WeightSyncJob& job, const RlCalibration& cal, const training::CommCostFn& comm) {
  WeightSyncResult r;
  const auto params = workload::count_parameters(job.model);
  const double bytes = static_cast<double>(params.total) * core::bytes_per_value(job.generator_precision);
  r.bytes = core::Bytes(bytes);
  r.tensors = checkpoint_tensors(job.model);
  const auto& sys = job.cluster.system;
  const int per_node = std::max(1, sys.gpus_per_node);

  // Gather: each pipeline stage's model-parallel group (TP x EP, or the FSDP shard group)
  // all-gathers its parameters into full tensors; stages run in parallel.
  const auto& l = job.train_layout;
  const int shard = l.sharding == parallelism::Sharding::Zero3 ? l.fsdp_shard_size() : l.tp * std::max(1, l.ep / std::max(1, l.tp));
  if (shard > 1) {
    const int stride = l.sharding == parallelism::Sharding::Zero3 ? l.tp * l.cp : 1;
    r.gather = comm(training::CommOp::AllGather, training::CommGroup{shard, stride}, core::Bytes(bytes / std::max(1, l.pp)));
  }

  // Transfer: every generator GPU receives its 1/tp of the weights; the trainer pool sends each
  // byte once per distinct receiving shard (pipelined broadcast: bandwidth-bound, not replica-bound).
  const double recv_bytes = bytes / std::max(1, job.generator_tp);
  const double eff = cal.sync_bandwidth_efficiency;
  double seconds = 0.0;
  if (job.method == SyncMethod::Storage) {
    const int replicas = std::max(1, job.generator_gpus / std::max(1, job.generator_tp));
    seconds = bytes * (1.0 + replicas) / job.storage_bandwidth.value();
    r.path = "storage";
  } else if (job.colocated) {
    // CUDA IPC on the same GPU: a device-to-device copy (read + write HBM).
    seconds = 2.0 * recv_bytes / (job.cluster.gpu.hbm_bandwidth.value() * eff);
    r.path = "CUDA IPC";
  } else if (job.trainer_gpus + job.generator_gpus <= job.cluster.nvlink_domain_gpus()) {
    seconds = recv_bytes / (job.cluster.gpu.nvlink_bandwidth.value() / 2.0 * eff);
    r.path = "NVLink";
  } else {
    const double nic_per_gpu = sys.network_bandwidth.value() / per_node;
    const double recv = recv_bytes / (nic_per_gpu * eff);
    const double sender_nodes = std::max(1.0, static_cast<double>(job.trainer_gpus) / per_node);
    const double send = bytes / (sender_nodes * sys.network_bandwidth.value() * eff);
    seconds = std::max(recv, send);
    r.path = job.cluster.fabric.kind == hardware::FabricKind::Efa ? "EFA" : "RDMA";
  }
  r.transfer = core::Seconds(seconds);
  const core::Seconds each = job.method == SyncMethod::NcclPerTensor ? cal.per_tensor_overhead : cal.per_tensor_overhead_bucketed;
  r.per_tensor = each * static_cast<double>(r.tensors);
  r.fixed = cal.sync_fixed;
  r.total = r.fixed + r.gather + r.transfer + r.per_tensor;
  return r;
}

}  // namespace fmsim::rl
