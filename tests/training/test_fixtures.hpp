// Hand-built specs for training tests: a calibration and a job on the shared node and model
// (tests/support/model_fixtures.hpp).
#pragma once

#include "../support/model_fixtures.hpp"
#include "hardware/specs.hpp"
#include "training/calibration.hpp"
#include "training/comm_model.hpp"
#include "training/step_model.hpp"
#include "workload/model_spec.hpp"

namespace fmsim::testing {

inline training::Calibration test_calibration() {
  training::Calibration cal;
  training::GpuCalibration g;
  g.gemm_efficiency_bf16 = 0.5;
  g.gemm_efficiency_fp8 = 0.5;
  g.gemm_half_dim = 0.0;  // no shape penalty: GEMM time = FLOPs / (peak * 0.5) + overhead
  g.attention_fwd_efficiency = 0.5;
  g.attention_bwd_efficiency = 0.5;
  g.memory_efficiency = 1.0;
  g.kernel_overhead = core::Seconds(0.0);
  cal.gpus[hardware::Architecture::Hopper] = g;
  training::StackCalibration s;
  s.name = "test";
  s.step_overhead = core::Seconds(0.0);
  cal.stacks["test"] = s;
  return cal;
}

inline training::TrainingJob test_job(int nodes, parallelism::Layout layout, std::int64_t seq = 4096) {
  training::TrainingJob job;
  job.model = test_model();
  job.cluster = test_cluster(nodes);
  job.seq_len = seq;
  job.stack = "test";
  job.layout = parallelism::with_dp(layout, job.cluster.gpus());
  return job;
}

}  // namespace fmsim::testing
