// Parses data/calibration/serving.yaml into serving::ServingCalibration.
#include "config/serving_calibration.hpp"

#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

double fraction(const YamlNode& parent, std::string_view key) {
  const auto v = read_sourced(parent[key], true);
  const double x = v.value.as_number(Bound::Positive);
  if (x > 1.0) v.value.fail("a fraction of peak: at most 1");
  return x;
}

core::Seconds seconds(const YamlNode& parent, std::string_view key) {
  return read_sourced(parent[key], true).value.as_duration(Bound::NonNegative);
}

int whole(const YamlNode& parent, std::string_view key) {
  return read_sourced(parent[key], true).value.as_int(Bound::Positive);
}

template <class E>
E word(const YamlNode& parent, std::string_view key, const core::Vocabulary<E>& words) {
  return read_sourced(parent[key], true).value.as_word(words);
}

}  // namespace

serving::ServingCalibration load_serving_calibration(const std::string& path) {
  YamlDocument doc;
  if (path.empty()) {
    const auto text = core::embedded_file("calibration/serving.yaml");
    FMSIM_CHECK(text.has_value(), "data/calibration/serving.yaml is not embedded");
    doc = load_yaml_text(*text, "data/calibration/serving.yaml");
  } else {
    doc = load_yaml_file(path, "--calibration");
  }
  const YamlNode root = doc.node();
  root.check_keys({"gpus", "engines", "moe"});
  serving::ServingCalibration cal;
  for (const auto& [name, node] : root["gpus"].entries()) {
    const hardware::Architecture arch = node.key_word(name, hardware::kArchitectureWords);
    node.check_keys({"gemm_efficiency_bf16", "gemm_efficiency_fp8", "gemm_efficiency_fp4", "weight_read_efficiency",
                     "kv_read_efficiency", "attention_efficiency", "host_link_bandwidth", "gemm_half_dim",
                     "grace_link_bandwidth"});
    serving::GpuServingCalibration g;
    g.gemm_efficiency_bf16 = fraction(node, "gemm_efficiency_bf16");
    g.gemm_efficiency_fp8 = fraction(node, "gemm_efficiency_fp8");
    g.gemm_efficiency_fp4 = fraction(node, "gemm_efficiency_fp4");
    g.weight_read_efficiency = fraction(node, "weight_read_efficiency");
    g.kv_read_efficiency = fraction(node, "kv_read_efficiency");
    g.attention_efficiency = fraction(node, "attention_efficiency");
    g.host_link_bandwidth = read_sourced(node["host_link_bandwidth"], true).value.as_bandwidth(Bound::Positive);
    g.gemm_half_dim = read_sourced(node["gemm_half_dim"], true).value.as_number(Bound::Positive);
    if (node.has("grace_link_bandwidth")) {
      g.grace_link_bandwidth = read_sourced(node["grace_link_bandwidth"], true).value.as_bandwidth(Bound::Positive);
    }
    g.source = read_sourced(node["weight_read_efficiency"], true).source;
    cal.gpus[arch] = g;
  }
  for (const auto& [name, node] : root["engines"].entries()) {
    node.check_keys({"display_name", "iteration_overhead", "request_overhead", "sequence_overhead",
                     "graph_layer_overhead", "eager_layer_overhead", "cuda_graph_max_batch", "max_num_seqs",
                     "max_num_batched_tokens", "chunked_prefill", "block_size", "gpu_memory_utilization",
                     "graph_memory", "kv_admission", "preemption", "prefix_caching", "allreduce_latency",
                     "cuda_graph_batch_sizes", "memory_fraction_of"});
    serving::EngineProfile e;
    e.kind = node.key_word(name, serving::kEngineKindWords);
    e.name = std::string(serving::kEngineKindWords.name(e.kind));
    e.display_name = node["display_name"].as_string();
    e.iteration_overhead = seconds(node, "iteration_overhead");
    e.request_overhead = seconds(node, "request_overhead");
    e.sequence_overhead = seconds(node, "sequence_overhead");
    e.graph_layer_overhead = seconds(node, "graph_layer_overhead");
    e.eager_layer_overhead = seconds(node, "eager_layer_overhead");
    e.cuda_graph_max_batch = whole(node, "cuda_graph_max_batch");
    e.max_num_seqs = whole(node, "max_num_seqs");
    e.max_num_batched_tokens = whole(node, "max_num_batched_tokens");
    e.chunked_prefill = read_sourced(node["chunked_prefill"], true).value.as_bool();
    e.block_size = whole(node, "block_size");
    e.gpu_memory_utilization = fraction(node, "gpu_memory_utilization");
    if (node.has("memory_fraction_of"))
      e.memory_fraction_of = word(node, "memory_fraction_of", serving::kMemoryFractionOfWords);
    e.graph_memory = read_sourced(node["graph_memory"], true).value.as_bytes(Bound::NonNegative);
    e.admission = word(node, "kv_admission", serving::kKvAdmissionWords);
    e.preemption = word(node, "preemption", serving::kPreemptionModeWords);
    e.prefix_caching = read_sourced(node["prefix_caching"], true).value.as_bool();
    e.allreduce_latency = seconds(node, "allreduce_latency");
    if (node.has("cuda_graph_batch_sizes")) {
      const auto sizes = read_sourced(node["cuda_graph_batch_sizes"], true);
      for (const auto& item : sizes.value.items()) {
        const int b = item.as_int(Bound::Positive);
        if (!e.cuda_graph_batch_sizes.empty() && b <= e.cuda_graph_batch_sizes.back())
          item.fail("batch sizes must increase");
        e.cuda_graph_batch_sizes.push_back(b);
      }
      if (e.cuda_graph_batch_sizes.empty()) sizes.value.fail("at least one batch size");
      e.cuda_graph_max_batch = e.cuda_graph_batch_sizes.back();
    }
    e.source = read_sourced(node["iteration_overhead"], true).source;
    if (cal.engines.count(e.name)) node.fail("a second profile of engine '" + e.name + "'");
    cal.engines[e.name] = e;
  }
  if (root.has("moe")) {
    const YamlNode moe = root["moe"];
    moe.check_keys({"expert_load_cv", "grouped_gemm_small_tile", "grouped_gemm_tile"});
    const auto cv = read_sourced(moe["expert_load_cv"], true);
    cal.moe.expert_load_cv = cv.value.as_number(Bound::NonNegative);
    // Optional (calibration files from before they existed): 0 = the dense GEMMs' gemm_half_dim.
    for (const auto& [key, into] :
         {std::pair<const char*, double*>{"grouped_gemm_small_tile", &cal.moe.grouped_gemm_small_tile},
          {"grouped_gemm_tile", &cal.moe.grouped_gemm_tile}}) {
      if (moe.has(key)) *into = read_sourced(moe[key], true).value.as_number(Bound::NonNegative);
    }
    cal.moe.source = cv.source;
  }
  for (const char* arch : {"hopper", "blackwell"}) {
    if (!root["gpus"].has(arch)) root["gpus"].fail(std::string("missing architecture '") + arch + "'");
  }
  if (cal.engines.empty()) root["engines"].fail("at least one engine profile is needed");
  return cal;
}

}  // namespace fmsim::config
