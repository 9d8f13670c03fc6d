#include "rl/weight_sync.hpp"

#include <algorithm>

#include "collectives/cost_model.hpp"
#include "topology/topology.hpp"
#include "workload/parameter_count.hpp"

namespace fmsim::rl {
namespace {

/// One NCCL broadcast of `bytes` over the first `ranks` GPUs of the cluster (collectives model).
core::Seconds broadcast(const hardware::ClusterSpec& cluster, int ranks, core::Bytes bytes) {
  if (ranks <= 1) return core::Seconds(0.0);
  const auto topo = topology::build_topology(cluster);
  const auto cost = collectives::estimate(topo, collectives::Calibration{}, topology::Group::contiguous(0, ranks),
                                          collectives::Op::Broadcast, bytes);
  return cost.feasible ? cost.time : core::Seconds(0.0);
}

}  // namespace

std::string to_string(SyncMethod m) { return std::string(kSyncMethodWords.name(m)); }

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

WeightSyncResult estimate_weight_sync(const WeightSyncJob& job, const RlCalibration& cal,
                                      const collectives::CommCostFn& comm) {
  WeightSyncResult r;
  const auto params = workload::count_parameters(job.model);
  const double wide = core::bytes_per_value(job.trainer_precision);
  const double narrow = core::bytes_per_value(job.generator_precision);
  const bool requantize = narrow < wide && job.engine_load;
  const double bytes = static_cast<double>(params.total) * (requantize ? wide : narrow);
  r.bytes = core::Bytes(bytes);
  r.tensors = checkpoint_tensors(job.model);
  const auto& sys = job.cluster.system;
  const int per_node = std::max(1, sys.gpus_per_node);

  // Gather: each pipeline stage's model-parallel group (TP x EP, or the FSDP shard group)
  // all-gathers its parameters into full tensors; stages run in parallel.
  const auto& l = job.train_layout;
  const int shard =
      l.sharding == parallelism::Sharding::Zero3 ? l.fsdp_shard_size() : l.tp * std::max(1, l.ep / std::max(1, l.tp));
  if (shard > 1) {
    const int stride = l.sharding == parallelism::Sharding::Zero3 ? l.tp * l.cp : 1;
    r.gather =
        comm(collectives::Op::AllGather, collectives::CommGroup{shard, stride}, core::Bytes(bytes / std::max(1, l.pp)));
  }

  // Transfer. Broadcast methods deliver every generator GPU the full tensors; P2P only its shard.
  const bool shards = job.method == SyncMethod::P2pRdma;
  const double recv_bytes = shards ? bytes / std::max(1, job.generator_tp) : bytes;
  const double eff = cal.sync_bandwidth_efficiency;
  double seconds = 0.0;
  const int gens = std::max(1, job.generator_gpus);
  if (job.method == SyncMethod::Storage) {
    const int replicas = std::max(1, gens / std::max(1, job.generator_tp));
    seconds = bytes * (1.0 + replicas) / job.storage_bandwidth.value();
    r.path = "storage";
  } else if (job.colocated) {
    // CUDA IPC on the same GPU: a device-to-device copy (read + write HBM).
    seconds = 2.0 * recv_bytes / (job.cluster.gpu.hbm_bandwidth.value() * eff);
    r.path = "CUDA IPC";
  } else if (!shards) {
    // One NCCL broadcast over the generator GPUs and the sending rank, by the collectives model.
    const int group = std::min(job.cluster.gpus(), gens + (job.from_host ? 0 : 1));
    seconds = broadcast(job.cluster, group, core::Bytes(bytes)).value();
    r.path = group <= job.cluster.nvlink_domain_gpus()
                 ? "NVLink"
                 : (job.cluster.fabric.kind == hardware::FabricKind::Efa ? "EFA" : "RDMA");
  } else if (job.trainer_gpus + gens <= job.cluster.nvlink_domain_gpus()) {
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
  const core::Seconds each =
      job.method == SyncMethod::NcclPerTensor ? cal.per_tensor_overhead : cal.per_tensor_overhead_bucketed;
  r.per_tensor = each * static_cast<double>(r.tensors);
  r.fixed = cal.sync_fixed;
  r.load = core::Seconds(
      job.method == SyncMethod::Storage || !job.engine_load ? 0.0 : recv_bytes / cal.engine_load_bandwidth.value());
  if (requantize) {
    const double kept_params = static_cast<double>(params.total) / std::max(1, job.generator_tp);
    const double hbm_pass = kept_params * (wide + narrow) / job.cluster.gpu.hbm_bandwidth.value();
    r.requantize = cal.requant_per_tensor * static_cast<double>(r.tensors) + core::Seconds(hbm_pass);
    r.load += r.requantize;
  }
  r.total = r.fixed + r.gather + std::max(r.transfer, r.load) + r.per_tensor;
  return r;
}

}  // namespace fmsim::rl
