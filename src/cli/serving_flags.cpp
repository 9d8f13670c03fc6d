// Serving deployment and workload flags declared on a command; job files of flag names.
#include "cli/serving_flags.hpp"

#include <fmt/format.h>

#include "config/yaml_reader.hpp"

namespace fmsim::cli {

void add_serving_flags(CLI::App& cmd, jobspec::ServingFlags& f) {
  cmd.add_option("--job", f.job_file, "YAML file with any of these flags as keys (without --); flags win")
      ->type_name("FILE");
  cmd.add_option("--model", f.model, "Preset name (fmsim models) or a Hugging Face config.json")->capture_default_str();
  cmd.add_option("--cluster", f.cluster, "System the replica runs on (SYSTEM or SYSTEM:COUNT)")->capture_default_str();
  cmd.add_option("--tp", f.tp, "GPUs per pipeline stage (tensor parallel; expert parallel inside it with --ep)")
      ->capture_default_str();
  cmd.add_option("--pp", f.pp, "Pipeline stages")->capture_default_str();
  cmd.add_option("--ep", f.ep, "Expert-parallel width (divides tp; expert TP = tp / ep)")->capture_default_str();
  cmd.add_flag("--dep", f.dep, "Attention data parallel across the tp GPUs (DEP: attention DP + expert parallel)");
  cmd.add_option(
         "--precision", f.precision,
         "Weights/GEMMs: bf16, fp8, fp4 = nvfp4 (W4A4), mxfp4 (W4A8 on Blackwell; W4A16 without FP4 tensor cores)")
      ->capture_default_str();
  cmd.add_option("--kv-dtype", f.kv_dtype, "KV cache: bf16, fp8, fp4 (default fp8 with fp8/fp4 weights, else bf16)");
  cmd.add_option("--engine", f.engine, "Engine profile: vllm, sglang, trtllm")->capture_default_str();
  cmd.add_flag("--no-cuda-graphs", f.no_cuda_graphs, "Run every iteration eagerly (no CUDA graphs)");
  cmd.add_option("--max-num-seqs", f.max_num_seqs, "Running requests at most (default: the engine's)");
  cmd.add_option("--max-num-batched-tokens", f.max_num_batched_tokens,
                 "Token budget per iteration (default: the engine's)");
  cmd.add_option("--block-size", f.block_size, "KV-cache block size in tokens (default: the engine's)");
  cmd.add_option("--gpu-memory-utilization", f.gpu_memory_utilization,
                 "Fraction of HBM the engine uses (default: the engine's)");
  cmd.add_flag("--no-prefix-caching", f.no_prefix_caching, "Disable prefix caching");
  cmd.add_option("--preemption", f.preemption, "When KV runs out: recompute or swap (default: the engine's)");
  cmd.add_option("--calibration", f.calibration, "Serving calibration YAML (default: data/calibration/serving.yaml)")
      ->type_name("FILE");
  cmd.add_option("--isl", f.isl, "Input tokens per request (mean)")->capture_default_str();
  cmd.add_option("--osl", f.osl, "Output tokens per request (mean; median for lognormal)")->capture_default_str();
  cmd.add_option("--isl-dist", f.isl_dist, "fixed, uniform, normal, lognormal, exponential")->capture_default_str();
  cmd.add_option("--osl-dist", f.osl_dist, "fixed, uniform, normal, lognormal (heavy-tailed reasoning), exponential")
      ->capture_default_str();
  cmd.add_option("--isl-spread", f.isl_spread, "uniform: +-fraction; normal: CV; lognormal: sigma");
  cmd.add_option("--osl-spread", f.osl_spread, "uniform: +-fraction; normal: CV; lognormal: sigma");
  cmd.add_option("--max-len", f.max_len, "Cap on drawn input/output lengths (tokens)");
  cmd.add_option("--rate", f.rate, "Open-loop Poisson arrivals, requests/s (fleet total with --replicas)");
  cmd.add_option("--concurrency", f.concurrency,
                 "Closed loop: clients each sending the next request when the last completes");
  cmd.add_option("--client-start", f.client_start,
                 "Closed loop: together (all clients' first requests at 0, as benchmark clients) or spread "
                 "(over one request's duration)")
      ->capture_default_str();
  cmd.add_option("--request-path", f.request_path,
                 "server (over the engine's HTTP server: its request_overhead and per-sequence streaming cost) "
                 "or in-process (trtllm-bench, vLLM's LLM class)")
      ->capture_default_str();
  cmd.add_option("--num-requests", f.num_requests, "Prompts to simulate")->capture_default_str();
  cmd.add_option("--requests", f.requests_file,
                 "Request trace (CSV or JSONL: arrival_s, input_tokens, output_tokens[, prefix_id, prefix_tokens])")
      ->type_name("FILE");
  cmd.add_option("--samples", f.samples, "Samples per prompt (best-of-n, self-consistency), sharing the prompt's KV")
      ->capture_default_str();
  cmd.add_option("--shared-prefix", f.shared_prefix, "Tokens of a system prompt every request shares (prefix cache)");
  cmd.add_option("--seed", f.seed, "Random seed of arrivals and lengths")->capture_default_str();
  cmd.add_option("--replicas", f.replicas,
                 "Identical replicas behind a router (--router), simulated together; --rate is the fleet total")
      ->capture_default_str();
  cmd.add_option("--speculative", f.speculative, "Speculative decoding: none, mtp, eagle, draft")
      ->capture_default_str();
  cmd.add_option("--draft-tokens", f.draft_tokens, "Draft tokens per step (k)")->capture_default_str();
  cmd.add_option("--acceptance", f.acceptance, "Acceptance rate of each draft token (0-1)")->capture_default_str();
  cmd.add_option("--draft-cost", f.draft_cost, "Draft model: one draft forward relative to the target's")
      ->capture_default_str();
  cmd.add_option("--slo-ttft", f.slo_ttft, "SLO on time to first token, e.g. 2s");
  cmd.add_option("--slo-tpot", f.slo_tpot, "SLO on time per output token, e.g. 50ms");
}

void apply_serving_job_file(jobspec::ServingFlags& f, CLI::App& cmd) { apply_flags_job_file(f.job_file, cmd); }

void apply_flags_job_file(const std::string& file, CLI::App& cmd) {
  if (file.empty()) return;
  const auto doc = config::load_yaml_file(file, "--job");
  const auto root = doc.node();
  root.expect_map("a serving job (flag names without -- as keys)");
  for (const auto& [key, node] : root.entries()) {
    if (key == "kind") continue;
    CLI::Option* opt = key == "job" ? nullptr : cmd.get_option_no_throw("--" + key);
    if (opt == nullptr)
      node.fail(fmt::format("unknown key '{}'; keys are the flags of `fmsim {}` without --", key, cmd.get_name()));
    if (opt->count() > 0) continue;  // the command line wins
    const std::string value = node.as_string();
    try {
      opt->add_result(value);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      node.fail(fmt::format("'{}': {}", value, e.what()));
    }
  }
}

}  // namespace fmsim::cli
