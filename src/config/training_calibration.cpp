// Parses the training calibration YAML into training::Calibration.
#include "config/training_calibration.hpp"

#include "config/yaml_reader.hpp"
#include "core/embedded_data.hpp"
#include "core/error.hpp"

namespace fmsim::config {
namespace {

// The values `fmsim calibrate training` fits: only these may carry a `prior:`.
bool fitted_key(std::string_view key) {
  for (std::string_view k : {"gemm_efficiency_bf16", "gemm_efficiency_fp8", "gemm_efficiency_fp4", "fp8_rowwise_factor",
                             "fp8_block_factor", "attention_fwd_efficiency", "flash2_fwd_efficiency",
                             "compute_efficiency", "layer_overhead", "moe_layer_overhead"}) {
    if (k == key) return true;
  }
  return false;
}

SourcedValue sourced(const YamlNode& parent, std::string_view key) {
  return read_sourced(parent[key], true, fitted_key(key));
}

double calibration_number(const YamlNode& parent, std::string_view key, Bound bound) {
  return sourced(parent, key).value.as_number(bound);
}

core::Seconds calibration_duration(const YamlNode& parent, std::string_view key) {
  return sourced(parent, key).value.as_duration(Bound::NonNegative);
}

// Records `parent.key`'s optional `prior:` under the fit-parameter name `name` (durations in us;
// efficiencies are fractions of peak, at most 1).
void record_prior(training::Calibration& cal, const std::string& name, const YamlNode& parent, std::string_view key,
                  bool duration_us = false) {
  if (!parent.has(key)) return;
  const auto v = sourced(parent, key);
  if (!v.prior) {
    if (v.prior_spread) v.prior_spread->fail("'prior_spread' is the spread of a 'prior': give the prior too");
    return;
  }
  if (v.prior_spread) {
    const double spread = v.prior_spread->as_number(Bound::Positive);
    if (spread > 2.0) v.prior_spread->fail("a prior's spread is a 1-sigma in ln units (0.1 = +-10%): at most 2");
    cal.prior_spreads[name] = spread;
  }
  if (duration_us) {
    cal.priors[name] = v.prior->as_duration(Bound::NonNegative).value() * 1e6;
    return;
  }
  const double prior = v.prior->as_number(Bound::Positive);
  const bool ratio = key == "compute_efficiency" || key == "fp8_rowwise_factor" || key == "fp8_block_factor";
  if (!ratio && prior > 1.0) v.prior->fail("an efficiency is a fraction of peak: at most 1");
  cal.priors[name] = prior;
}

std::string source_of(const YamlNode& parent, std::initializer_list<std::string_view> keys) {
  std::string out;
  for (auto k : keys) {
    const auto v = sourced(parent, k);
    out += std::string(k) + ": " + v.source + "\n";
  }
  return out;
}

}  // namespace

training::Calibration load_training_calibration(const std::string& path) {
  if (path.empty()) {
    // The shipped calibration is embedded and never changes: parsed once per process. A sweep
    // task or a Python session predicts thousands of steps, and parsing it was 46% of each.
    static const training::Calibration shipped = parse_training_calibration("");
    return shipped;
  }
  return parse_training_calibration(path);
}

training::Calibration parse_training_calibration(const std::string& path) {
  YamlDocument doc;
  if (path.empty()) {
    const auto text = core::embedded_file("calibration/training.yaml");
    FMSIM_CHECK(text.has_value(), "data/calibration/training.yaml is not embedded");
    doc = load_yaml_text(*text, "data/calibration/training.yaml");
  } else {
    doc = load_yaml_file(path, "--calibration");
  }
  const YamlNode root = doc.node();
  root.check_keys({"gpus", "stacks"});
  training::Calibration cal;
  for (const auto& [name, node] : root["gpus"].entries()) {
    const hardware::Architecture arch = node.key_word(name, hardware::kArchitectureWords);
    node.check_keys({"gemm_efficiency_bf16", "gemm_efficiency_fp8", "gemm_efficiency_fp4", "fp8_rowwise_factor",
                     "fp8_block_factor", "gemm_half_dim", "attention_fwd_efficiency", "attention_bwd_efficiency",
                     "flash2_fwd_efficiency", "flash2_bwd_efficiency", "attention_head_dim_half",
                     "flash2_head_dim_half", "fp8_attention_factor", "ssm_scan_efficiency", "memory_efficiency",
                     "kernel_overhead", "sustained_rate_factor"});
    training::GpuCalibration g;
    g.gemm_efficiency_bf16 = calibration_number(node, "gemm_efficiency_bf16", Bound::Positive);
    g.gemm_efficiency_fp8 = calibration_number(node, "gemm_efficiency_fp8", Bound::Positive);
    g.gemm_efficiency_fp4 = calibration_number(node, "gemm_efficiency_fp4", Bound::Positive);
    // Recipe factors are optional (1 = the per-tensor rate): an architecture without FP8 has none.
    for (auto [key, field] : {std::pair{"fp8_rowwise_factor", &training::GpuCalibration::fp8_rowwise_factor},
                              std::pair{"fp8_block_factor", &training::GpuCalibration::fp8_block_factor}}) {
      if (!node.has(key)) continue;
      g.*field = calibration_number(node, key, Bound::Positive);
      if (g.*field > 2.0) node[key].fail("a recipe factor is a throughput ratio to per-tensor FP8; allowed: (0, 2]");
    }
    g.gemm_half_dim = calibration_number(node, "gemm_half_dim", Bound::NonNegative);
    g.attention_fwd_efficiency = calibration_number(node, "attention_fwd_efficiency", Bound::Positive);
    g.attention_bwd_efficiency = calibration_number(node, "attention_bwd_efficiency", Bound::Positive);
    if (node.has("flash2_fwd_efficiency") != node.has("flash2_bwd_efficiency")) {
      node.fail(
          "flash2_fwd_efficiency and flash2_bwd_efficiency go together (omit both: FA2 runs as the reference kernel)");
    }
    if (node.has("flash2_fwd_efficiency")) {
      g.flash2_fwd_efficiency = calibration_number(node, "flash2_fwd_efficiency", Bound::Positive);
      g.flash2_bwd_efficiency = calibration_number(node, "flash2_bwd_efficiency", Bound::Positive);
    }
    // Optional: without them attention does not depend on the head dimension.
    if (node.has("attention_head_dim_half"))
      g.attention_head_dim_half = calibration_number(node, "attention_head_dim_half", Bound::NonNegative);
    if (node.has("flash2_head_dim_half"))
      g.flash2_head_dim_half = calibration_number(node, "flash2_head_dim_half", Bound::NonNegative);
    // Optional: without it FP8 attention gains the built-in share of the FP8 peak's.
    if (node.has("fp8_attention_factor")) {
      g.fp8_attention_factor = calibration_number(node, "fp8_attention_factor", Bound::Positive);
      if (g.fp8_attention_factor > 1.0)
        node["fp8_attention_factor"].fail("a share of the FP8 peak's gain; allowed: (0, 1]");
    }
    // Optional: without it state-space scans use the built-in default.
    if (node.has("ssm_scan_efficiency"))
      g.ssm_scan_efficiency = calibration_number(node, "ssm_scan_efficiency", Bound::Positive);
    g.memory_efficiency = calibration_number(node, "memory_efficiency", Bound::Positive);
    g.kernel_overhead = calibration_duration(node, "kernel_overhead");
    // Optional: 1 (the datasheet peak's clock and SMs) without it.
    if (node.has("sustained_rate_factor")) {
      g.sustained_rate_factor = calibration_number(node, "sustained_rate_factor", Bound::Positive);
      if (g.sustained_rate_factor < 0.5 || g.sustained_rate_factor > 2.0)
        node["sustained_rate_factor"].fail("a throughput ratio to the datasheet peak; allowed: [0.5, 2]");
    }
    for (double v : {g.gemm_efficiency_bf16, g.gemm_efficiency_fp8, g.gemm_efficiency_fp4, g.attention_fwd_efficiency,
                     g.attention_bwd_efficiency, g.flash2_fwd_efficiency, g.flash2_bwd_efficiency,
                     g.ssm_scan_efficiency, g.memory_efficiency}) {
      if (v > 1.0) node.fail("efficiencies are fractions of peak and must be at most 1");
    }
    g.source = source_of(node, {"gemm_efficiency_bf16", "gemm_efficiency_fp8", "attention_fwd_efficiency"});
    for (const char* key : {"gemm_efficiency_bf16", "gemm_efficiency_fp8", "gemm_efficiency_fp4", "fp8_rowwise_factor",
                            "fp8_block_factor", "attention_fwd_efficiency", "flash2_fwd_efficiency"}) {
      record_prior(cal, name + "." + key, node, key);
    }
    cal.gpus[arch] = g;
  }
  for (const char* arch : {"ampere", "hopper", "blackwell", "blackwell_ultra"}) {
    const bool present = root["gpus"].has(arch);
    if (!present)
      root["gpus"].fail(std::string("missing architecture '") + arch +
                        "'; a calibration needs ampere, hopper, blackwell and blackwell_ultra");
  }
  for (const auto& [name, node] : root["stacks"].entries()) {
    node.check_keys({"description", "compute_efficiency", "tp_overlap", "dp_overlap", "elementwise_factor",
                     "step_overhead", "layer_overhead", "moe_layer_overhead", "attention_kernel", "moe_dispatcher",
                     "ep_overlap_cost"});
    training::StackCalibration s;
    s.name = name;
    s.compute_efficiency =
        node.has("compute_efficiency") ? calibration_number(node, "compute_efficiency", Bound::Positive) : 1.0;
    if (node.has("attention_kernel")) {
      s.attention_kernel = read_sourced(node["attention_kernel"], true).value.as_word(training::kAttentionKernelWords);
    }
    if (node.has("moe_dispatcher")) {
      s.moe_dispatcher = read_sourced(node["moe_dispatcher"], true).value.as_word(training::kMoeDispatcherWords);
    }
    s.tp_overlap = calibration_number(node, "tp_overlap", Bound::NonNegative);
    s.dp_overlap = calibration_number(node, "dp_overlap", Bound::NonNegative);
    if (s.tp_overlap > 1.0 || s.dp_overlap > 1.0) node.fail("overlap fractions must be at most 1");
    if (node.has("ep_overlap_cost")) {
      s.ep_overlap_cost = calibration_number(node, "ep_overlap_cost", Bound::NonNegative);
      if (s.ep_overlap_cost > 1.0)
        node["ep_overlap_cost"].fail("a fraction of the hidden all-to-all time; allowed: [0, 1]");
    }
    s.elementwise_factor = calibration_number(node, "elementwise_factor", Bound::Positive);
    s.step_overhead = calibration_duration(node, "step_overhead");
    s.layer_overhead_us = calibration_duration(node, "layer_overhead").value() * 1e6;
    s.moe_layer_overhead_us = calibration_duration(node, "moe_layer_overhead").value() * 1e6;
    s.source = source_of(node, {"tp_overlap", "dp_overlap", "elementwise_factor", "step_overhead"});
    record_prior(cal, name + ".compute_efficiency", node, "compute_efficiency");
    record_prior(cal, name + ".layer_overhead_us", node, "layer_overhead", true);
    record_prior(cal, name + ".moe_layer_overhead_us", node, "moe_layer_overhead", true);
    cal.stacks[name] = s;
  }
  return cal;
}

}  // namespace fmsim::config
