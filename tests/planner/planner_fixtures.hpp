// Hand-written model, clusters and calibration for the planner tests (tests/planner links
// fmsim_planner only, not the catalog or the YAML loaders).
#pragma once

#include <string>

#include "core/units.hpp"
#include "hardware/specs.hpp"
#include "planner/planner.hpp"
#include "training/calibration.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::planner::testing {

/// A small Llama-style dense model: 8 layers, hidden 1024, 16 heads, 4 KV heads.
inline workload::ModelSpec small_model() {
  workload::ModelSpec m;
  m.name = "small";
  m.family = "llama";
  m.num_layers = 8;
  m.hidden = 1024;
  m.ffn_hidden = 4096;
  m.num_heads = 16;
  m.num_kv_heads = 4;
  m.head_dim = 64;
  m.vocab = 32000;
  m.max_position = 8192;
  return m;
}

/// A small mixture-of-experts model: 8 experts, top-2.
inline workload::ModelSpec small_moe() {
  workload::ModelSpec m = small_model();
  m.name = "small-moe";
  m.family = "mixtral";
  m.moe = {.num_experts = 8, .top_k = 2, .expert_ffn = 2048};
  return m;
}

/// An H100-like GPU with `hbm_gib` of usable memory (small values force out-of-memory pruning).
inline hardware::GpuSpec gpu(double hbm_gib, double bf16_tflops = 989.0) {
  hardware::GpuSpec g;
  g.name = "test-gpu";
  g.display_name = "Test GPU";
  g.architecture = hardware::Architecture::Hopper;
  g.bf16 = core::FlopsPerSecond(bf16_tflops * 1e12);
  g.fp16 = g.bf16;
  g.fp8 = core::FlopsPerSecond(2.0 * bf16_tflops * 1e12);
  g.hbm_capacity = core::gib(hbm_gib);
  g.hbm_usable = core::gib(hbm_gib);
  g.hbm_bandwidth = core::BytesPerSecond(3.35e12);
  g.nvlink_bandwidth = core::BytesPerSecond(900e9);
  return g;
}

/// `count` units of an 8-GPU instance with an 8-GPU NVLink domain, 3200 Gbps EFA, `price` USD/h per unit.
inline hardware::ClusterSpec cluster(const std::string& name, double hbm_gib, double price, int count = 1,
                                     double bf16_tflops = 989.0) {
  hardware::ClusterSpec c;
  c.name = name;
  c.system.name = name;
  c.system.gpu = "test-gpu";
  c.system.gpus_per_node = 8;
  c.system.nodes = 1;
  c.system.nvlink_domain_gpus = 8;
  c.system.network_bandwidth = core::BytesPerSecond(400e9);
  c.system.price_per_hour_usd = price;
  c.gpu = gpu(hbm_gib, bf16_tflops);
  c.fabric.name = "efa-v2";
  c.fabric.kind = hardware::FabricKind::Efa;
  c.fabric.generation = 2;
  c.fabric.efficiency = 0.9;
  c.fabric.latency = core::us(15.0);
  c.count = count;
  return c;
}

/// The calibration defaults (GpuCalibration / StackCalibration field initialisers) under the keys
/// the planner looks up.
inline training::Calibration calibration() {
  training::Calibration c;
  c.gpus[hardware::Architecture::Hopper] = training::GpuCalibration{};
  training::StackCalibration s;
  s.name = "megatron";
  c.stacks["megatron"] = s;
  return c;
}

/// A request for `model` on 16 GPUs of the given clusters, sequence 2048, global batch 64.
inline PlanRequest small_request(const workload::ModelSpec& model, std::vector<hardware::ClusterSpec> systems) {
  PlanRequest r;
  r.model = model;
  r.systems = std::move(systems);
  r.gpu_counts = {16};
  r.seq_len = 2048;
  r.global_batch = 64;
  r.tokens = 1e9;
  r.top = 3;
  r.threads = 2;
  return r;
}

}  // namespace fmsim::planner::testing
