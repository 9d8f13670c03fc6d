// The flags that describe a serving deployment and its workload, shared by `fmsim serve` and the
// serving commands built on it; and the mapping of the validation CSV's names to fmsim's.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/context.hpp"
#include "serving/calibration.hpp"
#include "serving/iteration_model.hpp"
#include "serving/simulator.hpp"
#include "serving/workload.hpp"

namespace fmsim::cli {

struct ServingFlags {
  std::string job_file;
  std::string model = "llama3.1-8b";
  std::string cluster = "p5en.48xlarge";
  int tp = 1, pp = 1, ep = 1;
  bool dep = false;
  std::string precision = "bf16";
  std::string kv_dtype;           ///< "" = FP8 for FP8/FP4 weights, else BF16
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

void add_serving_flags(CLI::App& cmd, ServingFlags& f);
/// Fills flags not given on the command line from --job (YAML: keys are flag names without "--").
void apply_serving_job_file(ServingFlags& f, CLI::App& cmd);
/// The same for any command: the options of `cmd` not given on the command line from `file`
/// (YAML map, keys = flag names without "--"; `kind` ignored). Nothing when `file` is empty.
void apply_flags_job_file(const std::string& file, CLI::App& cmd);

struct ServingSetup {
  serving::Deployment deployment;
  serving::WorkloadSpec workload;
  serving::Slo slo;
  double price_per_gpu_hour = 0;
};

/// Validates the flags (InputError naming the flag) and builds the deployment and workload.
ServingSetup make_serving_setup(const ServingFlags& f, Context& ctx);

/// The engine profile `name` of `cal`, with did-you-mean on --engine.
const serving::EngineProfile& engine_flag(const serving::ServingCalibration& cal, const std::string& name);

/// Parses a weight precision word: bf16, fp16, fp8, fp4, nvfp4, mxfp4.
std::optional<core::Precision> parse_serving_precision(const std::string& word);

}  // namespace fmsim::cli
