// Hand-built specs every model's tests share: an 8-GPU H100-like node, a small dense model, a Mamba-2
// mixer, and networks of fixed cost. Training's own fixtures (calibration, job) are in
// tests/training/test_fixtures.hpp.
#pragma once

#include "collectives/comm_cost.hpp"
#include "hardware/specs.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::testing {

inline hardware::ClusterSpec test_cluster(int nodes) {
  hardware::ClusterSpec c;
  c.gpu.name = "test-gpu";
  c.gpu.display_name = "Test GPU";
  c.gpu.architecture = hardware::Architecture::Hopper;
  c.gpu.bf16 = core::tflops(1000);
  c.gpu.fp8 = core::tflops(2000);
  c.gpu.hbm_bandwidth = core::tb_per_s(3);
  c.gpu.hbm_capacity = core::gib(80);
  c.gpu.hbm_usable = core::gib(80);
  c.gpu.tdp = core::watts(700);
  c.system.name = "test-node";
  c.system.gpus_per_node = 8;
  c.system.nvlink_domain_gpus = 8;
  c.count = nodes;
  return c;
}

inline workload::ModelSpec test_model() {
  workload::ModelSpec m;
  m.name = "test-llama";
  m.num_layers = 16;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.num_heads = 32;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab = 128256;
  return m;
}

/// Mamba-2 mixers of Nemotron-H 8B's size: 128 heads x 64 (d = 8192), state 128, 8 groups, conv 4.
inline workload::SsmSpec test_mamba2() {
  workload::SsmSpec s;
  s.num_heads = 128;
  s.head_dim = 64;
  s.inner = 8192;
  s.state = 128;
  s.groups = 8;
  s.conv_kernel = 4;
  return s;
}

/// A network that costs nothing: isolates compute and scheduling.
inline collectives::CommCostFn free_network() {
  return [](collectives::Op, collectives::CommGroup, core::Bytes) { return core::Seconds(0.0); };
}

/// A network with a fixed time per collective.
inline collectives::CommCostFn fixed_network(double seconds) {
  return [seconds](collectives::Op, collectives::CommGroup g, core::Bytes) {
    return core::Seconds(g.size > 1 ? seconds : 0.0);
  };
}

}  // namespace fmsim::testing
