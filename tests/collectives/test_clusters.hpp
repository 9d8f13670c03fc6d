// Cluster specs built in test code (no catalog): an 8-GPU HGX H100 instance with 32 x 100 Gbps
// EFA, an 8-GPU B200 instance with 8 x 400 Gbps, and a 72-GPU NVL72 rack of 4-GPU nodes.
#pragma once

#include "hardware/specs.hpp"

namespace fmsim::testing {

inline hardware::ClusterSpec hgx_h100(int instances, double efficiency = 0.7) {
  hardware::ClusterSpec c;
  c.name = "test-h100";
  c.gpu.name = "h100";
  c.gpu.sm_version = 90;
  c.gpu.nvlink_links = 18;
  c.gpu.nvlink_bandwidth = core::gb_per_s(900);
  c.system.name = "hgx-h100";
  c.system.gpus_per_node = 8;
  c.system.nodes = 1;
  c.system.nvlink_domain_gpus = 8;
  c.system.nvswitch = true;
  c.system.nvls = true;
  c.system.nics_per_node = 32;
  c.system.nic_bandwidth = core::gbps(100);
  c.system.network_bandwidth = core::gbps(3200);
  c.system.cpu_vendor = hardware::CpuVendor::Amd;
  c.fabric.name = "efa-test";
  c.fabric.kind = hardware::FabricKind::Efa;
  c.fabric.latency = core::us(75);
  c.fabric.message_latency = core::us(20);
  c.fabric.efficiency = efficiency;
  c.count = instances;
  return c;
}

inline hardware::ClusterSpec hgx_b200(int instances) {
  hardware::ClusterSpec c = hgx_h100(instances, 0.95);
  c.gpu.sm_version = 100;
  c.gpu.nvlink_bandwidth = core::gb_per_s(1800);
  c.system.nics_per_node = 8;
  c.system.nic_bandwidth = core::gbps(400);
  c.system.cpu_vendor = hardware::CpuVendor::Intel;
  c.fabric.latency = core::us(35);
  c.fabric.message_latency = core::us(5);
  return c;
}

inline hardware::ClusterSpec nvl72(int racks) {
  hardware::ClusterSpec c = hgx_b200(racks);
  c.system.gpus_per_node = 4;
  c.system.nodes = 18;
  c.system.nvlink_domain_gpus = 72;
  c.system.nics_per_node = 4;
  c.system.network_bandwidth = core::gbps(1600);
  c.system.cpu_vendor = hardware::CpuVendor::Arm;
  return c;
}

}  // namespace fmsim::testing
