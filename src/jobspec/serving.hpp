// A serving deployment and its workload from their flag values, shared by `fmsim serve`,
// `fmsim plan-serve` and the serving commands built on them. The command layer (src/cli)
// declares the flags into ServingFlags and calls make_serving_setup.
#pragma once

#include <optional>
#include <string>

#include "core/precision.hpp"
#include "hardware/catalog.hpp"
#include "serving/calibration.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::jobspec {

struct ServingFlags {
  std::string job_file;
  std::string model = "llama3.1-8b";
  std::string cluster = "p5en.48xlarge";
  int tp = 1, pp = 1, ep = 1;
  bool dep = false;
  std::string precision = "bf16";
  std::string kv_dtype;  ///< "" = FP8 for FP8/FP4 weights, else BF16
  std::string engine = "vllm";
  bool no_cuda_graphs = false;
  int max_num_seqs = 0, max_num_batched_tokens = 0, block_size = 0;
  double gpu_memory_utilization = 0;
  bool no_prefix_caching = false;
  std::string preemption;
  std::string calibration;
  // Workload.
  double isl = 1024, osl = 1024;
  std::string isl_dist = "fixed", osl_dist = "fixed";
  double isl_spread = 0.0, osl_spread = 0.0;
  long long max_len = 0;
  double rate = 0;
  int concurrency = 0;
  int num_requests = 1000;
  std::string requests_file;
  int samples = 1;
  long long shared_prefix = 0;
  unsigned long long seed = 1;
  int replicas = 1;
  // Speculative decoding.
  std::string speculative = "none";
  int draft_tokens = 3;
  double acceptance = 0.7;
  double draft_cost = 0.05;
  // SLO.
  std::string slo_ttft, slo_tpot;
};

struct ServingSetup {
  serving::Deployment deployment;
  serving::WorkloadSpec workload;
  serving::Slo slo;
  double price_per_gpu_hour = 0;
};

/// Validates the flags (InputError naming the flag) and builds the deployment and workload.
ServingSetup make_serving_setup(const ServingFlags& f, const hardware::Catalog& catalog);

/// The engine profile `name` of `cal`, with did-you-mean on --engine.
const serving::EngineProfile& engine_flag(const serving::ServingCalibration& cal, const std::string& name);

/// Parses a weight precision word: bf16, fp16, fp8, fp4, nvfp4, mxfp4.
std::optional<core::Precision> parse_serving_precision(const std::string& word);

}  // namespace fmsim::jobspec
